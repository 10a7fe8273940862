from django import template

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
