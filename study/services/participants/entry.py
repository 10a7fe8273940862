"""Entry: the Prolific link starts or resumes a session; a researcher's preview; synthetic participants' tokens."""

import hashlib
import random
import zlib
from collections.abc import Iterable

from django.core import signing
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ...models import Participant, ParticipantStatus, Study, StudyStatus
from ...rules import UNFINISHED, prolific_id_valid, study_open_to
from ...selectors.participants import participant_idle_q, participant_places_taken
from ..results import study_results_changed

# The salt's text is part of every token already handed out: it keeps its old name.
SYNTHETIC_ENTRY_SALT = "study.test-participant"


class EntryError(Exception):
    """The entry link cannot start or resume a session; ``reason`` picks the page shown.

    ``participant_pk`` is the session the link's PID already has in this study, when the refusal
    concerns it: a browser that holds that session keeps it (the participant's first tab goes on).
    """

    def __init__(self, reason: str, message: str = "", *, participant_pk: int | None = None):
        super().__init__(message or reason)
        self.reason = reason
        self.participant_pk = participant_pk


def entry_refusal_status(reason: str) -> int:
    """The HTTP status a refused entry link answers: 403 where the link is Prolific's but may not go
    on (the group is full, another session of the PID, a session Prolific does not know), else 400."""
    return 403 if reason in ("full", "other_session", "unverified") else 400


def prolific_id_for(label: str) -> str:
    """A Prolific-shaped id (24 hexadecimal digits) made from a label, the same every time: demo and
    synthetic participants, benchmarks and tests enter as Prolific's participants do."""
    return hashlib.sha256(label.encode()).hexdigest()[:24]


def synthetic_entry_token(slug: str) -> str:
    """The entry-link parameter that marks a synthetic participant; signed, so no real participant can forge it."""
    return signing.dumps(slug, salt=SYNTHETIC_ENTRY_SALT)


def synthetic_entry_token_valid(token: str, slug: str) -> bool:
    if not token:
        return False
    try:
        return signing.loads(token, salt=SYNTHETIC_ENTRY_SALT, max_age=7 * 24 * 3600) == slug
    except signing.BadSignature:
        return False


def quota_lock(*, study: Study, group: str) -> None:
    """Hold one group's quota places until the transaction ends; call it inside ``transaction.atomic``.

    Whoever takes a place (a consent, a returned participant resuming) counts the places under
    this lock, so two of them never both take the last one. It locks one group of one study,
    not the study row: the other group's arrivals, a researcher's pause and every other query
    of the study go on meanwhile.
    """
    if connection.vendor == "postgresql":
        # A transaction-level advisory lock: released by the commit or the rollback, never leaked.
        # The group's name is hashed to a key; a collision would only make two groups wait on each other.
        group_key = zlib.crc32(group.encode()) - 2**31
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s::integer, %s::integer)", [study.pk % 2**31, group_key])
    else:
        # SQLite: transactions are IMMEDIATE (settings), so one writer at a time already; the row
        # lock keeps any other backend correct.
        Study.objects.select_for_update().filter(pk=study.pk).first()


def participants_mark_returned(*, study: Study) -> int:
    """Unfinished sessions idle past the hold or the abandon time count as returned: their quota place frees up."""
    marked = (
        Participant.objects.filter(study=study, is_preview=False)
        .filter(participant_idle_q())
        .update(status=ParticipantStatus.RETURNED)
    )
    if marked:
        # The counts already showed them returned; the export's participant_status now says so too.
        study_results_changed(study_id=study.pk)
    return marked


def participant_release(*, participant: Participant) -> bool:
    """Prolific reports the participant returned the study or timed out: an unfinished session gives its
    quota place back at once, as the abandon rule would after STUDY_ABANDON_MINUTES.

    Only a release: a finished session keeps its status (its answers stay in the results), and
    nothing takes a place here, so the quota lock is not needed.
    """
    released = bool(
        Participant.objects.filter(pk=participant.pk, status__in=UNFINISHED, is_preview=False).update(
            status=ParticipantStatus.RETURNED
        )
    )
    if released:
        study_results_changed(study_id=participant.study_id)
    return released


# A session that consented can be found unverified whatever happened to it since.
VERIFIABLE = (
    ParticipantStatus.IN_PROGRESS,
    ParticipantStatus.COMPLETED,
    ParticipantStatus.EXCLUDED_QC,
    ParticipantStatus.RETURNED,
)


def participants_exclude_unverified(*, study: Study, participant_ids: Iterable[int]) -> int:
    """Sessions the caller found unknown to Prolific (no submission of their PROLIFIC_PID and
    SESSION_ID): their quota place is released at once and the results and exports leave them out.

    Only consented, counted sessions (previews and test responses are never Prolific's); the number
    changed. A participant who comes back to such a session is told so and goes no further.
    """
    ids = list(participant_ids)
    if not ids:
        return 0
    excluded = Participant.objects.filter(
        study=study,
        pk__in=ids,
        is_preview=False,
        is_test=False,
        consented_at__isnull=False,
        status__in=VERIFIABLE,
    ).update(status=ParticipantStatus.UNVERIFIED)
    if excluded:
        study_results_changed(study_id=study.pk)
    return excluded


def participant_enter(
    *, study: Study, pid: str, prolific_study_id: str = "", session_id: str = "", group: str = "", is_test: bool = False
) -> Participant:
    """Start or resume the session of a Prolific participant.

    One session per PID and study: the same PID resumes where it left off, whatever tab or
    device it comes back from.
    """
    if not pid:
        raise EntryError("bad_pid")
    # Prolific always sends all three; a session started without SESSION_ID could later be
    # reopened by anyone who knows the PID.
    if not prolific_study_id or not session_id:
        raise EntryError("bad_params")
    if not all(prolific_id_valid(value) for value in (pid, prolific_study_id, session_id)):
        raise EntryError("bad_id")
    if group and group not in study.groups:
        raise EntryError("bad_group")
    existing = Participant.objects.filter(study=study, prolific_pid=pid, is_preview=False).first()
    if existing is not None:
        return _participant_resume(_same_session(existing, session_id), study=study)
    if not study_open_to(study, is_test=is_test):
        raise EntryError(study.status)
    try:
        with transaction.atomic():
            participant = Participant.objects.create(
                study=study,
                prolific_pid=pid,
                prolific_study_id=prolific_study_id,
                prolific_session_id=session_id,
                group=group,
                is_test=is_test,
                seed=random.SystemRandom().getrandbits(48),
            )
            # A new session is counted (by group, unassigned until it has one) before it consents.
            study_results_changed(study_id=study.pk)
    except IntegrityError:
        # Two tabs opened the link at the same moment: the other request created the session,
        # and it is this link's only if it carries the same SESSION_ID.
        existing = Participant.objects.get(study=study, prolific_pid=pid, is_preview=False)
        return _participant_resume(_same_session(existing, session_id), study=study)
    return participant


def _same_session(participant: Participant, session_id: str) -> Participant:
    """The PID alone never reopens a session: knowing someone's PID must not let anyone read
    or continue their answers, whatever state the session is in (returned ones included)."""
    if not session_id or session_id != participant.prolific_session_id:
        raise EntryError("other_session", participant_pk=participant.pk)
    return participant


def _participant_resume(participant: Participant, *, study: Study) -> Participant:
    if participant.status == ParticipantStatus.UNVERIFIED:
        raise EntryError("unverified", participant_pk=participant.pk)
    if participant.status == ParticipantStatus.RETURNED:
        if study.status != StudyStatus.LIVE:
            raise EntryError(study.status, participant_pk=participant.pk)
        # A participant who came back after being counted as returned may go on if a place is free.
        if participant.group and participant.plan:
            with transaction.atomic():
                quota_lock(study=study, group=participant.group)
                taken = participant_places_taken(study=study, group=participant.group, exclude_pk=participant.pk)
                if taken >= study.quota_per_group:
                    raise EntryError("full", participant_pk=participant.pk)
                Participant.objects.filter(pk=participant.pk, status=ParticipantStatus.RETURNED).update(
                    status=ParticipantStatus.IN_PROGRESS, last_seen_at=timezone.now()
                )
                study_results_changed(study_id=study.pk)
        else:
            Participant.objects.filter(pk=participant.pk, status=ParticipantStatus.RETURNED).update(
                status=ParticipantStatus.ENTERED, last_seen_at=timezone.now()
            )
            study_results_changed(study_id=study.pk)
        participant.refresh_from_db()
    elif participant.status in UNFINISHED and study.status == StudyStatus.CLOSED:
        raise EntryError("closed", participant_pk=participant.pk)
    return participant


def preview_start(*, study: Study, user, group: str) -> Participant:
    """A researcher's run through the study as a participant; never counted, any study status."""
    if group not in study.groups:
        raise EntryError("bad_group")
    return Participant.objects.create(
        study=study,
        prolific_pid=f"preview-{user.pk}-{random.SystemRandom().getrandbits(32):08x}",
        group=group,
        is_preview=True,
        preview_user=user,
        seed=random.SystemRandom().getrandbits(48),
    )
