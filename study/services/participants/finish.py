"""Finish: the quality-control score that ends a session, and the Prolific redirect it earns."""

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ...models import Answer, Participant, ParticipantStatus
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


def participant_finish_url(*, participant: Participant) -> str | None:
    """Prolific's redirect for a finished session, or None while any answer is missing."""
    study = participant.study
    if participant.status == ParticipantStatus.COMPLETED:
        code = study.completion_code
    elif participant.status == ParticipantStatus.EXCLUDED_QC:
        code = study.screenout_code
    elif participant.status == ParticipantStatus.NO_CONSENT:
        code = study.no_consent_code
    else:
        return None
    if (
        participant.status != ParticipantStatus.NO_CONSENT
        and participant_missing_step(participant=participant) is not None
    ):
        return None
    return settings.PROLIFIC_COMPLETE_URL.format(code=code)


def participant_finish(*, participant: Participant) -> Participant:
    """Finish a session whose last page was stored but not yet scored (say, the request died in between)."""
    with transaction.atomic():
        participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        if participant.status == ParticipantStatus.IN_PROGRESS and participant.step_index >= len(participant.plan):
            participant_score(participant=participant)
            study_results_changed(study_id=participant.study_id)
    return participant_fresh(participant=participant)
