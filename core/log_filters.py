"""Filters of the LOGGING setting (vivid_site/settings.py)."""

import logging

from django.core.exceptions import PermissionDenied


class PermissionDeniedOneLine(logging.Filter):
    """A refused request is a warning line, without the traceback Django attaches to it.

    Every 403 the app's role checks answer comes from a PermissionDenied raised on purpose; its
    traceback says nothing the path does not, and buried the log (dozens of lines per refusal).
    The reason the view gave, when it gave one, stays on the line.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, PermissionDenied):
            record.exc_info = None
            record.exc_text = None
            reason = str(exc)
            if reason:
                record.msg = f"{record.msg} (%s)"
                record.args = (*(record.args or ()), reason)
        return True
