"""What the participant services and pages read: the session a browser holds, the study's imported
content, the assignment behind an artwork page with the glosses, highlights and earlier answers it
shows; and the counts the participant services decide by (places taken, exposures).

Everything here reads what import and preparation stored; nothing calls a model or the
network while a participant waits.
"""

from dataclasses import dataclass
from functools import lru_cache

from django.db.models import Count, FilteredRelation, Q

from core.compiled_reads import CompiledRead

from ..models import (
    Answer,
    Artwork,
    Assignment,
    Criterion,
    Culture,
    Description,
    DescriptionPair,
    Participant,
    ParticipantStatus,
    Phase,
    Speaker,
    Study,
    Term,
    TermStatus,
)
from ..rules import FIRST_ANSWER_STEP, UNFINISHED, participant_abandon_cutoff, participant_hold_cutoff
from ..steps import step_parse

# -- where a participant is -----------------------------------------------------------------------


def participant_fresh(*, participant: Participant) -> Participant:
    """The participant as stored now, with its study (without the package: see study_content)."""
    return Participant.objects.select_related("study").defer("study__package").get(pk=participant.pk)


def participant_current(*, slug: str, pk: int, orders: tuple[int, ...] = ()) -> Participant | None:
    """The session a browser holds for a study, or None when it is not that study's.

    The study comes with it (its status decides whether answers are taken) but not its
    package, the imported study.json: the pages read that through study_content. ``orders``:
    the artworks whose assignments the request will need (the page a POST sends, the one it
    shows next), read in the same query for assignment_for_step; an order that is stale or
    out of range simply finds none.
    """
    participant = _PARTICIPANT_CURRENT.one(
        slug=slug, pk=pk, **{f"order_{index}": order for index, order in enumerate(orders)}
    )
    if participant is None:
        return None
    for index in range(len(orders)):
        assignment = participant.__dict__.pop(f"assignment_{index}", None)
        if assignment is not None:
            _assignment_remember(participant, assignment)
    return participant


def _participant_with_assignments(*, slug: str, pk: int, **orders: int):
    """The query of participant_current: ``order_0``, ``order_1``... are the artworks' orders whose
    assignments come along as ``assignment_0``, ``assignment_1``... No ORDER BY: one row by its key."""
    participants = Participant.objects.select_related("study").defer("study__package").filter(pk=pk, study__slug=slug)
    for index in range(len(orders)):
        condition = Q(assignments__order=orders[f"order_{index}"])
        participants = participants.annotate(
            **{f"assignment_{index}": FilteredRelation("assignments", condition=condition)}
        ).select_related(f"assignment_{index}")
    return participants


# Read on every page, with none, one or two artworks' assignments: each shape compiled once.
_PARTICIPANT_CURRENT = CompiledRead(_participant_with_assignments)


# -- what a study shows, read once per process ----------------------------------------------------


@dataclass(frozen=True)
class StudyContent:
    """The parts of a study the package import writes once and nothing changes afterwards (the
    admin shows them read-only): the package itself, the artworks with their questions, the
    descriptions. Shared by every request of a process: read, never modify."""

    package: dict
    artworks: dict  # pk -> Artwork, its questions prefetched in their order
    descriptions: dict  # pk -> Description
    pairs: dict  # (artwork pk, listener) -> (base description pk, pragmatic description pk)


def study_content(study: Study) -> StudyContent:
    """The study's imported content, read from the database once per process rather than on
    every page. Terms and the sentence pairs' highlights change while a study is a draft or
    paused, so they are not part of it: the pages read them each time."""
    # The creation time next to the id: a database whose ids start again (a test's) never finds
    # another study's content under the same key.
    return _study_content(study.pk, study.created_at)


@lru_cache(maxsize=32)
def _study_content(study_pk: int, created_at) -> StudyContent:
    package = Study.objects.filter(pk=study_pk).values_list("package", flat=True).first()
    return StudyContent(
        package=package if isinstance(package, dict) else {},
        artworks={a.pk: a for a in Artwork.objects.filter(study_id=study_pk).prefetch_related("questions")},
        descriptions={d.pk: d for d in Description.objects.filter(artwork__study_id=study_pk)},
        # Which two descriptions a pair compares; its highlights (matches) change and are read each time.
        pairs={
            (artwork_id, listener): (base_id, pragmatic_id)
            for artwork_id, listener, base_id, pragmatic_id in DescriptionPair.objects.filter(
                artwork__study_id=study_pk
            ).values_list("artwork_id", "listener", "base_id", "pragmatic_id")
        },
    )


def participant_status_counts(*, study: Study, pids: list[str]) -> dict[str, int]:
    """How many of these Prolific ids' sessions end in each status."""
    rows = Participant.objects.filter(study=study, prolific_pid__in=pids).values_list("status").annotate(n=Count("id"))
    return dict(rows.values_list("status", "n"))


def participant_missing_step(*, participant: Participant) -> str | None:
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


# -- quota places and exposures -------------------------------------------------------------------


def participant_idle_q() -> Q:
    """Unfinished sessions the two idle rules count as returned (whether or not marked so yet)."""
    return Q(status__in=UNFINISHED) & (
        Q(last_seen_at__lt=participant_abandon_cutoff())
        | Q(step_index__lt=FIRST_ANSWER_STEP, last_seen_at__lt=participant_hold_cutoff())
    )


def participant_places_taken(*, study: Study, group: str, exclude_pk: int | None = None) -> int:
    """Valid completions plus live sessions of a group: a failed, returned, idle or unverified session
    takes no place."""
    taken = Participant.objects.filter(study=study, group=group, is_preview=False, is_test=False).filter(
        Q(status=ParticipantStatus.COMPLETED) | (Q(status=ParticipantStatus.IN_PROGRESS) & ~participant_idle_q())
    )
    if exclude_pk:
        taken = taken.exclude(pk=exclude_pk)
    return taken.count()


def study_admission(*, study: Study) -> Study:
    """The study's status and quota as stored now (only those fields: a consent reads nothing else)."""
    return Study.objects.only("status", "quota_per_group").get(pk=study.pk)


def artwork_draw_counts(*, study: Study, group: str) -> tuple[dict, dict]:
    """What a consent's draw balances, in one query over the group's live or finished sessions:
    how often each artwork was assigned (exposures), and per artwork how often it showed each
    speaker and put the pragmatic description on each side."""
    rows = (
        Assignment.objects.filter(participant__study=study, participant__group=group, participant__is_preview=False)
        .exclude(participant__status__in=[ParticipantStatus.RETURNED, ParticipantStatus.NO_CONSENT])
        .values("artwork_id", "shown__speaker", "left__speaker")
        .annotate(n=Count("id"))
        .order_by()
    )
    exposures: dict = {}
    speakers: dict = {}
    for row in rows:
        exposures[row["artwork_id"]] = exposures.get(row["artwork_id"], 0) + row["n"]
        if row["shown__speaker"] is None:  # a quality-control artwork shows no description
            continue
        c = speakers.setdefault(row["artwork_id"], {})
        c[row["shown__speaker"]] = c.get(row["shown__speaker"], 0) + row["n"]
        side = "pragmatic_left" if row["left__speaker"] == Speaker.PRAGMATIC else "pragmatic_right"
        c[side] = c.get(side, 0) + row["n"]
    return exposures, speakers


def assignment_for_step(*, participant: Participant, order: int) -> Assignment:
    """The assignment behind an artwork page, with the artwork and the descriptions it shows.

    One row: the artwork, its questions and the descriptions come from study_content. A request
    that stores a page and shows the next one of the same artwork reads it once (the writes keep
    the copy up to date).
    """
    read = participant.__dict__.get("_assignments_read", {})
    if order in read:
        return read[order]
    assignment = _ASSIGNMENT_AT.one(participant_id=participant.pk, order=order)
    if assignment is None:
        raise Assignment.DoesNotExist(f"Participant {participant.pk} has no artwork {order}.")
    return _assignment_remember(participant, assignment)


# The next artwork's row on the page that moves on to it: compiled once (core.compiled_reads).
_ASSIGNMENT_AT = CompiledRead(
    lambda *, participant_id, order: Assignment.objects.filter(participant_id=participant_id, order=order)
)


def _assignment_remember(participant: Participant, assignment: Assignment) -> Assignment:
    """The assignment with its artwork and descriptions from study_content, kept for the request."""
    content = study_content(participant.study)
    assignment.participant = participant
    assignment.artwork = content.artworks[assignment.artwork_id]
    for field in ("shown", "left", "right"):
        pk = getattr(assignment, f"{field}_id")
        if pk is not None:
            setattr(assignment, field, content.descriptions[pk])
    participant.__dict__.setdefault("_assignments_read", {})[assignment.order] = assignment
    return assignment


# -- what an artwork page shows beyond study_content ----------------------------------------------


def artwork_glosses(*, artwork: Artwork) -> dict[str, str]:
    """Term -> its confirmed Chinese gloss, for a Chinese artwork (others have none).

    Read on every page that shows a description: terms change while a study is a draft or paused.
    """
    if artwork.culture != Culture.CHINESE:
        return {}
    return {term: zh for term, zh in _CONFIRMED_TERMS(artwork_id=artwork.pk) if zh.strip()}


def _confirmed_terms(*, artwork_id: int):
    # By term, as before (two spellings of one term: the later one's label wins in gloss_html), and
    # without Term's default ordering, which joins the artwork and its study to sort by them.
    return (
        Term.objects.filter(artwork_id=artwork_id, status=TermStatus.CONFIRMED)
        .order_by("term")
        .values_list("term", "zh")
    )


# Read on every page that shows a description.
_CONFIRMED_TERMS = CompiledRead(_confirmed_terms)


def description_pair_find(*, artwork: Artwork, listener: str) -> DescriptionPair | None:
    """The sentence pair a comparison page shows, with its highlights (matches) as they are now."""
    return DescriptionPair.objects.filter(artwork=artwork, listener=listener).first()


def assignment_answers_by_question(*, assignment: Assignment, phase: str) -> dict[int, Answer]:
    """Question id -> the answer stored in this phase of the assignment."""
    return {answer.question_id: answer for answer in _ASSIGNMENT_ANSWERS(assignment_id=assignment.pk, phase=phase)}


# Read on every second questions page (the pre answers beside the post questions). Unordered: a
# dict by question, and Answer's default ordering joins the assignment to sort by it.
_ASSIGNMENT_ANSWERS = CompiledRead(
    lambda *, assignment_id, phase: Answer.objects.filter(assignment_id=assignment_id, phase=phase).order_by()
)
