"""Creating and publishing the Prolific studies of a local study; never two Prolific studies for one group.

The ProlificStudy row is written (CREATING, ``attempt_at`` set) before the create request leaves,
under the unique (study, group) constraint: of two requests at the same instant only one inserts
it and sends; the other gets the row back as it is. A create whose answer was lost leaves the
row without a Prolific id; the next attempt (once the first is stale) first looks the study up on
Prolific by its internal name and adopts it, and sends a create only if it is not there.
"""

from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from study.models import Study, StudyStatus

from ..client import ProlificApiError, ProlificClient, ProlificError
from ..models import CompletionAction, ProlificStudy, ProlificStudyStatus
from ..selectors.bodies import prolific_study_bodies

# A create still without an answer after this long is taken to have died.
STALE_CREATE = timedelta(minutes=2)
STUDY_STATUSES = {
    "UNPUBLISHED": ProlificStudyStatus.UNPUBLISHED,
    "PUBLISHING": ProlificStudyStatus.PUBLISHING,
    "SCHEDULED": ProlificStudyStatus.PUBLISHING,
    "ACTIVE": ProlificStudyStatus.ACTIVE,
    "PAUSED": ProlificStudyStatus.PAUSED,
    "AWAITING REVIEW": ProlificStudyStatus.AWAITING_REVIEW,
    "COMPLETED": ProlificStudyStatus.COMPLETED,
}


def study_status_of(answer) -> str | None:
    """Prolific's study status as stored here ('AWAITING_REVIEW' and 'AWAITING REVIEW' both appear)."""
    value = str((answer or {}).get("status") or "").upper().replace("_", " ") if isinstance(answer, dict) else ""
    return STUDY_STATUSES.get(value)


def prolific_study_create(
    *,
    study: Study,
    group: str | None,
    completion_action: str = CompletionAction.MANUALLY_REVIEW,
    filters: list | None = None,
    user=None,
    site: str | None = None,
) -> list[ProlificStudy]:
    """Draft Prolific studies for ``group`` ("each": one per group; None or "": one for all groups).

    A group that already has its Prolific study gets it back unchanged; nothing is created twice.
    """
    filters = filters or []
    bodies = prolific_study_bodies(
        study=study, group=group, completion_action=completion_action, filters=filters, site=site
    )
    client = ProlificClient(study=study)
    groups = list(study.groups) if group == "each" else [group or ""]
    return [
        _create_one(
            client, study=study, group=each, body=body, completion_action=completion_action, filters=filters, user=user
        )
        for each, body in zip(groups, bodies, strict=True)
    ]


def _create_one(client, *, study, group, body, completion_action, filters, user) -> ProlificStudy:
    now = timezone.now()
    fields = {"completion_action": completion_action, "filters": filters, "request_body": body}
    try:
        with transaction.atomic():
            row = ProlificStudy.objects.create(
                study=study, group=group, status=ProlificStudyStatus.CREATING, created_by=user, attempt_at=now, **fields
            )
    except IntegrityError:
        row = ProlificStudy.objects.filter(study=study, group=group).first()
        if row is None:
            # The other request's create was refused and its row removed in between.
            raise ProlificError(_("Another create of this Prolific study just failed; try again.")) from None
        if row.prolific_id:
            return row
        claimed = (
            ProlificStudy.objects.filter(pk=row.pk, prolific_id="")
            .filter(Q(attempt_at__isnull=True) | Q(attempt_at__lt=now - STALE_CREATE))
            .update(attempt_at=now, last_error="", **fields)
        )
        if not claimed:
            return row  # another request is creating it at this moment
        # An earlier create may have reached Prolific and lost its answer: adopt that study if so.
        found = next(
            (s for s in client.paginate("studies/") if s.get("internal_name") == body["internal_name"] and s.get("id")),
            None,
        )
        if found is not None:
            return _created(row, found)
    try:
        answer = client.post("studies/", body)
    except ProlificApiError as exc:
        if exc.definite:
            # Prolific refused it: nothing exists there, the next attempt starts afresh.
            ProlificStudy.objects.filter(pk=row.pk, prolific_id="").delete()
        else:
            ProlificStudy.objects.filter(pk=row.pk, prolific_id="").update(attempt_at=None, last_error=str(exc))
        raise
    if not isinstance(answer, dict) or not answer.get("id"):
        ProlificStudy.objects.filter(pk=row.pk, prolific_id="").update(attempt_at=None)
        raise ProlificApiError(None, _("Prolific's answer to the create request has no study id."))
    return _created(row, answer)


def _created(row: ProlificStudy, answer: dict) -> ProlificStudy:
    ProlificStudy.objects.filter(pk=row.pk, prolific_id="").update(
        prolific_id=answer["id"],
        status=study_status_of(answer) or ProlificStudyStatus.UNPUBLISHED,
        attempt_at=None,
        last_error="",
    )
    row.refresh_from_db()
    return row


def prolific_study_publish(*, prolific_study: ProlificStudy) -> ProlificStudy:
    """Publish a draft (UNPUBLISHED -> PUBLISHING -> ACTIVE); a study already publishing or live is returned as is.

    The local study must be live first: Prolific's participants would otherwise meet a closed door.
    """
    study = prolific_study.study
    if study.status != StudyStatus.LIVE:
        raise ProlificError(
            _("Launch the study here first (it is %(status)s): Prolific would send participants to a closed study.")
            % {"status": study.get_status_display()}
        )
    if not prolific_study.prolific_id:
        raise ProlificError(_("This Prolific study has not been created yet."))
    client = ProlificClient(study=study)
    moved = ProlificStudy.objects.filter(pk=prolific_study.pk, status=ProlificStudyStatus.UNPUBLISHED).update(
        status=ProlificStudyStatus.PUBLISHING, last_error=""
    )
    if not moved:
        prolific_study.refresh_from_db()
        return prolific_study
    try:
        answer = client.post(f"studies/{prolific_study.prolific_id}/transition/", {"action": "PUBLISH"})
    except ProlificApiError as exc:
        # A publish whose answer was lost may have gone through: Prolific's own status decides.
        status = _status_on_prolific(client, prolific_study)
        if status and status != ProlificStudyStatus.UNPUBLISHED:
            _published(prolific_study, status)
            return prolific_study
        ProlificStudy.objects.filter(pk=prolific_study.pk, status=ProlificStudyStatus.PUBLISHING).update(
            status=ProlificStudyStatus.UNPUBLISHED, last_error=str(exc)
        )
        prolific_study.refresh_from_db()
        raise
    _published(prolific_study, study_status_of(answer) or ProlificStudyStatus.ACTIVE)
    return prolific_study


def _status_on_prolific(client, prolific_study) -> str | None:
    try:
        return study_status_of(client.get(f"studies/{prolific_study.prolific_id}/"))
    except ProlificError:
        return None


def _published(prolific_study: ProlificStudy, status: str) -> None:
    ProlificStudy.objects.filter(pk=prolific_study.pk).update(status=status, published_at=timezone.now(), last_error="")
    prolific_study.refresh_from_db()
    transaction.on_commit(lambda: _start_sync(prolific_study.study_id))


def _start_sync(study_id: int) -> None:
    from ..tasks import prolific_sync_start

    prolific_sync_start(study_id)


def prolific_study_refresh(*, client, prolific_study: ProlificStudy) -> ProlificStudy:
    """Prolific's status of the study, stored here."""
    status = study_status_of(client.get(f"studies/{prolific_study.prolific_id}/"))
    if status and status != prolific_study.status:
        ProlificStudy.objects.filter(pk=prolific_study.pk).update(status=status)
        prolific_study.status = status
    return prolific_study
