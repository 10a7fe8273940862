"""Researcher pages of the Prolific integration: thin, they call the prolific services and selectors.

Every action answers with a redirect back to the study's Prolific page and a message saying what
was sent to Prolific, what Prolific answered, or (without a token) what would have been sent.
"""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.utils.translation import gettext as _

from study.models import Study

# The study app's one look-up of a study by slug, re-exported for the pages that import it from here.
from study.selectors.lookups import study_or_404 as study_or_404

from ..client import ProlificApiError, ProlificError, ProlificNotConfigured
from ..selectors import prolific_configured


def back(study: Study):
    return redirect("prolific:study", slug=study.slug)


def not_configured_text(what: str) -> str:
    return _(
        "No Prolific API token: nothing was sent. %(what)s Set the environment variable %(env)s and try again."
    ) % {
        "what": what,
        "env": settings.PROLIFIC_API_TOKEN_ENV,
    }


def api_error_text(exc: ProlificApiError) -> str:
    status = getattr(exc, "status", None)
    message = getattr(exc, "message", None) or str(exc)
    if status:
        return _("Prolific refused (HTTP %(status)s): %(message)s") % {"status": status, "message": message}
    return _("Prolific could not be reached: %(message)s") % {"message": message}


def call_prolific(request, *, would: str, call):
    """Runs ``call`` and turns the integration's errors into messages; returns its result or None.

    ``would`` says what the call would do, for the researcher who has no token configured yet.
    """
    if not prolific_configured():
        messages.warning(request, not_configured_text(would))
        return None
    try:
        return call()
    except ProlificNotConfigured:
        messages.warning(request, not_configured_text(would))
    except ProlificApiError as exc:
        messages.error(request, api_error_text(exc))
    except ProlificError as exc:
        # A file's errors (BonusFileError) one by one, each naming its row.
        for error in getattr(exc, "errors", None) or [str(exc)]:
            messages.error(request, error)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return None
