"""Review on the study's Prolific page: approve every valid submission at once, reject one (after an explicit
confirmation), ask a participant to return their submission."""

from django.contrib import messages
from django.utils.translation import gettext as _
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


def _submission_of(study, submission_id: str):
    """The study's submission of that id, or None (an id of another study is no submission here)."""
    return next((s for s in selectors.prolific_submissions_of(study=study) if s.submission_id == submission_id), None)


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
        messages.success(request, _("Approved on Prolific: %(n)s submissions.") % {"n": approved})
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


@require_POST
@role_required(RESEARCHER)
def prolific_reject(request, slug: str):
    study = study_or_404(slug)
    form = RejectForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return back(study)
    submission = _submission_of(study, form.cleaned_data["submission"])
    if submission is None:
        messages.error(
            request, _("Submission %(id)s is not one of this study's.") % {"id": form.cleaned_data["submission"]}
        )
        return back(study)
    done = call_prolific(
        request,
        would=_("It would reject submission %(id)s with your message.") % {"id": submission.submission_id},
        call=lambda: services.prolific_submission_reject(
            submission=submission, message=form.cleaned_data["message"], category=form.cleaned_data["category"]
        ),
    )
    if done is not None:
        messages.success(request, _("Submission %(id)s rejected.") % {"id": submission.submission_id})
    return back(study)


@require_POST
@role_required(RESEARCHER)
def prolific_request_return(request, slug: str):
    study = study_or_404(slug)
    form = ReturnForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return back(study)
    submission = _submission_of(study, form.cleaned_data["submission"])
    if submission is None:
        messages.error(
            request, _("Submission %(id)s is not one of this study's.") % {"id": form.cleaned_data["submission"]}
        )
        return back(study)
    done = call_prolific(
        request,
        would=_("It would ask the participant of submission %(id)s to return it.") % {"id": submission.submission_id},
        call=lambda: services.prolific_submission_request_return(
            submission=submission, reasons=form.cleaned_data["reasons"]
        ),
    )
    if done is not None:
        messages.success(
            request,
            _("The participant of submission %(id)s was asked to return it.") % {"id": submission.submission_id},
        )
    return back(study)
