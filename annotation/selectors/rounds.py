"""Reads for the researchers' side of the workflow: round candidates, progress, versions.

Imported directly (``from annotation.selectors.rounds import ...``).
"""

from django.contrib.auth.models import User
from django.core.cache import cache
from django.db.models import Count, Q, QuerySet

from core.roles import ANNOTATOR
from core.stamps import cached

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
    RoundQualitySummary,
    RoundStatus,
    SuggestionSet,
)
from .corpus import expression_list
from .workflow import dataset_stamp, round_funnel, round_percent, round_stamp

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
    """What a round page shows beside the funnel: versions, annotators and how many items (the
    round's stored counts: control items left out)."""
    return {
        "versions": round.versions.order_by("-created_at"),
        "annotators": round.annotators.order_by("username"),
        "hidden_count": round.hidden_count,
        # "All items" would hide that expressions added to the dataset later are not in the round.
        "item_count": round.item_count,
        "dataset_count": round_counts(round=round)["funnel"]["imported"],
    }


def round_counts(*, round: AnnotationRound) -> dict:
    """The round's funnel and everyone's progress, computed once per change of the round (its stamp,
    services.changes) and read from the shared cache by every page and API call until the next one.

    Only for people allowed to see them (``round_overview_visible``).
    """
    stamps = f"{round_stamp(round_id=round.pk)}:{dataset_stamp(dataset_id=round.dataset_id)}"
    key = f"vivid:round-counts:{round.pk}:{stamps}"
    return cached(
        key=key, compute=lambda: {"funnel": round_funnel(round=round), "progress": round_progress(round=round)}
    )


def round_quality_summary_get(*, round: AnnotationRound, answered: bool) -> dict:
    """The round page's drift warnings as the last refresh stored them (services.changes), and whether
    answers have come in since (the page then says they are being refreshed). ``answered``: whether
    the round has any answer (a round without one has no summary and needs none)."""
    summary = RoundQualitySummary.objects.filter(round=round).first()
    if summary is None:
        return {"warnings": [], "computed_at": None, "stale": answered}
    return {
        "warnings": summary.warnings,
        "computed_at": summary.computed_at,
        "stale": summary.stamp != round_stamp(round_id=round.pk),
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
        Assignment.objects.filter(round=round)
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
    """{round id: {"done", "total", "percent"}} over all assignments, for the researchers' round list.

    Each round's figure is counted once per change of the round (its stamp) and read from the shared
    cache until the next; the rounds missing there are counted together in one query.
    """
    keys = {round_.pk: f"vivid:round-overall:{round_.pk}:{round_stamp(round_id=round_.pk)}" for round_ in rounds}
    found = cache.get_many(list(keys.values()))
    result = {pk: found[key] for pk, key in keys.items() if key in found}
    missing = [pk for pk in keys if pk not in result]
    if missing:
        rows = (
            Assignment.objects.filter(round__in=missing)
            .values("round_id")
            .annotate(total=Count("id"), done=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)))
        )
        counted = {pk: {"total": 0, "done": 0, "percent": 0} for pk in missing}
        for row in rows:
            total, done = row["total"], row["done"]
            counted[row["round_id"]] = {
                "total": total,
                "done": done,
                "percent": int(100 * done / total) if total else 0,
            }
        cache.set_many({keys[pk]: value for pk, value in counted.items()}, timeout=24 * 3600)
        result |= {pk: value for pk, value in counted.items() if value["total"]}
    return result


def annotator_progress_by_round(*, user) -> dict[int, dict]:
    """{round id: the user's own progress} (as ``annotator_progress``) in every round they annotate,
    in one query over their own assignments."""
    rows = (
        Assignment.objects.filter(annotator=user)
        .values("round_id")
        .annotate(
            total=Count("id"),
            done=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)),
            skipped=Count("id", filter=Q(status=AssignmentStatus.SKIPPED)),
        )
    )
    return {
        row["round_id"]: {
            "total": row["total"],
            "done": row["done"],
            "skipped": row["skipped"],
            "percent": round_percent(row["done"], row["total"]),
        }
        for row in rows
    }


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
    progress = annotator_progress_by_round(user=user)
    rounds = AnnotationRound.objects.filter(pk__in=progress).select_related("dataset").order_by("-created_at")
    return [{"round": round_, **progress[round_.pk]} for round_ in rounds]


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
    "round_counts",
    "round_quality_summary_get",
    "round_annotator_names",
    "round_choices",
    "version_choices",
    "annotator_choices",
    "suggestion_set_list",
    "suggestion_set_get",
    "suggestion_set_choices",
    "round_progress",
    "round_overall_progress",
    "annotator_progress_by_round",
    "rounds_to_adjudicate",
    "annotator_rounds",
    "version_get",
    "version_get_by_name",
    "version_provenance_counts",
    "version_items",
]
