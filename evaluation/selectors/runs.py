"""Reads of evaluation runs: lists, counts, progress, items and the per-run report."""

from collections import defaultdict

from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from annotation.models import Dataset, DatasetVersion, Theme, Trait
from llm.costs import usage

from ..models import ItemStatus, Run, RunItem, RunKind, RunStatus


# As the README starts one; shown when a queued run waits for a worker that is not there.
def run_list(*, kind: str | None = None) -> QuerySet[Run]:
    runs = Run.objects.select_related("model", "prompt", "dataset", "source_run__model")
    return runs.filter(kind=kind) if kind else runs


def generation_runs() -> QuerySet[Run]:
    """The runs a judge run can score."""
    return Run.objects.filter(kind=RunKind.GENERATION).select_related("model", "dataset")


def finished_generation_exists() -> bool:
    """Whether any generation run has finished: what a judge run and a scoring task need first."""
    return Run.objects.filter(kind=RunKind.GENERATION, status=RunStatus.DONE).exists()


def run_dataset_choices() -> QuerySet[Dataset]:
    return Dataset.objects.order_by("name")


def run_version_choices() -> QuerySet[DatasetVersion]:
    """Frozen versions, newest first."""
    return DatasetVersion.objects.select_related("round__dataset").order_by("-pk")


def judge_repeat_seed(*, judge: Run) -> int:
    """The next seed of a judge run's repeat group: one more than the highest seed used so far."""
    group = Run.objects.filter(
        kind=RunKind.JUDGE, source_run_id=judge.source_run_id, strategy=judge.strategy, model_id=judge.model_id
    )
    seeds = [run.params.get("seed") for run in group.only("params")]
    seeds = [seed for seed in seeds if isinstance(seed, int)]
    return (max(seeds) + 1) if seeds else 1


def run_counts(*, run: Run) -> dict:
    counts = run.items.aggregate(
        n_items=Count("id"),
        n_done=Count("id", filter=Q(status=ItemStatus.DONE)),
        n_failed=Count("id", filter=Q(status=ItemStatus.FAILED)),
        n_cached=Count("id", filter=Q(cached=True)),
        n_unscored=Count("id", filter=Q(status=ItemStatus.DONE, score__isnull=True)),
        n_cut_off=Count("id", filter=Q(status=ItemStatus.DONE, finish_reason="length")),
        tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"),
    )
    counts["tokens_in"] = counts["tokens_in"] or 0
    counts["tokens_out"] = counts["tokens_out"] or 0
    if run.kind != RunKind.JUDGE:
        counts["n_unscored"] = 0  # only a judge reply carries a score
    return counts


def run_progress(*, run: Run) -> dict:
    """Counts, tokens, elapsed time and an ETA from the pace so far."""
    counts = run_counts(run=run)
    finished = counts["n_done"] + counts["n_failed"]
    now = run.finished_at or timezone.now()
    elapsed = (now - run.started_at).total_seconds() if run.started_at else 0.0
    remaining = counts["n_items"] - finished
    eta = None
    if run.status == RunStatus.RUNNING and finished and remaining:
        eta = elapsed / finished * remaining
    return {
        **counts,
        "percent": int(100 * finished / counts["n_items"]) if counts["n_items"] else 0,
        "elapsed_s": round(elapsed, 1),
        "eta_s": round(eta, 1) if eta is not None else None,
        "status": run.status,
        # The tokens the provider reported for the requests sent so far (a cached reply counts 0), priced.
        "cost": usage(run, tokens_in=counts["tokens_in"], tokens_out=counts["tokens_out"])["cost"],
    }


def run_items(*, run: Run, status: str = "", unscored: bool = False) -> QuerySet[RunItem]:
    items = run.items.select_related("expression")
    if status:
        items = items.filter(status=status)
    if unscored:
        items = items.filter(status=ItemStatus.DONE, score__isnull=True)
    return items.order_by("id")


def run_item_details(*, run: Run) -> QuerySet[RunItem]:
    """A run's items with what the item page shows: the expression's labels and the judged reply's model."""
    return (
        RunItem.objects.filter(run=run)
        .select_related("expression__theme", "source_item__run__model")
        .prefetch_related("expression__traits")
    )


def run_item_neighbours(*, item: RunItem) -> dict:
    """The ids of the items before and after ``item`` in its run (None at either end)."""
    items = RunItem.objects.filter(run_id=item.run_id)
    return {
        "previous": items.filter(id__lt=item.pk).order_by("-id").values_list("id", flat=True).first(),
        "next": items.filter(id__gt=item.pk).order_by("id").values_list("id", flat=True).first(),
    }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def run_report(*, run: Run) -> dict:
    """The report of one run (the CLI contract of `run_report`)."""
    counts = run_counts(run=run)
    report = {
        "run": {
            "id": run.pk,
            "kind": run.kind,
            "model": run.model.name,
            "strategy": run.strategy,
            "status": run.status,
            **counts,
            # US dollars at the prices of the run's estimate; None when the model has no price.
            "cost": usage(run, tokens_in=counts["tokens_in"], tokens_out=counts["tokens_out"])["cost"],
        },
        "estimate": run.estimate,
        "reproducibility": run.reproducibility,
        "params": run.params,
    }
    if run.kind == RunKind.JUDGE and run.source_run_b_id:
        # Pairwise: the scores are positions (1 or 2); the Bias tab reads them.
        report["generation_run"] = run.source_run_id
        report["generation_run_b"] = run.source_run_b_id
        report["pairwise"] = dict(
            run.items.filter(status=ItemStatus.DONE)
            .exclude(prediction="")
            .values_list("prediction")
            .annotate(n=Count("id"))
        )
    elif run.kind == RunKind.JUDGE:
        rows = list(
            run.items.filter(status=ItemStatus.DONE, score__isnull=False).values_list(
                "expression_id", "score", "expected_score"
            )
        )
        scores = [(expression, score) for expression, score, _expected in rows]
        expected = [e for _expression, _score, e in rows if e is not None]
        by_theme, by_trait = _scores_by_label(scores)
        report["generation_run"] = run.source_run_id
        report["average"] = _mean([s for _, s in scores])
        # G-Eval's probability-weighted score, over the scored items whose judge gave log-probabilities.
        report["expected_average"] = _mean(expected)
        report["n_expected"] = len(expected)
        report["by_theme"] = by_theme
        report["by_trait"] = by_trait
    if run.kind == RunKind.CLASSIFICATION:
        done = run.items.filter(status=ItemStatus.DONE)
        n = done.count()
        correct = done.filter(correct=True).count()
        report["accuracy"] = correct / n if n else None
        report["task"] = run.strategy
    return report


def _scores_by_label(scores: list[tuple[int, int]]) -> tuple[dict, dict]:
    """Mean judge score per theme and per trait of the judged expressions (Tables 3 and 4)."""
    from annotation.models import Expression

    ids = [eid for eid, _ in scores]
    themes = dict(Expression.objects.filter(pk__in=ids).values_list("id", "theme__code"))
    traits = defaultdict(list)
    for eid, code in Expression.traits.through.objects.filter(expression_id__in=ids).values_list(
        "expression_id", "trait__code"
    ):
        traits[eid].append(code)
    per_theme, per_trait = defaultdict(list), defaultdict(list)
    for eid, score in scores:
        if themes.get(eid):
            per_theme[themes[eid]].append(score)
        for code in traits.get(eid, []):
            per_trait[code].append(score)
    by_theme = {
        code: _mean(per_theme[code]) for code in Theme.objects.order_by("number").values_list("code", flat=True)
    }
    by_trait = {
        code: _mean(per_trait[code]) for code in Trait.objects.order_by("number").values_list("code", flat=True)
    }
    return by_theme, by_trait


# A strategy whose replies the token limit cuts more often than this gets a warning and a rerun offer.
TRUNCATION_WARN_SHARE = 0.05
# What the rerun offers: four times the limit, at least this many tokens.
RERUN_MIN_MAX_TOKENS = 256


def run_truncation(*, run: Run, counts: dict | None = None) -> dict:
    """How many of a pointwise judge run's replies max_tokens cut off, and whether to say so:
    ``n_cut_off``, ``n_done``, ``share``, ``max_tokens``, ``warn`` (above TRUNCATION_WARN_SHARE)
    and ``suggested_max_tokens`` for a rerun."""
    counts = counts or run_counts(run=run)
    max_tokens = run.params.get("max_tokens")
    share = counts["n_cut_off"] / counts["n_done"] if counts["n_done"] else 0.0
    pointwise_judge = run.kind == RunKind.JUDGE and not run.source_run_b_id
    return {
        "n_cut_off": counts["n_cut_off"],
        "n_done": counts["n_done"],
        "share": share,
        "max_tokens": max_tokens,
        "warn": pointwise_judge and share > TRUNCATION_WARN_SHARE,
        "suggested_max_tokens": min(8192, max(4 * int(max_tokens or 0), RERUN_MIN_MAX_TOKENS)),
    }


def run_items_read_by_older_parser(*, run: Run) -> int:
    """How many done items of a pointwise judge run an older score parser read (``reparse_scores``
    reads them again)."""
    from ..scoring import PARSER_VERSION

    if run.kind != RunKind.JUDGE or run.source_run_b_id:
        return 0
    older = Q(parser_version__lt=PARSER_VERSION) | Q(parser_version__isnull=True)
    return run.items.filter(older, status=ItemStatus.DONE).count()
