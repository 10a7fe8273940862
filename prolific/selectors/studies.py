"""What the app knows of its Prolific studies: their submissions beside the local sessions, the review's
verdicts, the discrepancies, bonus batches and the API call log."""

import os
from datetime import timedelta

from django.conf import settings
from django.db.models import Q, Sum
from django.utils import timezone

from study.models import Participant, ParticipantStatus, Study

from ..client import api_token
from ..models import (
    ApiCall,
    BonusBatch,
    BonusBatchStatus,
    ProlificStudy,
    ProlificSubmission,
    SubmissionStatus,
    WebhookRefusalCount,
)

# Submissions a researcher reviews: finished on Prolific's side, whatever the review's outcome.
REVIEWED_STATUSES = (
    SubmissionStatus.AWAITING_REVIEW,
    SubmissionStatus.APPROVED,
    SubmissionStatus.REJECTED,
    SubmissionStatus.PARTIALLY_APPROVED,
    SubmissionStatus.SCREENED_OUT,
)


def prolific_configured() -> bool:
    """A token is in the environment variable the settings name (its value is never read into a page)."""
    return bool(api_token())


def prolific_webhook_secret_configured() -> bool:
    return bool(os.environ.get(settings.PROLIFIC_WEBHOOK_SECRET_ENV, "").strip())


def prolific_studies_of(*, study: Study) -> list[ProlificStudy]:
    return list(ProlificStudy.objects.filter(study=study).order_by("group", "pk"))


def prolific_study_find(*, prolific_id: str) -> ProlificStudy | None:
    return (
        ProlificStudy.objects.select_related("study").filter(prolific_id=prolific_id).first() if prolific_id else None
    )


def prolific_submissions_of(*, study: Study, statuses=None) -> list[ProlificSubmission]:
    rows = ProlificSubmission.objects.filter(prolific_study__study=study).select_related(
        "participant", "prolific_study"
    )
    if statuses:
        rows = rows.filter(status__in=statuses)
    return list(rows.order_by("prolific_study__group", "prolific_pid", "pk"))


def prolific_submission_of(*, study: Study, submission_id: str) -> ProlificSubmission | None:
    """The study's submission of that id, or None (an id of another study is no submission here)."""
    return (
        ProlificSubmission.objects.filter(prolific_study__study=study, submission_id=submission_id)
        .select_related("participant", "prolific_study")
        .first()
    )


def verdict(participant: Participant | None) -> str:
    """The local verdict on a submission: valid, screened_out (QC under threshold), incomplete, no_session."""
    if participant is None:
        return "no_session"
    if participant.status == ParticipantStatus.COMPLETED:
        return "valid"
    if participant.status == ParticipantStatus.EXCLUDED_QC:
        return "screened_out"
    return "incomplete"


def prolific_review_rows(*, study: Study) -> list[dict]:
    """Finished submissions with the local verdict, for the review (approve the valid ones)."""
    return [
        {
            "submission": submission,
            "submission_id": submission.submission_id,
            "participant_id": submission.prolific_pid,
            "group": submission.participant.group if submission.participant else submission.prolific_study.group,
            "status": submission.status,
            "verdict": verdict(submission.participant),
            "qc_accuracy": submission.participant.qc_accuracy if submission.participant else None,
            "approval_requested": submission.approval_requested_at is not None,
            "return_requested": submission.return_requested_at is not None,
            "last_error": submission.last_error,
        }
        for submission in prolific_submissions_of(study=study, statuses=REVIEWED_STATUSES)
    ]


def prolific_approvable(*, study: Study):
    """Submissions awaiting review whose local session is valid and whose approval was never asked for."""
    return ProlificSubmission.objects.filter(
        prolific_study__study=study,
        status=SubmissionStatus.AWAITING_REVIEW,
        participant__status=ParticipantStatus.COMPLETED,
        approval_requested_at__isnull=True,
    ).exclude(prolific_study__prolific_id="")


def prolific_discrepancies(*, study: Study) -> dict:
    """Local sessions Prolific does not know, and Prolific submissions with no local session.

    Only once a sync has run; previews and synthetic (test) sessions are never Prolific's.
    """
    synced = ProlificStudy.objects.filter(study=study, last_synced_at__isnull=False)
    if not synced.exists():
        return {"synced": False, "unknown_sessions": [], "orphan_submissions": []}
    known = ProlificSubmission.objects.filter(prolific_study__study=study)
    unknown_sessions = list(
        Participant.objects.filter(study=study, is_preview=False, is_test=False)
        .exclude(Q(prolific_submissions__in=known) | Q(prolific_session_id__in=known.values("submission_id")))
        .order_by("entered_at")
    )
    orphans = list(known.filter(participant__isnull=True).select_related("prolific_study").order_by("prolific_pid"))
    return {"synced": True, "unknown_sessions": unknown_sessions, "orphan_submissions": orphans}


def prolific_calls_of(*, study: Study, limit: int = 200) -> list[ApiCall]:
    return list(ApiCall.objects.filter(study=study).order_by("-created_at", "-pk")[:limit])


# What the page tells a researcher to run when no worker picks a payment up (as the run pages do).
WORKER_COMMAND = ".venv/bin/celery -A vivid_site worker -l info"
# The states in which a batch's row on the page polls for its next one.
BONUS_IN_FLIGHT = ("queued", "no_worker", "sending")


def bonus_batch_state(*, batch: BonusBatch) -> str:
    """What the page says of a batch: created, queued, no_worker (queued for longer than EVAL_NO_WORKER_SECONDS),
    sending (Prolific's answer awaited), unknown (sent, no clear answer: check Prolific), sent or failed."""
    now = timezone.now()
    if batch.status == BonusBatchStatus.QUEUED:
        waited = (now - (batch.queued_at or now)).total_seconds()
        return "no_worker" if waited > settings.EVAL_NO_WORKER_SECONDS else "queued"
    if batch.status == BonusBatchStatus.SENDING:
        # Past the task's hard time limit nobody is waiting for the answer any more.
        waited = (now - (batch.sent_at or now)).total_seconds()
        return "sending" if not batch.error and waited <= settings.CELERY_TASK_TIME_LIMIT else "unknown"
    return str(batch.status).lower()


def worker_hint() -> dict:
    return {"no_worker_seconds": settings.EVAL_NO_WORKER_SECONDS, "worker_command": WORKER_COMMAND}


def _with_state(batch: BonusBatch) -> BonusBatch:
    batch.state = bonus_batch_state(batch=batch)
    batch.in_flight = batch.state in BONUS_IN_FLIGHT
    return batch


def bonus_batches_of(*, study: Study) -> list[BonusBatch]:
    rows = BonusBatch.objects.filter(prolific_study__study=study).select_related("prolific_study").order_by("-pk")
    return [_with_state(batch) for batch in rows]


def bonus_batch_of(*, study: Study, pk: int) -> BonusBatch | None:
    """The study's batch of that id, with its state for the page, or None (another study's batch is none of it)."""
    batch = BonusBatch.objects.filter(prolific_study__study=study, pk=pk).select_related("prolific_study").first()
    return _with_state(batch) if batch is not None else None


def submissions_by_participant(*, study: Study) -> dict[str, ProlificSubmission]:
    """Prolific participant id -> its submission to one of this study's Prolific studies."""
    rows = ProlificSubmission.objects.filter(prolific_study__study=study).exclude(prolific_study__prolific_id="")
    return {row.prolific_pid: row for row in rows.select_related("prolific_study").order_by("pk")}


def webhook_refusals_recent(*, hours: int = 24) -> int:
    """Webhook deliveries refused in the last ``hours`` (all of them: most are counted, not stored)."""
    since = timezone.now() - timedelta(hours=hours)
    return WebhookRefusalCount.objects.filter(minute__gte=since).aggregate(n=Sum("count"))["n"] or 0
