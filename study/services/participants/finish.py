"""Finish: the quality-control score that ends a session, and the Prolific redirect it earns."""

from urllib.parse import urlencode

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from ...models import Answer, Participant, ParticipantStatus, Study
from ...selectors.participants import participant_fresh, participant_missing_step
from ..results import study_results_changed


def participant_score(*, participant: Participant) -> None:
    """Check every answer is stored, then score quality control; runs inside the last page's transaction."""
    missing = participant_missing_step(participant=participant)
    if missing is not None:
        Participant.objects.filter(pk=participant.pk).update(step_index=participant.plan.index(missing))
        return
    qc = Answer.objects.filter(assignment__participant=participant, assignment__is_qc=True)
    total = qc.count()
    correct = qc.filter(is_correct=True).count()
    accuracy = correct / total if total else 1.0
    status = (
        ParticipantStatus.COMPLETED if accuracy >= participant.study.qc_threshold else ParticipantStatus.EXCLUDED_QC
    )
    Participant.objects.filter(pk=participant.pk, status=ParticipantStatus.IN_PROGRESS).update(
        status=status, qc_correct=correct, qc_total=total, finished_at=timezone.now()
    )


def _finish_codes(study: Study) -> dict[ParticipantStatus, str]:
    return {
        ParticipantStatus.COMPLETED: study.completion_code,
        ParticipantStatus.EXCLUDED_QC: study.screenout_code,
        ParticipantStatus.NO_CONSENT: study.no_consent_code,
    }


def prolific_complete_url(*, code: str) -> str:
    """Prolific's completion URL for a code: what a participant is sent to, and what the researcher
    pastes into Prolific."""
    return settings.PROLIFIC_COMPLETE_URL.format(code=code)


def participant_finish_url(*, participant: Participant) -> str | None:
    """Where a finished session is sent, or None while any answer is missing.

    Prolific's completion URL; in development (PROLIFIC_COMPLETE_LOCAL) the local done page, which
    shows that URL, since Prolific is not there to land on. A preview shows Prolific's either way.
    """
    code = _finish_codes(participant.study).get(participant.status)
    if code is None:
        return None
    if (
        participant.status != ParticipantStatus.NO_CONSENT
        and participant_missing_step(participant=participant) is not None
    ):
        return None
    if settings.PROLIFIC_COMPLETE_LOCAL and not participant.is_preview:
        return f"{reverse('study:done', args=[participant.study.slug])}?{urlencode({'cc': code})}"
    return prolific_complete_url(code=code)


def finish_code_status(*, study: Study, code: str) -> ParticipantStatus | None:
    """The way a session ended that sends this completion code (the local done page names it)."""
    return next((status for status, own in _finish_codes(study).items() if own and own == code), None)


def participant_finish(*, participant: Participant) -> Participant:
    """Finish a session whose last page was stored but not yet scored (say, the request died in between)."""
    with transaction.atomic():
        participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        if participant.status == ParticipantStatus.IN_PROGRESS and participant.step_index >= len(participant.plan):
            participant_score(participant=participant)
            study_results_changed(study_id=participant.study_id)
    return participant_fresh(participant=participant)
