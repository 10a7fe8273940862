import datetime as dt

from django import template
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.localization import localized_description, localized_name
from core.tables import render_message

register = template.Library()

register.filter("localized_name", localized_name)
register.filter("localized_description", localized_description)


@register.filter
def report_message(entry: dict) -> str:
    """An import error or duplicate reason from a stored report, in the active language."""
    code = entry.get("code")
    if code is None:
        return entry.get("message") or entry.get("reason", "")
    return render_message(code, entry.get("params"))


@register.filter
def as_datetime(value):
    """A moment kept as ISO 8601 text (a cached report, a JSON field) as a datetime, so that
    ``|date:"DATETIME_FORMAT"`` shows it like every other date; a datetime passes through, and
    text that is no moment gives None (the date filter then shows nothing)."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = parse_datetime(value.strip())
        except ValueError:
            return None
        if moment is None:
            return None
    else:
        return None
    # A naive moment is UTC, as the application stores them (USE_TZ).
    return timezone.make_aware(moment, dt.UTC) if timezone.is_naive(moment) else moment
