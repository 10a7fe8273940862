"""Reads for the researchers' side of the workflow: round candidates, progress, versions.

Imported directly (``from annotation.selectors.rounds import ...``).
"""

from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet

from core.roles import ANNOTATOR

from ..models import (
    AnnotationRound,
    Assignment,
    AssignmentStatus,
    Dataset,
    DatasetVersion,
    DatasetVersionItem,
    Expression,
    ItemStatus,
    Provenance,
    RoundStatus,
    SuggestionSet,
)
from .corpus import expression_list

# The keys of AnnotationRound.item_filter, in the order a page lists them.
ITEM_FILTER_KEYS = ("theme", "trait", "kind", "search", "not_in_other_round")


def round_candidates(*, dataset: Dataset, item_filter: dict | None = None) -> QuerySet[Expression]:
    """The expressions a new round over ``dataset`` would hold, given the researcher's filter.

    ``theme``, ``trait`` and ``kind`` filter on the dataset's own (gold) labels;
    ``not_in_other_round`` leaves out expressions already handed out in any round.
    """
    item_filter = item_filter or {}
    expressions = expression_list(
        dataset=dataset,
        search=item_filter.get("search", ""),
        trait=item_filter.get("trait", ""),
        theme=item_filter.get("theme", ""),
        kind=item_filter.get("kind", ""),
    )
    if item_filter.get("not_in_other_round"):
        expressions = expressions.exclude(round_items__isnull=False)
    return expressions


def round_preview_counts(*, dataset: Dataset, item_filter: dict | None = None) -> dict[str, int]:
    """How many items a new round would hold (``n_items``) out of the dataset's (``total_items``)."""
    return {
        "n_items": round_candidates(dataset=dataset, item_filter=item_filter).count(),
        "total_items": dataset.expressions.count(),
    }


def round_summary(*, round: AnnotationRound) -> dict:
    """What a round page shows beside the funnel: versions, annotators and how many items."""
    return {
        "versions": round.versions.order_by("-created_at"),
        "annotators": round.annotators.order_by("username"),
        "hidden_count": round.items.filter(suggestions_hidden=True, control__isnull=True).count(),
        # "All items" would hide that expressions added to the dataset later are not in the round.
        "item_count": round.items.filter(control__isnull=True).count(),
        "dataset_count": round.dataset.expressions.count(),
    }


def round_annotator_names(*, round: AnnotationRound) -> list[str]:
    return list(round.annotators.order_by("username").values_list("username", flat=True))


def version_choices() -> QuerySet[DatasetVersion]:
    """The frozen versions a request may name (control items are drawn from them)."""
    return DatasetVersion.objects.select_related("round").order_by("-created_at")


def round_choices() -> QuerySet[AnnotationRound]:
    """The rounds a request may name."""
    return AnnotationRound.objects.order_by("name")


def annotator_choices() -> QuerySet[User]:
    """Active accounts holding the Annotator role (accounts made by an import are inactive)."""
    return User.objects.filter(is_active=True, groups__name=ANNOTATOR).distinct().order_by("username")


def suggestion_set_list(*, dataset: Dataset | None = None) -> QuerySet[SuggestionSet]:
    sets = SuggestionSet.objects.select_related("dataset").annotate(n_suggestions=Count("suggestions"))
    if dataset is not None:
        sets = sets.filter(dataset=dataset)
    return sets.order_by("dataset__name", "-created_at")


def suggestion_set_get(*, pk: int) -> SuggestionSet | None:
    """A suggestion set as ``suggestion_set_list`` shows it (with ``n_suggestions``)."""
    return suggestion_set_list().filter(pk=pk).first()


def suggestion_set_choices() -> QuerySet[SuggestionSet]:
    """The suggestion sets a request may name."""
    return SuggestionSet.objects.select_related("dataset").order_by("dataset__name", "-created_at")


def round_progress(*, round: AnnotationRound) -> list[dict]:
    """Per annotator: total, done (submitted), skipped and percent, in one query.

    Only for people allowed to see everyone's progress (researchers, adjudicators):
    an annotator must not learn whether the other annotator has submitted.
    """
    rows = (
        Assignment.objects.filter(item__round=round)
        .values("annotator_id", "annotator__username")
        .annotate(
            total=Count("id"),
            done=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)),
            skipped=Count("id", filter=Q(status=AssignmentStatus.SKIPPED)),
        )
        .order_by("annotator__username")
    )
    return [
        {
            "annotator_id": row["annotator_id"],
            "annotator": row["annotator__username"],
            "total": row["total"],
            "done": row["done"],
            "skipped": row["skipped"],
            "percent": int(100 * row["done"] / row["total"]) if row["total"] else 0,
        }
        for row in rows
    ]


def round_overall_progress(*, rounds: list[AnnotationRound]) -> dict[int, dict]:
    """{round id: {"done", "total", "percent"}} over all assignments, for the researchers' round list."""
    rows = (
        Assignment.objects.filter(item__round__in=rounds)
        .values("item__round_id")
        .annotate(total=Count("id"), done=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)))
    )
    result = {}
    for row in rows:
        total, done = row["total"], row["done"]
        result[row["item__round_id"]] = {
            "total": total,
            "done": done,
            "percent": int(100 * done / total) if total else 0,
        }
    return result


def rounds_to_adjudicate() -> QuerySet[AnnotationRound]:
    """Locked rounds with at least one item waiting for an adjudicator."""
    return (
        AnnotationRound.objects.filter(status=RoundStatus.LOCKED)
        .annotate(n_waiting=Count("items", filter=Q(items__status=ItemStatus.NEEDS_ADJUDICATION)))
        .filter(n_waiting__gt=0)
        .select_related("dataset")
        .order_by("-created_at")
    )


def annotator_rounds(*, user) -> list[dict]:
    """The rounds ``user`` annotates, newest first, each with the user's own progress only."""
    rows = (
        Assignment.objects.filter(annotator=user)
        .values("item__round_id")
        .annotate(
            total=Count("id"),
            done=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)),
            skipped=Count("id", filter=Q(status=AssignmentStatus.SKIPPED)),
        )
    )
    progress = {row["item__round_id"]: row for row in rows}
    rounds = AnnotationRound.objects.filter(pk__in=progress).select_related("dataset").order_by("-created_at")
    return [
        {
            "round": round_,
            "total": progress[round_.pk]["total"],
            "done": progress[round_.pk]["done"],
            "skipped": progress[round_.pk]["skipped"],
        }
        for round_ in rounds
    ]


def version_get(*, pk: int) -> DatasetVersion | None:
    return (
        DatasetVersion.objects.select_related("round__dataset", "created_by")
        .annotate(n_items=Count("items"))
        .filter(pk=pk)
        .first()
    )


def version_get_by_name(*, name: str) -> DatasetVersion | None:
    return DatasetVersion.objects.select_related("round__dataset").filter(name=name).first()


def version_provenance_counts(*, version: DatasetVersion) -> dict[str, int]:
    counts = dict(version.items.values_list("provenance").annotate(n=Count("id")).values_list("provenance", "n"))
    return {value: counts.get(value, 0) for value in Provenance.values}


def version_items(*, version: DatasetVersion) -> QuerySet[DatasetVersionItem]:
    return version.items.order_by("id")


__all__ = [
    "ITEM_FILTER_KEYS",
    "round_candidates",
    "round_preview_counts",
    "round_summary",
    "round_annotator_names",
    "round_choices",
    "version_choices",
    "annotator_choices",
    "suggestion_set_list",
    "suggestion_set_get",
    "suggestion_set_choices",
    "round_progress",
    "round_overall_progress",
    "rounds_to_adjudicate",
    "annotator_rounds",
    "version_get",
    "version_get_by_name",
    "version_provenance_counts",
    "version_items",
]
