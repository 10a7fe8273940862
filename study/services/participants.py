"""A participant's way through a study: entry, consent, assignment, each page's answers, the finish.

Every page is a step of ``Participant.plan``. A page's answers are stored in the same
transaction that claims the step (``step_index`` moves on only if it still points at
that step), so a double submit, a second tab or a replayed back-button form stores
nothing twice and overwrites nothing.
"""

import random
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from ..models import (
    Answer,
    Artwork,
    Assignment,
    Criterion,
    DescriptionPair,
    PageVisit,
    Participant,
    ParticipantStatus,
    Phase,
    Preference,
    Side,
    Speaker,
    Study,
    StudyStatus,
)

PID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PARAM_PATTERN = re.compile(r"^[A-Za-z0-9_-]{0,64}$")

# Steps of one artwork, in order. QC artworks without descriptions have only the first two.
ARTWORK_STEPS = ("symbols", "qa", "post_symbols", "post_qa", "compare")
UNFINISHED = (ParticipantStatus.ENTERED, ParticipantStatus.IN_PROGRESS)


class EntryError(Exception):
    """The entry link cannot start or resume a session; ``reason`` picks the page shown."""

    def __init__(self, reason: str, message: str = ""):
        super().__init__(message or reason)
        self.reason = reason


class StepError(ValueError):
    """A page's answers are incomplete or invalid; ``errors`` maps field names to messages."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class Step:
    key: str
    kind: str  # group | consent | instructions | symbols | qa | post_symbols | post_qa | compare | done
    order: int | None = None  # the assignment's order for artwork steps


def step_parse(key: str) -> Step:
    if ":" in key:
        order, kind = key.split(":", 1)
        return Step(key=key, kind=kind, order=int(order))
    return Step(key=key, kind=key)


def participant_step(participant: Participant) -> Step:
    """The page this participant is on now."""
    if participant.status in (ParticipantStatus.COMPLETED, ParticipantStatus.EXCLUDED_QC):
        return Step(key="done", kind="done")
    if participant.status == ParticipantStatus.NO_CONSENT:
        return Step(key="declined", kind="declined")
    if not participant.group:
        return Step(key="group", kind="group")
    if not participant.plan:
        return Step(key="consent", kind="consent")
    if participant.step_index >= len(participant.plan):
        return Step(key="finish", kind="finish")
    return step_parse(participant.plan[participant.step_index])


TEST_TOKEN_SALT = "study.test-participant"


def test_token(slug: str) -> str:
    """The entry-link parameter that marks a synthetic participant; signed, so no real participant can forge it."""
    return signing.dumps(slug, salt=TEST_TOKEN_SALT)


def test_token_valid(token: str, slug: str) -> bool:
    if not token:
        return False
    try:
        return signing.loads(token, salt=TEST_TOKEN_SALT, max_age=7 * 24 * 3600) == slug
    except signing.BadSignature:
        return False


def _open_to(study: Study, *, is_test: bool) -> bool:
    """Live studies take everyone; test responses may also be generated before launch or while paused."""
    if study.status == StudyStatus.LIVE:
        return True
    return is_test and study.status in (StudyStatus.DRAFT, StudyStatus.PAUSED)


def participant_accepts_answers(participant: Participant) -> bool:
    return participant.is_preview or _open_to(participant.study, is_test=participant.is_test)


def _abandon_cutoff():
    return timezone.now() - timedelta(minutes=settings.STUDY_ABANDON_MINUTES)


def participants_mark_returned(*, study: Study) -> int:
    """Unfinished sessions idle past the abandon time count as returned: their quota place frees up."""
    return Participant.objects.filter(
        study=study, status__in=UNFINISHED, last_seen_at__lt=_abandon_cutoff(), is_preview=False
    ).update(status=ParticipantStatus.RETURNED)


def _places_taken(study: Study, group: str, *, exclude_pk: int | None = None) -> int:
    """Valid completions plus live sessions of a group: a failed or returned session takes no place."""
    taken = Participant.objects.filter(study=study, group=group, is_preview=False, is_test=False).filter(
        Q(status=ParticipantStatus.COMPLETED)
        | Q(status=ParticipantStatus.IN_PROGRESS, last_seen_at__gte=_abandon_cutoff())
    )
    if exclude_pk:
        taken = taken.exclude(pk=exclude_pk)
    return taken.count()


def participant_enter(
    *, study: Study, pid: str, prolific_study_id: str = "", session_id: str = "", group: str = "", is_test: bool = False
) -> Participant:
    """Start or resume the session of a Prolific participant.

    One session per PID and study: the same PID resumes where it left off, whatever tab or
    device it comes back from.
    """
    if not PID_PATTERN.match(pid or ""):
        raise EntryError("bad_pid")
    if not PARAM_PATTERN.match(prolific_study_id) or not PARAM_PATTERN.match(session_id):
        raise EntryError("bad_params")
    if group and group not in study.groups:
        raise EntryError("bad_group")
    # Prolific always sends SESSION_ID; a session started without one could later be
    # reopened by anyone who knows the PID.
    if not session_id:
        raise EntryError("bad_params")
    existing = Participant.objects.filter(study=study, prolific_pid=pid, is_preview=False).first()
    if existing is not None:
        return _participant_resume(_same_session(existing, session_id), study=study)
    if not _open_to(study, is_test=is_test):
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
        raise EntryError("other_session")
    return participant


def _participant_resume(participant: Participant, *, study: Study) -> Participant:
    if participant.status == ParticipantStatus.RETURNED:
        if study.status != StudyStatus.LIVE:
            raise EntryError(study.status)
        # A participant who came back after being counted as returned may go on if a place is free.
        if participant.group and participant.plan:
            with transaction.atomic():
                Study.objects.select_for_update().filter(pk=study.pk).first()
                if _places_taken(study, participant.group, exclude_pk=participant.pk) >= study.quota_per_group:
                    raise EntryError("full")
                Participant.objects.filter(pk=participant.pk, status=ParticipantStatus.RETURNED).update(
                    status=ParticipantStatus.IN_PROGRESS, last_seen_at=timezone.now()
                )
        else:
            Participant.objects.filter(pk=participant.pk, status=ParticipantStatus.RETURNED).update(
                status=ParticipantStatus.ENTERED, last_seen_at=timezone.now()
            )
        participant.refresh_from_db()
    elif participant.status in UNFINISHED and study.status == StudyStatus.CLOSED:
        raise EntryError("closed")
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


def participant_touch(*, participant: Participant, step: Step) -> None:
    """Record that a page was shown: the first view starts its timer, later views are counted."""
    now = timezone.now()
    # last_seen_at only drives the abandon timeout (minutes): a write per page view is not needed.
    if participant.last_seen_at is None or now - participant.last_seen_at > timedelta(seconds=30):
        Participant.objects.filter(pk=participant.pk).update(last_seen_at=now)
    # One statement whatever the history of the page (SQLite and PostgreSQL share this upsert syntax).
    table = PageVisit._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (participant_id, step, shown_at, views) VALUES (%s, %s, %s, 1) "
            f"ON CONFLICT (participant_id, step) DO UPDATE SET views = {table}.views + 1",
            [participant.pk, step.key, now],
        )


def _visit_submitted(participant: Participant, step_key: str) -> None:
    now = timezone.now()
    updated = PageVisit.objects.filter(participant=participant, step=step_key, submitted_at__isnull=True).update(
        submitted_at=now
    )
    if not updated and not PageVisit.objects.filter(participant=participant, step=step_key).exists():
        # Sent without the page ever being shown (a replayed form): a zero-length visit.
        PageVisit.objects.get_or_create(
            participant=participant, step=step_key, defaults={"shown_at": now, "submitted_at": now}
        )


def _claim(participant: Participant, step: Step) -> bool:
    """Move the participant past ``step`` if it is still the current one; False if another request did."""
    if step.kind == "group":
        return bool(Participant.objects.filter(pk=participant.pk, group="").update(last_seen_at=timezone.now()))
    index = participant.plan.index(step.key) if step.key in participant.plan else -1
    if index < 0:
        return False
    return bool(
        Participant.objects.filter(pk=participant.pk, step_index=index, status__in=UNFINISHED).update(
            step_index=index + 1, last_seen_at=timezone.now()
        )
    )


def _require_current(participant: Participant, step_key: str) -> Step:
    step = participant_step(participant)
    if step.key != step_key:
        raise StaleStep(step)
    return step


class StaleStep(Exception):
    """The page submitted is not the participant's current page (another tab or a replay): nothing is stored."""

    def __init__(self, current: Step):
        super().__init__(current.key)
        self.current = current


def group_choose(*, participant: Participant, group: str) -> Participant:
    _require_current(participant, "group")
    if group not in participant.study.groups:
        raise StepError({"group": gettext_noop("Choose one of the listed groups.")})
    Participant.objects.filter(pk=participant.pk, group="").update(group=group, last_seen_at=timezone.now())
    _visit_submitted(participant, "group")
    return _fresh(participant)


def consent_decline(*, participant: Participant) -> Participant:
    _require_current(participant, "consent")
    Participant.objects.filter(pk=participant.pk, status=ParticipantStatus.ENTERED, plan=[]).update(
        status=ParticipantStatus.NO_CONSENT, finished_at=timezone.now()
    )
    _visit_submitted(participant, "consent")
    return _fresh(participant)


def consent_give(*, participant: Participant) -> Participant:
    """Consent fixes the session: a quota place, the artworks, the descriptions and the sides."""
    _require_current(participant, "consent")
    study = participant.study
    counted = not participant.is_preview and not participant.is_test
    if counted:
        participants_mark_returned(study=study)
    # The draw reads exposure counts outside the lock: arrivals queue only for the quota check
    # and the inserts, a few milliseconds, not for the whole draw. Two simultaneous arrivals
    # may draw from the same counts; the next ones even it out.
    assignments, plan = _draw(participant, study)
    with transaction.atomic():
        if counted:
            # One arrival at a time per study, so two arrivals cannot both take the last place.
            study = Study.objects.select_for_update().get(pk=study.pk)
        participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        if participant.plan:
            raise StaleStep(participant_step(participant))
        if not participant.is_preview:
            if not _open_to(study, is_test=participant.is_test):
                raise EntryError(study.status)
            if counted and _places_taken(study, participant.group) >= study.quota_per_group:
                raise EntryError("full")
        for assignment in assignments:
            assignment.participant = participant
        Assignment.objects.bulk_create(assignments)
        participant.plan = ["instructions", *plan]
        participant.step_index = 0
        participant.status = ParticipantStatus.IN_PROGRESS
        participant.consented_at = timezone.now()
        participant.last_seen_at = participant.consented_at
        participant.save(update_fields=["plan", "step_index", "status", "consented_at", "last_seen_at"])
    _visit_submitted(participant, "consent")
    return participant


def _exposure_counts(study: Study, group: str) -> dict:
    """How often each artwork has been assigned to live or finished sessions of the group."""
    rows = (
        Assignment.objects.filter(participant__study=study, participant__group=group, participant__is_preview=False)
        .exclude(participant__status__in=[ParticipantStatus.RETURNED, ParticipantStatus.NO_CONSENT])
        .values("artwork_id")
        .annotate(n=Count("id"))
    )
    return {row["artwork_id"]: row["n"] for row in rows}


def _draw(participant: Participant, study: Study) -> tuple[list[Assignment], list[str]]:
    """The artworks, shown descriptions and sides of a session, and its steps; nothing is saved."""
    rng = random.Random(participant.seed)
    group = participant.group
    counts = _exposure_counts(study, group)
    pairs = {
        pair.artwork_id: pair
        for pair in DescriptionPair.objects.filter(artwork__study=study, listener=group).select_related(
            "base", "pragmatic"
        )
    }
    artworks = list(Artwork.objects.filter(study=study))
    regular = [a for a in artworks if not a.is_qc and a.pk in pairs]
    quality = [a for a in artworks if a.is_qc]

    def least_shown(items, n):
        ranked = sorted(items, key=lambda a: (counts.get(a.pk, 0), rng.random()))
        return ranked[:n]

    n_qc = min(study.qc_per_participant, len(quality))
    n_regular = min(study.artworks_per_participant - n_qc, len(regular))
    # Half familiar, half unfamiliar culture where the pool allows, least-shown first within each.
    by_culture: dict[str, list] = {}
    for artwork in regular:
        by_culture.setdefault(artwork.culture, []).append(artwork)
    cultures = sorted(by_culture)
    chosen: list = []
    if cultures:
        share = {c: n_regular // len(cultures) for c in cultures}
        for c in rng.sample(cultures, n_regular % len(cultures)):
            share[c] += 1
        for culture in cultures:
            chosen += least_shown(by_culture[culture], share[culture])
        if len(chosen) < n_regular:
            rest = [a for a in regular if a not in chosen]
            chosen += least_shown(rest, n_regular - len(chosen))
    rng.shuffle(chosen)
    qc_chosen = least_shown(quality, n_qc)
    sequence = list(chosen)
    for artwork in qc_chosen:
        # Never first: the first artwork is where participants learn the task.
        sequence.insert(rng.randint(1, len(sequence)) if sequence else 0, artwork)

    shown_counts = _speaker_counts(study, group)
    plan: list[str] = []
    assignments: list[Assignment] = []
    speakers_here = {Speaker.BASE: 0, Speaker.PRAGMATIC: 0}
    pragmatic_left_here = {True: 0, False: 0}
    for order, artwork in enumerate(sequence, start=1):
        pair = pairs.get(artwork.pk)
        assignment = Assignment(participant=participant, artwork=artwork, order=order, is_qc=artwork.is_qc)
        if pair is not None:
            # Balanced draws: the speaker this artwork showed least to the group, then the one this
            # participant saw least; the same for which side the pragmatic description takes.
            c = shown_counts.get(artwork.pk, {})
            speaker = min(
                (Speaker.BASE, Speaker.PRAGMATIC),
                key=lambda s: (c.get(s, 0), speakers_here[s], rng.random()),
            )
            speakers_here[speaker] += 1
            assignment.shown = pair.base if speaker == Speaker.BASE else pair.pragmatic
            left_is_pragmatic = min(
                (True, False),
                key=lambda left: (
                    c.get("pragmatic_left" if left else "pragmatic_right", 0),
                    pragmatic_left_here[left],
                    rng.random(),
                ),
            )
            pragmatic_left_here[left_is_pragmatic] += 1
            assignment.left, assignment.right = (
                (pair.pragmatic, pair.base) if left_is_pragmatic else (pair.base, pair.pragmatic)
            )
            steps = ARTWORK_STEPS
        else:
            steps = ARTWORK_STEPS[:2]
        assignments.append(assignment)
        plan += [f"{order}:{kind}" for kind in steps]
    return assignments, plan


def _speaker_counts(study: Study, group: str) -> dict:
    rows = (
        Assignment.objects.filter(
            participant__study=study, participant__group=group, participant__is_preview=False, shown__isnull=False
        )
        .exclude(participant__status__in=[ParticipantStatus.RETURNED, ParticipantStatus.NO_CONSENT])
        .values("artwork_id", "shown__speaker", "left__speaker")
        .annotate(n=Count("id"))
    )
    counts: dict = {}
    for row in rows:
        c = counts.setdefault(row["artwork_id"], {})
        c[row["shown__speaker"]] = c.get(row["shown__speaker"], 0) + row["n"]
        side = "pragmatic_left" if row["left__speaker"] == Speaker.PRAGMATIC else "pragmatic_right"
        c[side] = c.get(side, 0) + row["n"]
    return counts


def question_options(*, participant: Participant, question) -> list[str]:
    """The answer and its distractors in this participant's own order, the same on every visit."""
    options = [question.answer, *question.distractors]
    random.Random(f"{participant.seed}:{question.pk}").shuffle(options)
    return options


def element_order(*, participant: Participant, artwork: Artwork) -> list[str]:
    names = [element["name"] for element in artwork.elements]
    random.Random(f"{participant.seed}:elements:{artwork.pk}").shuffle(names)
    return names


def _assignment(participant: Participant, order: int) -> Assignment:
    return Assignment.objects.select_related("artwork", "shown", "left", "right").get(
        participant=participant, order=order
    )


def step_submit(*, participant: Participant, step_key: str, data) -> Participant:
    """Store the answers of one page and move on. ``data`` is the page's POST data (a QueryDict or a dict of lists).

    Raises StaleStep when the page is not the current one (nothing stored) and StepError
    when answers are missing (nothing stored).
    """
    step = _require_current(participant, step_key)
    if step.kind == "instructions":
        writes = _nothing
    elif step.kind in HANDLERS:
        writes = HANDLERS[step.kind](participant, _assignment(participant, step.order), step, data)
    else:
        raise StaleStep(step)
    with transaction.atomic():
        if not _claim(participant, step):
            raise StaleStep(participant_step(_fresh(participant)))
        writes()
        last = participant.plan.index(step.key) + 1 == len(participant.plan)
        if last:
            _finish(participant)
    _visit_submitted(participant, step.key)
    if last:
        return _fresh(participant)
    # The claim moved the session exactly one step on; no need to read it back.
    participant.step_index = participant.plan.index(step.key) + 1
    return participant


def _fresh(participant: Participant) -> Participant:
    return Participant.objects.select_related("study").get(pk=participant.pk)


def _getlist(data, name: str) -> list[str]:
    if hasattr(data, "getlist"):
        return data.getlist(name)
    value = data.get(name, [])
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _get(data, name: str) -> str:
    values = _getlist(data, name)
    return values[0] if values else ""


def _submit_symbols(participant, assignment, step, data):
    names = {element["name"] for element in assignment.artwork.elements}
    picked = _getlist(data, "symbols")
    none = _get(data, "none") == "1"
    unknown = [name for name in picked if name not in names]
    if unknown:
        raise StepError({"symbols": gettext_noop("Unknown element.")})
    if not picked and not none:
        raise StepError({"symbols": gettext_noop("Select the culture symbols you see, or tick “None of these”.")})
    if picked and none:
        raise StepError({"symbols": gettext_noop("Either select symbols or tick “None of these”, not both.")})
    ordered = [element["name"] for element in assignment.artwork.elements if element["name"] in picked]
    field = "symbols_pre" if step.kind == "symbols" else "symbols_post"

    def writes():
        Assignment.objects.filter(pk=assignment.pk).update(**{field: ordered})

    return writes


def _submit_qa(participant, assignment, step, data):
    phase = Phase.PRE if step.kind == "qa" else Phase.POST
    errors: dict[str, str] = {}
    rows = []
    for question in assignment.artwork.questions.all():
        options = question_options(participant=participant, question=question)
        choice = _get(data, f"q{question.pk}-choice")
        confidence = _get(data, f"q{question.pk}-confidence")
        knew = _get(data, f"q{question.pk}-knew")
        if choice not in options:
            errors[f"q{question.pk}-choice"] = gettext_noop("Choose an answer.")
        if confidence not in {"1", "2", "3", "4", "5"}:
            errors[f"q{question.pk}-confidence"] = gettext_noop("Say how confident you are.")
        # Asked only where the question names a symbol; elsewhere it stays unanswered (null), not "no".
        if question.symbol and knew not in {"yes", "no"}:
            errors[f"q{question.pk}-knew"] = gettext_noop("Say whether you knew this before.")
        rows.append((question, options, choice, confidence, knew))
    if errors:
        raise StepError(errors)

    def writes():
        Answer.objects.bulk_create(
            [
                Answer(
                    assignment=assignment,
                    question=question,
                    phase=phase,
                    options=options,
                    choice=choice,
                    is_correct=choice == question.answer,
                    confidence=int(confidence),
                    knew_before=(knew == "yes") if question.symbol else None,
                )
                for question, options, choice, confidence, knew in rows
            ]
        )

    return writes


def _submit_compare(participant, assignment, step, data):
    errors = {}
    choices = {}
    for criterion in Criterion.values:
        side = _get(data, criterion)
        if side not in Side.values:
            errors[criterion] = gettext_noop("Choose the left or the right description.")
        choices[criterion] = side
    if errors:
        raise StepError(errors)

    def writes():
        Preference.objects.bulk_create(
            [
                Preference(
                    assignment=assignment,
                    criterion=criterion,
                    side=side,
                    chosen=assignment.left if side == Side.LEFT else assignment.right,
                )
                for criterion, side in choices.items()
            ]
        )

    return writes


def _nothing():
    pass


HANDLERS = {
    "symbols": _submit_symbols,
    "post_symbols": _submit_symbols,
    "qa": _submit_qa,
    "post_qa": _submit_qa,
    "compare": _submit_compare,
}


def _missing_step(participant: Participant) -> str | None:
    """The first step whose answers are not all stored, or None when everything is."""
    assignments = {
        a.order: a
        for a in Assignment.objects.filter(participant=participant)
        .annotate(
            n_pre=Count("answers", filter=Q(answers__phase=Phase.PRE), distinct=True),
            n_post=Count("answers", filter=Q(answers__phase=Phase.POST), distinct=True),
            n_pref=Count("preferences", distinct=True),
            n_questions=Count("artwork__questions", distinct=True),
        )
        .select_related("artwork")
    }
    for key in participant.plan:
        step = step_parse(key)
        if step.order is None:
            continue
        a = assignments.get(step.order)
        if a is None:
            return key
        missing = {
            "symbols": a.symbols_pre is None,
            "post_symbols": a.symbols_post is None,
            "qa": a.n_pre != a.n_questions,
            "post_qa": a.n_post != a.n_questions,
            "compare": a.n_pref != len(Criterion.values),
        }[step.kind]
        if missing:
            return key
    return None


def _finish(participant: Participant) -> None:
    """Check every answer is stored, then score quality control; runs inside the last page's transaction."""
    missing = _missing_step(participant)
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
    if participant.status != ParticipantStatus.NO_CONSENT and _missing_step(participant) is not None:
        return None
    return settings.PROLIFIC_COMPLETE_URL.format(code=code)


def participant_finish(*, participant: Participant) -> Participant:
    """Finish a session whose last page was stored but not yet scored (say, the request died in between)."""
    with transaction.atomic():
        participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        if participant.status == ParticipantStatus.IN_PROGRESS and participant.step_index >= len(participant.plan):
            _finish(participant)
    return _fresh(participant)
