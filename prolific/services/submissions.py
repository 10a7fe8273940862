"""Submissions as Prolific reports them (sync and webhook), and the review: approve, reject, request a return.

A submission's status is stored beside the local session of the same PROLIFIC_PID and SESSION_ID
(the submission id). A RETURNED or TIMED-OUT submission gives its quota place back here at once;
the same status reported twice changes nothing.

Approvals are claimed before they are sent (``approval_requested_at``, set under a row lock and
committed first), so two researchers pressing "approve all valid" at the same instant send each
submission once.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from study.models import Participant, Study
from study.services.participants import participant_release

from ..client import ProlificApiError, ProlificClient, ProlificError
from ..models import PLACE_FREEING_STATUSES, ProlificStudy, ProlificSubmission, SubmissionStatus
from ..selectors.studies import prolific_approvable
from .studies import prolific_study_refresh
from .verification import prolific_sessions_verify

# Submission ids per bulk-approve request; Prolific's documentation gives no limit, this stays well inside any.
BULK_APPROVE_BATCH = 200
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
# Prolific asks for a rejection message a participant can learn from.
REJECTION_MESSAGE_MIN = 100


def submission_status(value) -> str | None:
    """Prolific's status as stored here ('TIMED_OUT', 'timed-out' and 'TIMED-OUT' are one status)."""
    text = str(value or "").strip().upper()
    for candidate in (text, text.replace("_", " "), text.replace("_", "-"), text.replace(" ", "-")):
        if candidate in SubmissionStatus.values:
            return candidate
    return None


def _local_session(*, study: Study, participant_id: str, submission_id: str) -> Participant | None:
    if not participant_id:
        return None
    return Participant.objects.filter(
        study=study, prolific_pid=participant_id, prolific_session_id=submission_id, is_preview=False
    ).first()


def _prolific_study_of_session(*, participant_id: str, submission_id: str) -> ProlificStudy | None:
    """The Prolific study of a submission not seen yet, through the local session its link opened."""
    if not participant_id:
        return None
    session = Participant.objects.filter(
        prolific_pid=participant_id, prolific_session_id=submission_id, is_preview=False
    ).first()
    if session is None:
        return None
    studies = ProlificStudy.objects.filter(study_id=session.study_id).exclude(prolific_id="")
    return studies.filter(prolific_id=session.prolific_study_id).first() or (
        studies.first() if studies.count() == 1 else None
    )


def prolific_submission_status_apply(
    *,
    submission_id: str,
    status: str,
    participant_id: str = "",
    prolific_study: ProlificStudy | None = None,
    study_code: str = "",
    started_at=None,
    completed_at=None,
) -> dict:
    """Store one submission's status; {"outcome": created|updated|unchanged|unknown submission|unknown status,
    "freed": bool, "submission": ProlificSubmission | None}."""
    stored = submission_status(status)
    if stored is None:
        return {"outcome": "unknown status", "freed": False, "submission": None}
    submission = ProlificSubmission.objects.filter(submission_id=submission_id).first()
    outcome = "unchanged"
    if submission is None:
        if prolific_study is None:
            prolific_study = _prolific_study_of_session(participant_id=participant_id, submission_id=submission_id)
        if prolific_study is None:
            return {"outcome": "unknown submission", "freed": False, "submission": None}
        try:
            with transaction.atomic():
                submission = ProlificSubmission.objects.create(
                    prolific_study=prolific_study,
                    submission_id=submission_id,
                    prolific_pid=participant_id,
                    participant=_local_session(
                        study=prolific_study.study, participant_id=participant_id, submission_id=submission_id
                    ),
                    status=stored,
                    study_code=study_code or "",
                    started_at=_when(started_at),
                    completed_at=_when(completed_at),
                )
            outcome = "created"
        except IntegrityError:
            # The webhook and the sync stored it at the same moment: the other one's row is updated below.
            submission = ProlificSubmission.objects.get(submission_id=submission_id)
    if outcome != "created":
        changed = (
            ProlificSubmission.objects.filter(pk=submission.pk)
            .exclude(status=stored)
            .update(status=stored, status_changed_at=timezone.now())
        )
        outcome = "updated" if changed else "unchanged"
        extra = {}
        if submission.participant_id is None and participant_id:
            # The session may have started after Prolific first reported the submission.
            session = _local_session(
                study=submission.prolific_study.study, participant_id=participant_id, submission_id=submission_id
            )
            if session is not None:
                extra["participant"] = session
        if study_code and study_code != submission.study_code:
            extra["study_code"] = study_code
        if completed_at and submission.completed_at is None:
            extra["completed_at"] = _when(completed_at)
        if extra:
            ProlificSubmission.objects.filter(pk=submission.pk).update(**extra)
        submission.refresh_from_db()
    freed = False
    if outcome in ("created", "updated") and stored in PLACE_FREEING_STATUSES and submission.participant is not None:
        freed = participant_release(participant=submission.participant)
    return {"outcome": outcome, "freed": freed, "submission": submission}


def _when(value):
    if not value:
        return None
    if isinstance(value, str):
        return parse_datetime(value)
    return value


def prolific_submissions_sync(*, study: Study) -> dict:
    """Every submission of the study's Prolific studies (all pages), stored; counts seen/created/updated/freed,
    and the sessions released as unknown to Prolific once the listing is complete (``unverified``)."""
    counts = {"seen": 0, "created": 0, "updated": 0, "unchanged": 0, "freed": 0, "studies": 0, "unverified": 0}
    prolific_studies = list(ProlificStudy.objects.filter(study=study).exclude(prolific_id="").select_related("study"))
    if not prolific_studies:
        return counts
    listed_from = timezone.now()
    client = ProlificClient(study=study)
    for prolific_study in prolific_studies:
        prolific_study_refresh(client=client, prolific_study=prolific_study)
        for item in client.paginate(f"studies/{prolific_study.prolific_id}/submissions/"):
            if not isinstance(item, dict) or not item.get("id"):
                continue
            counts["seen"] += 1
            result = prolific_submission_status_apply(
                submission_id=str(item["id"]),
                status=item.get("status"),
                participant_id=str(item.get("participant_id") or item.get("participant") or ""),
                prolific_study=prolific_study,
                study_code=str(item.get("study_code") or ""),
                started_at=item.get("started_at"),
                completed_at=item.get("completed_at"),
            )
            if result["outcome"] in counts:
                counts[result["outcome"]] += 1
            counts["freed"] += int(result["freed"])
        ProlificStudy.objects.filter(pk=prolific_study.pk).update(last_synced_at=timezone.now())
        counts["studies"] += 1
    # Reached only when every page of every Prolific study was read: an interrupted listing raised.
    counts["unverified"] = prolific_sessions_verify(study=study, listed_from=listed_from)
    return counts


# -- review ------------------------------------------------------------------------------------


def prolific_submissions_approve_valid(*, study: Study, dry_run: bool = False) -> dict:
    """Approve every submission awaiting review whose local session is valid, in bulk requests of
    BULK_APPROVE_BATCH; a submission is never sent for approval twice.

    A batch Prolific refuses is approved one by one, so each refusal is kept with Prolific's own
    message (``last_error``) and returned in ``refused``.
    """
    if dry_run:
        ids = list(prolific_approvable(study=study).order_by("pk").values_list("submission_id", flat=True))
        batches = [ids[i : i + BULK_APPROVE_BATCH] for i in range(0, len(ids), BULK_APPROVE_BATCH)]
        return {
            "dry_run": True,
            "approved": 0,
            "would_approve": ids,
            "requests": [{"submission_ids": batch} for batch in batches],
            "refused": [],
        }
    client = ProlificClient(study=study)
    now = timezone.now()
    with transaction.atomic():
        # The row lock (PostgreSQL) or the IMMEDIATE transaction (SQLite) makes a second caller wait,
        # then find these rows claimed.
        claimed = list(
            prolific_approvable(study=study).select_for_update(of=("self",)).order_by("pk").values_list("pk", flat=True)
        )
        ProlificSubmission.objects.filter(pk__in=claimed, approval_requested_at__isnull=True).update(
            approval_requested_at=now, last_error=""
        )
    rows = list(ProlificSubmission.objects.filter(pk__in=claimed).order_by("pk"))
    approved, refused = 0, []
    for start in range(0, len(rows), BULK_APPROVE_BATCH):
        batch = rows[start : start + BULK_APPROVE_BATCH]
        try:
            client.request(
                "POST",
                "submissions/bulk-approve/",
                json_body={"submission_ids": [row.submission_id for row in batch]},
                retry_unsafe=True,  # approving twice is a no-op on Prolific
            )
        except ProlificApiError as exc:
            if not exc.definite:
                _unclaim(batch, str(exc))
                refused += [_refusal(row, str(exc)) for row in batch]
                continue
            for row in batch:
                if _approve_one(client, row):
                    approved += 1
                else:
                    refused.append(_refusal(row, row.last_error))
            continue
        ProlificSubmission.objects.filter(pk__in=[row.pk for row in batch]).update(
            status=SubmissionStatus.APPROVED, status_changed_at=timezone.now(), last_error=""
        )
        approved += len(batch)
    return {"dry_run": False, "approved": approved, "refused": refused, "requests": -(-len(rows) // BULK_APPROVE_BATCH)}


def _approve_one(client, row: ProlificSubmission) -> bool:
    try:
        client.request(
            "POST", f"submissions/{row.submission_id}/transition/", json_body={"action": "APPROVE"}, retry_unsafe=True
        )
    except ProlificApiError as exc:
        _unclaim([row], exc.message)
        row.last_error = exc.message
        return False
    ProlificSubmission.objects.filter(pk=row.pk).update(
        status=SubmissionStatus.APPROVED, status_changed_at=timezone.now(), last_error=""
    )
    return True


def _unclaim(rows, message: str) -> None:
    # Not approved: the researcher may try again once the cause is fixed.
    ProlificSubmission.objects.filter(pk__in=[row.pk for row in rows]).update(
        approval_requested_at=None, last_error=message[:2000]
    )


def _refusal(row: ProlificSubmission, message: str) -> dict:
    return {"submission_id": row.submission_id, "participant_id": row.prolific_pid, "message": message}


def prolific_submission_reject(*, submission: ProlificSubmission, message: str, category: str) -> ProlificSubmission:
    """Reject one submission awaiting review, with Prolific's category and a message to the participant."""
    message = (message or "").strip()
    if category not in REJECTION_CATEGORIES:
        raise ProlificError(
            _("Unknown rejection category %(category)s (use %(choices)s).")
            % {"category": category, "choices": ", ".join(REJECTION_CATEGORIES)}
        )
    if len(message) < REJECTION_MESSAGE_MIN:
        raise ProlificError(
            _(
                "The rejection message must have at least %(min)s characters (it has %(n)s): Prolific shows it to the participant."
            )
            % {"min": REJECTION_MESSAGE_MIN, "n": len(message)}
        )
    submission.refresh_from_db()
    if submission.status != SubmissionStatus.AWAITING_REVIEW:
        raise ProlificError(
            _("Submission %(id)s is %(status)s: only a submission awaiting review can be rejected.")
            % {"id": submission.submission_id, "status": submission.get_status_display()}
        )
    client = ProlificClient(study=submission.prolific_study.study)
    try:
        client.request(
            "POST",
            f"submissions/{submission.submission_id}/transition/",
            json_body={"action": "REJECT", "message": message, "rejection_category": category},
            retry_unsafe=True,
        )
    except ProlificApiError as exc:
        ProlificSubmission.objects.filter(pk=submission.pk).update(last_error=exc.message[:2000])
        submission.refresh_from_db()
        raise
    ProlificSubmission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.REJECTED, status_changed_at=timezone.now(), last_error=""
    )
    submission.refresh_from_db()
    if submission.participant is not None:
        participant_release(participant=submission.participant)
    return submission


def prolific_submission_request_return(*, submission: ProlificSubmission, reasons: list[str]) -> ProlificSubmission:
    """Ask the participant to return the submission (once; a second request is not sent)."""
    reasons = [str(reason).strip() for reason in reasons or [] if str(reason).strip()]
    if not reasons:
        raise ProlificError(_("Give at least one reason for the return request."))
    client = ProlificClient(study=submission.prolific_study.study)
    claimed = ProlificSubmission.objects.filter(pk=submission.pk, return_requested_at__isnull=True).update(
        return_requested_at=timezone.now(), last_error=""
    )
    if not claimed:
        submission.refresh_from_db()
        return submission
    try:
        client.request(
            "POST",
            f"submissions/{submission.submission_id}/request-return/",
            json_body={"request_return_reasons": reasons},
            retry_unsafe=True,
        )
    except ProlificApiError as exc:
        ProlificSubmission.objects.filter(pk=submission.pk).update(
            return_requested_at=None, last_error=exc.message[:2000]
        )
        submission.refresh_from_db()
        raise
    submission.refresh_from_db()
    return submission
