"""The judge-versus-human report of a generation run (VIVID §4.1.1, Table 1): gathers the scores from
the database and hands them to :mod:`evaluation.agreement`.

Researchers only: it names raters and shows judge and human scores side by side.
"""

import hashlib

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import Count, Max, Sum

from core import statistics

from .. import agreement
from ..models import HumanRating, RatingStatus, Run, RunItem, RunKind, RunStatus
from ..prompts import PAIRWISE

DIMENSIONS = ("accuracy", "completeness", "native_alignment")
CACHE_SECONDS = 24 * 3600


def _pointwise_judge_runs(run: Run):
    """The judge runs that score this generation run's explanations one by one (not pairwise)."""
    return Run.objects.filter(kind=RunKind.JUDGE, source_run=run).exclude(strategy=PAIRWISE)


def report_judge_runs(*, run: Run):
    """The judge runs the report compares with humans: finished ones on this generation run."""
    return _pointwise_judge_runs(run).filter(status=RunStatus.DONE).select_related("model").order_by("id")


def judge_runs_of(*, run: Run):
    """Every judge run of a generation run, whatever its status (the ones a repeat may copy)."""
    return _pointwise_judge_runs(run).select_related("model", "source_run")


def _fingerprint(run: Run, seed: int, n_resamples: int) -> str:
    # The reproducibility record changes when a run's replies are read again (reparse_scores).
    judges = list(
        _pointwise_judge_runs(run).order_by("id").values_list("id", "status", "finished_at", "reproducibility")
    )
    ratings = HumanRating.objects.filter(run=run, status=RatingStatus.SUBMITTED).aggregate(
        n=Count("id"), last=Max("submitted_at"), revisions=Sum("revision"), ids=Sum("id")
    )
    text = repr((run.pk, judges, sorted(ratings.items()), seed, n_resamples))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def human_report(
    *, run: Run, seed: int = agreement.SEED, n_resamples: int = agreement.N_RESAMPLES, use_cache: bool = True
) -> dict:
    """Every figure of the report as plain JSON-ready data (no NaN: undefined figures are null with a reason).

    Cached under a fingerprint of the judge runs and the submitted ratings, so a new rating
    or a finished judge run recomputes it.
    """
    key = f"evaluation:human-report:{_fingerprint(run, seed, n_resamples)}"
    if use_cache:
        cached = cache.get(key)
        if cached is not None:
            return cached
    report = _compute(run=run, seed=seed, n_resamples=n_resamples)
    if use_cache:
        cache.set(key, report, CACHE_SECONDS)
    return report


def _coefficients(pairs, *, seed, n_resamples) -> dict:
    figures = agreement.coefficients(pairs, seed=seed, n_resamples=n_resamples)
    figures.pop("mean_a")
    figures.pop("mean_b")
    return figures


def _compute(*, run: Run, seed: int, n_resamples: int) -> dict:
    rating_rows = list(
        HumanRating.objects.filter(run=run, status=RatingStatus.SUBMITTED, score__isnull=False)
        .order_by("item_id", "rater_id")
        .values("item_id", "rater_id", "score", *DIMENSIONS)
    )
    ratings = [(r["item_id"], r["rater_id"], r["score"]) for r in rating_rows]
    rater_ids = sorted({r["rater_id"] for r in rating_rows})
    usernames = dict(get_user_model().objects.filter(pk__in=rater_ids).values_list("id", "username"))

    inter = _coefficients(agreement.rater_pairs(ratings), seed=seed, n_resamples=n_resamples)
    inter["n_raters"] = len(rater_ids)
    human = {
        "n_ratings": len(ratings),
        "n_items": len({r[0] for r in ratings}),
        "n_raters": len(rater_ids),
        "mean": agreement.mean([r[2] for r in ratings]),
        "dimensions": {d: agreement.mean([r[d] for r in rating_rows]) for d in DIMENSIONS},
        "raters": [
            {
                "id": rater,
                "username": usernames.get(rater, ""),
                "n_ratings": sum(1 for r in ratings if r[1] == rater),
                "mean": agreement.mean([r[2] for r in ratings if r[1] == rater]),
            }
            for rater in rater_ids
        ],
        "inter_rater": inter,
    }

    judge_runs = list(report_judge_runs(run=run))
    scores_by_run: dict[int, dict] = {j.pk: {} for j in judge_runs}
    expected_by_run: dict[int, dict] = {j.pk: {} for j in judge_runs}
    judge_item_of: dict[int, dict] = {j.pk: {} for j in judge_runs}
    for run_id, item_id, source_id, score, expected in RunItem.objects.filter(run__in=judge_runs).values_list(
        "run_id", "id", "source_item_id", "score", "expected_score"
    ):
        if source_id is not None:
            scores_by_run[run_id][source_id] = score
            expected_by_run[run_id][source_id] = expected
            judge_item_of[run_id][source_id] = item_id

    judges, disagreements = {}, {}
    expressions = dict(RunItem.objects.filter(run=run).values_list("id", "expression__text"))
    for judge in judge_runs:
        scores = scores_by_run[judge.pk]
        pairs, left_out = agreement.judge_pairs(scores, ratings)
        figures = _coefficients(pairs, seed=seed, n_resamples=n_resamples)
        judges[str(judge.pk)] = {
            "id": judge.pk,
            "strategy": judge.strategy,
            "judge_model": judge.model.name,
            "seed": judge.params.get("seed"),
            "n": figures.pop("n"),
            "n_items": figures.pop("n_items"),
            "mean": agreement.mean([p[0] for p in pairs]),
            "human_mean": agreement.mean([p[1] for p in pairs]),
            **figures,
            **left_out,
            "n_judged": len(scores),
            "judge_mean_all": agreement.mean(scores.values()),
            # G-Eval's probability-weighted score against people, beside the integer score's.
            "expected": agreement.expected_agreement(expected_by_run[judge.pk], scores, ratings),
        }
        disagreements[str(judge.pk)] = [
            {
                **row,
                "generation_item": row["item"],
                "judge_item": judge_item_of[judge.pk][row["item"]],
                "expression": expressions.get(row["item"], ""),
                "human_scores": [
                    {**s, "rater": usernames.get(s["rater"], str(s["rater"]))} for s in row["human_scores"]
                ],
            }
            for row in agreement.disagreements(scores, ratings)
        ]

    noise = _noise(judge_runs, scores_by_run, judges)
    for group in noise:
        for judge_id in group["runs"]:
            judges[str(judge_id)]["self_agreement_alpha"] = group["alpha"]
            judges[str(judge_id)]["repeats"] = group["n_repeats"]

    return {
        "run": {"id": run.pk, "model": run.model.name, "strategy": run.strategy, "dataset": run.dataset.name},
        "settings": {
            "labels": agreement.LABELS,
            "confidence_level": agreement.CONFIDENCE_LEVEL,
            "n_resamples": n_resamples,
            "seed": seed,
            "bootstrap": "percentile, resampling items (an item brings all of its pairs)",
        },
        "interval_method": statistics.interval_method(
            unit=agreement.RESAMPLED_UNIT, n_resamples=n_resamples, confidence=agreement.CONFIDENCE_LEVEL
        ),
        "human": human,
        "judges": judges,
        "noise": noise,
        "disagreements": disagreements,
        "table1": _table1(human, judges),
        "n_judge_runs_pending": _pointwise_judge_runs(run).exclude(status=RunStatus.DONE).count(),
    }


def _noise(judge_runs, scores_by_run, judges) -> list[dict]:
    """Repeats of the same strategy with the same judge model (different seeds) and their self-agreement.

    The same prompt too: a paraphrase of the prompt is another wording, measured on the Bias tab."""
    groups: dict[tuple, list] = {}
    for judge in judge_runs:
        groups.setdefault((judge.strategy, judge.model.name, judge.prompt_id), []).append(judge)
    out = []
    for (strategy, model_name, _prompt), members in groups.items():
        alpha = agreement.self_agreement([scores_by_run[j.pk] for j in members])
        kappas = [judges[str(j.pk)]["cohen_kappa"] for j in members]
        defined = [k for k in kappas if k is not None]
        out.append(
            {
                "strategy": strategy,
                "judge_model": model_name,
                "runs": [j.pk for j in members],
                "seeds": [j.params.get("seed") for j in members],
                **alpha,
                "cohen_kappa": kappas,
                "mean_cohen_kappa": agreement.mean(defined),
            }
        )
    return out


def _table1(human: dict, judges: dict) -> list[dict]:
    inter = human["inter_rater"]
    rows = [
        {
            "row": "human",
            "label": "Human baseline",
            "run": None,
            "strategy": "",
            "judge_model": "",
            "n": inter["n"],
            "mean": human["mean"],
            "cohen_kappa": inter["cohen_kappa"],
            "cohen_kappa_ci": inter["cohen_kappa_ci"],
        }
    ]
    for judge in judges.values():
        rows.append(
            {
                "row": "judge",
                "label": judge["strategy"],
                "run": judge["id"],
                "strategy": judge["strategy"],
                "judge_model": judge["judge_model"],
                "n": judge["n"],
                "mean": judge["mean"],
                "cohen_kappa": judge["cohen_kappa"],
                "cohen_kappa_ci": judge["cohen_kappa_ci"],
            }
        )
    return rows
