"""Sign-in throttling with django-axes: per-parameter limits and the lockout answer.

Axes counts failed sign-ins per user and address together, and per address alone (an
address trying many accounts), but compares every count with one limit. An address
shared by a whole office would then be locked as soon as one person mistyped five times,
so the address alone gets its own, higher limit (``AXES_ADDRESS_FAILURE_LIMIT``).
"""

import logging
import math
from datetime import timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off, get_lockout_parameters
from django.conf import settings
from django.db.models import Sum
from django.http import JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

log = logging.getLogger(__name__)


class SignInAttemptHandler(AxesDatabaseHandler):
    """Axes' database handler, with the address-alone count held to its own limit."""

    def get_failures(self, request, credentials=None) -> int:
        parameters = get_lockout_parameters(request, credentials)
        attempts_list = self.get_user_attempts(request, credentials)
        worst = 0
        for parameter, attempts in zip(parameters, attempts_list, strict=True):
            failures = attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
            if parameter == "ip_address":
                # Axes compares what this returns with AXES_FAILURE_LIMIT: put the address
                # count on that scale (it reaches the limit exactly at the address limit).
                failures = failures * settings.AXES_FAILURE_LIMIT // settings.AXES_ADDRESS_FAILURE_LIMIT
            worst = max(worst, failures)
        return worst


def _retry_after() -> timedelta:
    # Each failure, even during a lockout, starts the cool-off again (axes'
    # AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT), so it runs from now.
    return get_cool_off() or timedelta(0)


def lockout_message(retry_at, wait: timedelta) -> str:
    minutes = max(1, math.ceil(wait.total_seconds() / 60))
    return ngettext(
        "Too many failed sign-in attempts. Try again after %(time)s (in %(minutes)d minute), "
        "or ask an administrator to lift the lock.",
        "Too many failed sign-in attempts. Try again after %(time)s (in %(minutes)d minutes), "
        "or ask an administrator to lift the lock.",
        minutes,
    ) % {"time": date_format(timezone.localtime(retry_at), "DATETIME_FORMAT"), "minutes": minutes}


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: a page for people, JSON with ``detail`` for the API; both say when to retry."""
    wait = _retry_after()
    retry_at = timezone.now() + wait
    message = lockout_message(retry_at, wait)
    status = settings.AXES_HTTP_RESPONSE_CODE
    log.warning("Sign-in locked out for %s until %s (%s)", request.path, retry_at.isoformat(), status)
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message, "retry_at": retry_at.isoformat()}, status=status)
    else:
        response = render(
            request,
            "registration/locked_out.html",
            {"message": message, "retry_at": retry_at, "title": _("Sign-in locked")},
            status=status,
        )
    response["Retry-After"] = str(math.ceil(wait.total_seconds()))
    return response
