"""Review on the study's Prolific page: approve every valid submission at once, reject one (after an explicit
confirmation), ask a participant to return their submission."""

from django.contrib import messages
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from core.decorators import role_required
from core.roles import RESEARCHER

from .. import selectors, services
from ..forms import RejectForm, ReturnForm
from . import back, call_prolific, study_or_404


def _form_errors(request, form) -> None:
    for field, errors in form.errors.items():
        for error in errors:
            label = form.fields[field].label if field in form.fields and field != "__all__" else ""
            messages.error(request, f"{label}: {error}" if label and not error.startswith(str(label)) else error)


@require_POST
@role_required(RESEARCHER)
def prolific_approve_valid(request, slug: str):
    study = study_or_404(slug)
    result = call_prolific(
        request,
        would=_("It would approve every submission whose session here is valid, in one bulk request per batch."),
        call=lambda: services.prolific_submissions_approve_valid(study=study),
    )
    if result is None:
        return back(study)
    approved, refused = result.get("approved", 0), result.get("refused") or []
    if approved:
        messages.success(
            request,
            ngettext("Approved on Prolific: %(n)s submission.", "Approved on Prolific: %(n)s submissions.", approved)
            % {"n": approved},
        )
    elif not refused:
        messages.info(request, _("No valid submission is waiting for approval; nothing was sent."))
    for refusal in refused:
        messages.error(
            request,
            _("Prolific refused the approval of %(participant)s (submission %(submission)s): %(message)s")
            % {
                "participant": refusal.get("participant_id", ""),
                "submission": refusal.get("submission_id", ""),
                "message": refusal.get("message", ""),
            },
        )
    return back(study)


def _on_submission(request, slug: str, form_class, *, would, call, done):
    """Reject or return: one submission of this study, named by the form; each step says what it did."""
    study = study_or_404(slug)
    form = form_class(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return back(study)
    data = form.cleaned_data
    submission = selectors.prolific_submission_of(study=study, submission_id=data["submission"])
    if submission is None:
        messages.error(request, _("Submission %(id)s is not one of this study's.") % {"id": data["submission"]})
        return back(study)
    names = {"id": submission.submission_id}
    if call_prolific(request, would=would % names, call=lambda: call(submission, data)) is not None:
        messages.success(request, done % names)
    return back(study)


@require_POST
@role_required(RESEARCHER)
def prolific_reject(request, slug: str):
    return _on_submission(
        request,
        slug,
        RejectForm,
        would=_("It would reject submission %(id)s with your message."),
        call=lambda submission, data: services.prolific_submission_reject(
            submission=submission, message=data["message"], category=data["category"]
        ),
        done=_("Submission %(id)s rejected."),
    )


@require_POST
@role_required(RESEARCHER)
def prolific_request_return(request, slug: str):
    return _on_submission(
        request,
        slug,
        ReturnForm,
        would=_("It would ask the participant of submission %(id)s to return it."),
        call=lambda submission, data: services.prolific_submission_request_return(
            submission=submission, reasons=data["reasons"]
        ),
        done=_("The participant of submission %(id)s was asked to return it."),
    )
