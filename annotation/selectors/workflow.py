"""Reads of the validation workflow. Every read that shows labels applies the blindness rule."""

from dataclasses import dataclass

from django.db.models import Case, Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, When
from django.db.models.functions import Coalesce

from core.compiled_reads import CompiledRead
from core.roles import ADJUDICATOR, RESEARCHER, has_role
from core.stamps import stamp_get

from ..models import (
    UNDECIDED_STATUSES,
    AnnotationRound,
    Assignment,
    AssignmentStatus,
    DatasetVersion,
    ItemStatus,
    LabelChange,
    RoundItem,
    RoundStatus,
    Suggestion,
    TraitDecision,
)
from .corpus import theme_codes


def round_scope(round_id: int) -> str:
    """The scope of a round's change stamp (core.stamps): bumped by services.changes.round_changed."""
    return f"round:{round_id}"


def round_stamp(*, round_id: int) -> str:
    """The round's change stamp: every cached figure of the round is keyed by it."""
    return stamp_get(scope=round_scope(round_id))


def dataset_scope(dataset_id: int) -> str:
    """The scope of a dataset's change stamp: bumped when expressions are added or deleted."""
    return f"dataset:{dataset_id}"


def dataset_stamp(*, dataset_id: int) -> str:
    return stamp_get(scope=dataset_scope(dataset_id))


def _with_item_count(rounds: QuerySet[AnnotationRound], *, user) -> QuerySet[AnnotationRound]:
    """``n_items``: the round's stored count of regular items, plus the control items in the reader's
    own queue (an annotator comparing the count with their queue must not find them missing).

    The second part reads only the reader's own assignments; nothing here counts the round's items.
    """
    own_controls = (
        Assignment.objects.filter(round=OuterRef("pk"), annotator_id=user.pk, item__control__isnull=False)
        .values("round")
        .annotate(n=Count("id"))
        .values("n")
    )
    return rounds.annotate(n_items=F("item_count") + Coalesce(Subquery(own_controls, output_field=IntegerField()), 0))


def round_list(*, user) -> QuerySet[AnnotationRound]:
    """Researchers and adjudicators see every round; annotators see the rounds they are in."""
    rounds = _with_item_count(
        AnnotationRound.objects.select_related("dataset", "suggestion_set", "created_by"), user=user
    )
    if not has_role(user, RESEARCHER, ADJUDICATOR):
        rounds = rounds.filter(annotators=user)
    return rounds.order_by("-created_at")


def annotated_round_get(*, pk: int, user) -> AnnotationRound | None:
    """A round ``user`` annotates in; any other round does not exist for the review pages and API."""
    return (
        _with_item_count(AnnotationRound.objects.select_related("dataset", "suggestion_set"), user=user)
        .filter(pk=pk, annotators=user)
        .first()
    )


def annotated_round_ids(*, user) -> set[int]:
    """The rounds ``user`` annotates in."""
    return set(AnnotationRound.objects.filter(annotators=user).values_list("pk", flat=True))


def round_get(*, pk: int, user) -> AnnotationRound | None:
    return round_list(user=user).filter(pk=pk).first()


def round_funnel(*, round: AnnotationRound) -> dict:
    """The curation funnel: imported, reviewed by all, unanimous, adjudicated, removed, final.

    It adds up: in_round = unanimous + adjudicated + removed + undecided, where
    undecided = pending (awaiting reviews) + needs_adjudication.
    """
    # Control items stay out: they are never decided, and an annotator must not be able to count them.
    regular = round.items.filter(control__isnull=True)
    counts = dict(regular.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    unanimous = counts.get(ItemStatus.UNANIMOUS, 0)
    adjudicated = counts.get(ItemStatus.ADJUDICATED, 0)
    removed = counts.get(ItemStatus.REMOVED, 0)
    waiting = counts.get(ItemStatus.NEEDS_ADJUDICATION, 0)
    pending = counts.get(ItemStatus.PENDING, 0)
    return {
        "imported": round.dataset.expressions.count(),
        "in_round": sum(counts.values()),
        # Counted from the reviews: an adjudicator may decide an item that still lacked one at the lock.
        "reviewed_by_all": regular.annotate(
            n_submitted=Count("assignments", filter=Q(assignments__status=AssignmentStatus.SUBMITTED))
        )
        .filter(n_submitted__gte=round.annotators_per_item)
        .count(),
        "unanimous": unanimous,
        "needs_adjudication": waiting,
        "adjudicated": adjudicated,
        "removed": removed,
        "pending": pending,
        "undecided": pending + waiting,
        "final": unanimous + adjudicated,
    }


def version_funnel(*, version: DatasetVersion) -> dict:
    """A version's funnel as frozen; versions frozen before ``pending`` and ``undecided``
    were recorded get them derived, so every funnel adds up the same way."""
    funnel = dict(version.funnel or {})
    if "undecided" not in funnel and "in_round" in funnel:
        counted = sum(funnel.get(key, 0) for key in ("unanimous", "adjudicated", "removed", "needs_adjudication"))
        funnel["pending"] = max(funnel["in_round"] - counted, 0)
        funnel["undecided"] = funnel["pending"] + funnel.get("needs_adjudication", 0)
    return funnel


def annotator_queue(*, round: AnnotationRound, user) -> QuerySet[Assignment]:
    return (
        Assignment.objects.filter(round=round, annotator=user)
        .select_related("item__round", "item__expression", "theme")
        .order_by("position")
    )


# The review page reads these on every answer: compiled once (core.compiled_reads), and counts need no order.
_PROGRESS_COUNTS = CompiledRead(
    lambda *, round_id, user_id: (
        Assignment.objects.filter(round_id=round_id, annotator_id=user_id)
        .order_by()
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
)


def annotator_progress(*, round: AnnotationRound, user) -> dict:
    counts = dict(_PROGRESS_COUNTS(round_id=round.pk, user_id=user.pk))
    total = sum(counts.values())
    done = counts.get(AssignmentStatus.SUBMITTED, 0)
    return {
        "total": total,
        "done": done,
        "skipped": counts.get(AssignmentStatus.SKIPPED, 0),
        "percent": round_percent(done, total),
    }


def round_percent(done: int, total: int) -> int:
    return int(100 * done / total) if total else 0


# Items still to answer, in queue order; skipped ones come after all of them.
OPEN_STATUSES = (AssignmentStatus.PENDING, AssignmentStatus.DRAFT)


def annotator_next(*, round: AnnotationRound, user, after: Assignment | None = None) -> Assignment | None:
    """The next item to review: unstarted or drafted items in queue order after
    the current one, wrapping around; skipped items only once nothing else is left."""
    if after is not None:
        return _next_among(_next_candidates(round=round, user=user, after=after), after=after)
    queue = annotator_queue(round=round, user=user)
    return queue.filter(status__in=OPEN_STATUSES).first() or queue.filter(status=AssignmentStatus.SKIPPED).first()


def annotator_next_two(
    *, round: AnnotationRound, user, after: Assignment
) -> tuple[Assignment | None, Assignment | None]:
    """``annotator_next(after=after)`` and the item after that one (the panel's "next item" link),
    from the same rows: one query while two open items follow in the queue, two at its end."""
    rows = _next_candidates(round=round, user=user, after=after)
    following = _next_among(rows, after=after)
    if following is None:
        return None, None
    return following, _next_among(rows, after=following)


def _queue_rows(*, round_id: int, user_id: int) -> QuerySet[Assignment]:
    return (
        Assignment.objects.filter(round_id=round_id, annotator_id=user_id)
        .select_related("item__expression")
        .order_by("position")
    )


# The first read of every answer's next items: compiled once (core.compiled_reads).
_OPEN_AFTER = CompiledRead(
    lambda *, round_id, user_id, position: _queue_rows(round_id=round_id, user_id=user_id).filter(
        status__in=OPEN_STATUSES, position__gt=position
    )[:2]
)


def _next_candidates(*, round: AnnotationRound, user, after: Assignment) -> list[Assignment]:
    """Rows that hold the next two items after ``after``: the open ones after it and, at the end of
    the queue, the open ones before it (wrapping around) and the skipped ones, first by kind, then by
    position; three of those hold both answers, ``after`` itself among them or not. The rows come
    with their expression; their round is ``round`` itself (the caller's, not read again), and none
    has a theme to join: open and skipped items were never submitted."""
    rows = _OPEN_AFTER(round_id=round.pk, user_id=user.pk, position=after.position)
    if len(rows) < 2:
        rows += (
            _queue_rows(round_id=round.pk, user_id=user.pk)
            .filter(Q(status__in=OPEN_STATUSES, position__lte=after.position) | Q(status=AssignmentStatus.SKIPPED))
            .order_by(Case(When(status=AssignmentStatus.SKIPPED, then=1), default=0), "position")[:3]
        )
    for row in rows:
        row.item.round = round
    return rows


def _next_among(rows: list[Assignment], *, after: Assignment) -> Assignment | None:
    """The queue's rule (open items after ``after``, wrapping around; skipped ones last) applied to
    ``rows``: right when they hold its answer (``_next_candidates``)."""
    open_rows = sorted(
        (row for row in rows if row.status in OPEN_STATUSES and row.pk != after.pk), key=lambda row: row.position
    )
    later = [row for row in open_rows if row.position > after.position]
    skipped = sorted(
        (row for row in rows if row.status == AssignmentStatus.SKIPPED and row.pk != after.pk),
        key=lambda row: row.position,
    )
    return next(iter(later or open_rows or skipped), None)


def assignment_get(*, pk: int, user) -> Assignment | None:
    """An annotator reads only their own assignments."""
    return _OWN_ASSIGNMENT.one(pk=pk, user_id=user.pk)


# Read on every answer, and the widest of its statements: compiled once (core.compiled_reads). One row by
# its key needs no ORDER BY; the round's suggestion set is needed only as its id (on the round): no join.
_OWN_ASSIGNMENT = CompiledRead(
    lambda *, pk, user_id: Assignment.objects.filter(pk=pk, annotator_id=user_id).select_related(
        "item__round", "item__expression", "theme"
    )
)


# Read on every answer that may decide an item: compiled once (core.compiled_reads).
_ITEM_ASSIGNMENTS = CompiledRead(lambda *, item_id: Assignment.objects.filter(item_id=item_id).order_by())


def item_assignments(*, item_id: int) -> list[Assignment]:
    """Every assignment of an item, unordered and without the theme (its code comes from the process's map)."""
    return _ITEM_ASSIGNMENTS(item_id=item_id)


def can_see_all_labels(*, user, round: AnnotationRound) -> bool:
    """The blindness rule: other annotators' labels stay hidden until the round is locked,
    and then only adjudicators and researchers see them (annotators see final outcomes)."""
    return round.status != RoundStatus.OPEN and has_role(user, ADJUDICATOR, RESEARCHER)


def adjudication_queue(*, round: AnnotationRound) -> QuerySet[RoundItem]:
    """Undecided items of a locked round: disputed ones, and any still awaiting a review at the lock."""
    return (
        round.items.filter(status__in=UNDECIDED_STATUSES, control__isnull=True)
        .select_related("expression")
        .order_by("id")
    )


def item_history(*, item: RoundItem, user) -> QuerySet[LabelChange]:
    """Every change on an item; an annotator who may not see all labels sees only their own."""
    changes = item.changes.select_related("actor", "assignment").order_by("at", "id")
    if not can_see_all_labels(user=user, round=item.round):
        changes = changes.filter(
            Q(assignment__annotator=user) | (Q(assignment__isnull=True) & ~Q(item__round__status=RoundStatus.OPEN))
        )
    return changes


def annotator_outcomes(*, round: AnnotationRound, user) -> QuerySet[Assignment]:
    """After adjudication an annotator sees how each of their items ended."""
    return (
        annotator_queue(round=round, user=user)
        .select_related("item__final_theme", "item__control__theme")
        .prefetch_related("item__final_traits")
    )


def version_list() -> QuerySet[DatasetVersion]:
    """Every frozen version, newest first."""
    return (
        DatasetVersion.objects.select_related("round__dataset", "created_by")
        .annotate(n_items=Count("items"))
        .order_by("-created_at")
    )


def round_suggested_codes(*, round: AnnotationRound, expressions: list[int]) -> dict[int, list[str]]:
    """{expression id: the trait codes the round's suggestion set gives it}, in the traits' order, for
    the expressions the set has a suggestion for: what a new item of the round copies into
    ``RoundItem.suggested``."""
    if round.suggestion_set_id is None:
        return {}
    codes: dict[int, list[str]] = {
        expression_id: []
        for expression_id in Suggestion.objects.filter(
            suggestion_set_id=round.suggestion_set_id, expression_id__in=expressions
        ).values_list("expression_id", flat=True)
    }
    links = (
        Suggestion.traits.through.objects.filter(
            suggestion__suggestion_set_id=round.suggestion_set_id, suggestion__expression_id__in=expressions
        )
        .order_by("trait__number")
        .values_list("suggestion__expression_id", "trait__code")
    )
    for expression_id, code in links:
        codes[expression_id].append(code)
    return codes


def suggested_codes_for(*, items) -> dict[int, list[str]]:
    """The suggested trait codes an annotator decides on, per round item (copied onto the item when it
    was made: no query). Empty where the suggestions are hidden (the anchoring control) or the round has none.
    """
    return {
        item.pk: [] if item.suggestions_hidden or item.round.suggestion_set_id is None else list(item.suggested or [])
        for item in items
    }


def round_submitted_labels(*, round: AnnotationRound) -> list[dict]:
    """Submitted labels, one row per item and annotator (by item, then username), for the agreement
    statistics. Read as plain numbers (``present_traits`` bits, ids) and named from small maps: a
    round's answers decoded from their JSON cost several times as much."""
    from django.contrib.auth.models import User

    from .corpus import present_traits_codes, theme_ids

    rows = Assignment.objects.filter(
        round=round, status=AssignmentStatus.SUBMITTED, item__control__isnull=True
    ).values_list("item_id", "annotator_id", "theme_id", "present_traits", "item__suggestions_hidden")
    usernames = dict(round.annotators.values_list("pk", "username"))
    themes = {pk: code for code, pk in theme_ids().items()}
    sorted_codes: dict[int, list[str]] = {}
    result = []
    for item_id, annotator_id, theme_id, mask, hidden in rows:
        if annotator_id not in usernames:  # removed from the round since: their answers still count
            usernames[annotator_id] = User.objects.get(pk=annotator_id).get_username()
        if mask not in sorted_codes:
            sorted_codes[mask] = sorted(present_traits_codes(mask))
        result.append(
            {
                "item": item_id,
                "annotator": usernames[annotator_id],
                "theme": themes.get(theme_id),
                "traits": list(sorted_codes[mask]),
                "suggestions_hidden": hidden,
            }
        )
    result.sort(key=lambda row: (row["item"], row["annotator"]))
    return result


@dataclass(frozen=True)
class Labels:
    traits: frozenset[str]
    theme: str | None
    unsure: frozenset[str]
    flagged: bool


def assignment_labels(assignment: Assignment) -> Labels:
    """The traits an annotator marked present: accepted suggestions plus added ones."""
    decisions = assignment.trait_decisions or {}
    accepted = {code for code, decision in decisions.items() if decision == TraitDecision.ACCEPT}
    unsure = {code for code, decision in decisions.items() if decision == TraitDecision.UNSURE}
    return Labels(
        traits=frozenset(accepted | set(assignment.added_traits or [])),
        # By id, from the process's map: deriving an item's status reads its answers without the theme.
        theme=theme_codes().get(assignment.theme_id),
        unsure=frozenset(unsure),
        flagged=assignment.flagged,
    )


__all__ = [
    "Labels",
    "adjudication_queue",
    "annotated_round_get",
    "annotated_round_ids",
    "annotator_next",
    "annotator_next_two",
    "annotator_outcomes",
    "annotator_progress",
    "annotator_queue",
    "assignment_get",
    "assignment_labels",
    "can_see_all_labels",
    "dataset_scope",
    "dataset_stamp",
    "item_history",
    "round_funnel",
    "round_get",
    "round_list",
    "round_percent",
    "round_scope",
    "round_stamp",
    "round_submitted_labels",
    "round_suggested_codes",
    "suggested_codes_for",
    "version_funnel",
    "version_list",
]
