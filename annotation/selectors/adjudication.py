"""Reads behind adjudication: both annotators' decisions side by side, and what differs.

Only for callers allowed to see every label (``can_see_all_labels``): the
views and the API check that before calling anything here.
"""

from dataclasses import dataclass, field

from django.db.models import Prefetch, QuerySet

from core.roles import ADJUDICATOR, RESEARCHER, has_role

from ..models import (
    AnnotationRound,
    Assignment,
    AssignmentStatus,
    RoundItem,
    Theme,
    Trait,
    TraitDecision,
)
from .workflow import adjudication_queue, assignment_labels, can_see_all_labels

ADDED = "added"
ABSENT = "absent"


@dataclass
class AnnotatorColumn:
    assignment: Assignment
    traits: frozenset
    theme: Theme | None
    unsure: frozenset
    flagged: bool
    note: str


@dataclass
class TraitRow:
    trait: Trait
    suggested: bool
    # One state per annotator, in column order: accept / reject / unsure / added / absent.
    states: list[str]
    differs: bool
    unsure: bool

    @property
    def attention(self) -> bool:
        return self.differs or self.unsure


@dataclass
class Comparison:
    item: RoundItem
    columns: list[AnnotatorColumn]
    traits: list[TraitRow]
    # What the LLM suggested, even for items whose suggestions annotators did not see.
    llm_traits: list[Trait] | None
    suggestions_hidden: bool
    theme_differs: bool
    flagged: bool
    agreed_traits: list[str] = field(default_factory=list)
    agreed_theme: str | None = None

    @property
    def differing_traits(self) -> list[Trait]:
        return [row.trait for row in self.traits if row.differs]

    @property
    def unsure_traits(self) -> list[Trait]:
        return [row.trait for row in self.traits if row.unsure]


def _assignments_prefetch() -> Prefetch:
    return Prefetch(
        "assignments",
        queryset=Assignment.objects.select_related("annotator", "theme").order_by("annotator__username"),
    )


def _with_labels(items: QuerySet[RoundItem]) -> QuerySet[RoundItem]:
    return items.select_related("expression", "round__suggestion_set", "final_theme", "resolved_by").prefetch_related(
        _assignments_prefetch(), "final_traits"
    )


def adjudication_item_list(*, round: AnnotationRound) -> QuerySet[RoundItem]:
    """The items waiting for adjudication, with everything the comparison needs."""
    return _with_labels(adjudication_queue(round=round))


def adjudication_item_get(*, round: AnnotationRound, pk: int) -> RoundItem | None:
    return _with_labels(round.items.filter(pk=pk, control__isnull=True)).first()


def adjudication_next(*, round: AnnotationRound, after: RoundItem | None = None) -> RoundItem | None:
    """The next waiting item after ``after`` in queue order, wrapping around to the start."""
    queue = adjudication_queue(round=round)
    if after is not None:
        queue = queue.exclude(pk=after.pk)
        later = queue.filter(pk__gt=after.pk).first()
        if later is not None:
            return later
    return queue.first()


def adjudication_queue_count(*, round: AnnotationRound) -> int:
    return adjudication_queue(round=round).count()


def _llm_traits(item: RoundItem, traits: dict[str, Trait]) -> list[Trait] | None:
    """What the round's suggestion set suggested for the item (copied onto it), None without a suggestion."""
    if item.round.suggestion_set_id is None or item.suggested is None:
        return None
    return sorted((traits[code] for code in item.suggested if code in traits), key=lambda t: t.number)


def _state(assignment: Assignment, code: str) -> str:
    decision = (assignment.trait_decisions or {}).get(code)
    if decision in TraitDecision.values:
        return decision
    if code in (assignment.added_traits or []):
        return ADDED
    return ABSENT


def item_comparison(*, item: RoundItem, traits: list[Trait] | None = None, with_llm: bool = True) -> Comparison:
    """Each annotator's submitted decisions per trait, theme, flag and note, and where they differ.

    ``traits`` (in taxonomy order) saves a query per item in lists; without
    ``with_llm`` the suggestion is not looked up (and the suggested flags stay off).
    """
    traits = {t.code: t for t in (traits if traits is not None else Trait.objects.order_by("number"))}
    assignments = [a for a in item.assignments.all() if a.status == AssignmentStatus.SUBMITTED]
    columns = []
    for assignment in assignments:
        labels = assignment_labels(assignment)
        columns.append(
            AnnotatorColumn(
                assignment=assignment,
                traits=labels.traits,
                theme=assignment.theme,
                unsure=labels.unsure,
                flagged=labels.flagged,
                note=assignment.note,
            )
        )
    llm = _llm_traits(item, traits) if with_llm else None
    shown = set() if item.suggestions_hidden else {t.code for t in llm or []}
    rows = []
    for code, trait in traits.items():
        states = [_state(column.assignment, code) for column in columns]
        present = {code in column.traits for column in columns}
        rows.append(
            TraitRow(
                trait=trait,
                suggested=code in shown,
                states=states,
                differs=len(present) > 1,
                unsure=TraitDecision.UNSURE in states,
            )
        )
    themes = {column.theme.code if column.theme else None for column in columns}
    agreed = set.intersection(*(set(column.traits) for column in columns)) if columns else set()
    return Comparison(
        item=item,
        columns=columns,
        traits=rows,
        llm_traits=llm,
        suggestions_hidden=item.suggestions_hidden,
        theme_differs=len(themes) > 1,
        flagged=any(column.flagged for column in columns),
        agreed_traits=[code for code in traits if code in agreed],
        agreed_theme=next(iter(themes)) if len(themes) == 1 else None,
    )


def item_visible_get(*, pk: int, user, round_pk: int | None = None) -> RoundItem | None:
    """An item for its history page: researchers and adjudicators see every item,
    annotators only the items they were assigned; anyone else gets None."""
    items = RoundItem.objects.select_related(
        "expression", "round__dataset", "final_theme", "resolved_by"
    ).prefetch_related("final_traits")
    if round_pk is not None:
        items = items.filter(round_id=round_pk)
    if not has_role(user, RESEARCHER, ADJUDICATOR):
        items = items.filter(assignments__annotator=user)
    return items.filter(pk=pk).first()


def round_item_get(*, pk: int) -> RoundItem | None:
    return RoundItem.objects.filter(pk=pk).first()


def item_resolution_get(*, pk: int) -> RoundItem:
    """An item with what its resolution shows (final labels, who resolved it)."""
    return RoundItem.objects.select_related("final_theme", "resolved_by").prefetch_related("final_traits").get(pk=pk)


def item_own_assignment(*, item: RoundItem, user) -> Assignment | None:
    return item.assignments.filter(annotator=user).select_related("theme").first()


__all__ = [
    "Comparison",
    "adjudication_item_get",
    "adjudication_item_list",
    "adjudication_next",
    "adjudication_queue_count",
    "can_see_all_labels",
    "item_comparison",
    "item_own_assignment",
    "item_resolution_get",
    "item_visible_get",
    "round_item_get",
]
