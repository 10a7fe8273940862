"""Agreement between scorers on the 0-5 scale (VIVID §4.1.1, Table 1): pure computations, no database.

A *pair* is (a, b, group): two scores of the same generated explanation and
the generation item it belongs to. The judge-versus-human pairs have the judge
as ``a`` and one human rater as ``b``, so an item two raters scored gives two
pairs; the inter-rater pairs have two raters (the lower user id as ``a``).

Every coefficient comes from the library the literature uses, through core.statistics, with
nothing reimplemented: Cohen's kappa from scikit-learn with the six labels 0-5 passed
explicitly (unweighted, linear, quadratic), Kendall's tau-b and Spearman's rho from scipy, and
Krippendorff's alpha (interval) from ``krippendorff``. The 95% percentile intervals come from
core.statistics' bootstrap resampling *items* (an item drawn brings all of its pairs: the judge
against each of its raters are not independent); each resample's kappa and tau are computed on
the weighted pairs at once, and equal scikit-learn's and scipy's (tests/core/test_statistics.py).
A coefficient that is undefined on the data (no pairs, a constant scorer ...) is ``None`` with a
reason, never NaN.
"""

import warnings
from itertools import combinations

import numpy as np

from core import statistics

LABELS = [0, 1, 2, 3, 4, 5]
CONFIDENCE_LEVEL = 0.95
N_RESAMPLES = 1000
SEED = 0
# What a resample draws (each with all of its pairs), as the reports say.
RESAMPLED_UNIT = "items"
COEFFICIENT_KEYS = (
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "kendall_tau",
    "spearman_rho",
)
KAPPA_WEIGHTS = {"cohen_kappa": None, "cohen_kappa_linear": "linear", "cohen_kappa_quadratic": "quadratic"}


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def kappa(a, b, weights=None) -> float:
    """Cohen's kappa with all six labels, NaN where undefined (scikit-learn's own convention)."""
    return statistics.cohen_kappa(a, b, labels=LABELS, weights=weights)


def tau_b(a, b) -> float:
    return statistics.kendall_tau(a, b)[0]


def rho(a, b) -> float:
    from scipy import stats  # where used: core/warmup.py says why

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.spearmanr(a, b).statistic)


STATISTICS = {
    "cohen_kappa": lambda a, b: kappa(a, b),
    "cohen_kappa_linear": lambda a, b: kappa(a, b, "linear"),
    "cohen_kappa_quadratic": lambda a, b: kappa(a, b, "quadratic"),
    "kendall_tau": tau_b,
    "spearman_rho": rho,
}
# The coefficients that get a bootstrap interval (the issue asks for kappa and tau).
WITH_CI = ("cohen_kappa", "kendall_tau")


def _weighted_kappa(a, b):
    onehot = statistics.pair_one_hot(a, b, len(LABELS))
    return lambda weights: statistics.cohen_kappa_weighted(onehot, weights, len(LABELS))


def _weighted_tau(a, b):
    return lambda weights: statistics.kendall_tau_weighted(a, b, weights)


# What the bootstrap computes on each resample: the same values, from the pairs' weights.
BOOTSTRAP_STATISTICS = {"cohen_kappa": _weighted_kappa, "kendall_tau": _weighted_tau}


def confusion(a, b) -> list[list[int]]:
    """6x6 counts: rows are the first scorer's score 0-5, columns the second's."""
    matrix = [[0] * len(LABELS) for _ in LABELS]
    for x, y in zip(a, b, strict=True):
        matrix[int(x)][int(y)] += 1
    return matrix


def _undefined_reason(key: str, a, b) -> str:
    if len(a) < 2:
        return "fewer than two pairs"
    constant_a, constant_b = len(set(a)) == 1, len(set(b)) == 1
    if key.startswith("cohen_kappa"):
        if constant_a and constant_b and a[0] == b[0]:
            return "both sides gave every item the same score: chance agreement is 1"
        return "undefined on these scores"
    if constant_a or constant_b:
        return "one side gave every item the same score: no ranking to compare"
    return "undefined on these scores"


def bootstrap_ci(statistic, groups, *, seed: int = SEED, n_resamples: int = N_RESAMPLES):
    """95% percentile bootstrap interval resampling groups (items) with all their pairs.

    ``statistic`` maps a resamples x pairs weights matrix to one value per resample (see
    ``BOOTSTRAP_STATISTICS``). Returns ``([low, high], None)`` or ``(None, reason)``; a resample
    where the coefficient is undefined leaves the interval undefined.
    """
    if len(set(groups)) < 2:
        return None, "fewer than two items to resample"
    interval = statistics.bootstrap_interval(
        statistic=statistic,
        n_rows=len(groups),
        clusters=np.asarray(groups),
        n_resamples=n_resamples,
        confidence=CONFIDENCE_LEVEL,
        seed=seed,
    )
    if not interval.defined:
        return None, f"undefined in {interval.n_undefined} of {n_resamples} resamples"
    return interval.pair(), None


def coefficients(pairs, *, seed: int = SEED, n_resamples: int = N_RESAMPLES) -> dict:
    """Every agreement figure of a list of ``(a, b, group)`` pairs (scores 0-5)."""
    a = [int(p[0]) for p in pairs]
    b = [int(p[1]) for p in pairs]
    groups = [p[2] for p in pairs]
    result = {
        "n": len(pairs),
        "n_items": len(set(groups)),
        "mean_a": mean(a),
        "mean_b": mean(b),
        "confusion": confusion(a, b),
        "reasons": {},
    }
    for key, statistic in STATISTICS.items():
        if not pairs:
            result[key] = None
            result["reasons"][key] = "no pairs"
            continue
        value = statistics.finite(statistic(a, b)) if len(a) >= 2 else None
        result[key] = value
        if value is None:
            result["reasons"][key] = _undefined_reason(key, a, b)
    for key in WITH_CI:
        ci_key = f"{key}_ci"
        if result[key] is None:
            result[ci_key] = None
            result["reasons"][ci_key] = result["reasons"][key]
            continue
        result[ci_key], reason = bootstrap_ci(
            BOOTSTRAP_STATISTICS[key](a, b), groups, seed=seed, n_resamples=n_resamples
        )
        if reason:
            result["reasons"][ci_key] = reason
    return result


def judge_pairs(judge_scores: dict, ratings) -> tuple[list, dict]:
    """Pair each human rating with the judge's score of the same item.

    ``judge_scores``: generation item id -> judge score (None = unscored);
    ``ratings``: iterable of ``(item_id, rater_id, score)``.
    Returns the pairs ``(judge, human, item_id)`` and the counts of what was left out.
    """
    pairs, unscored_items, unscored_pairs, not_judged = [], set(), 0, 0
    for item_id, _rater, score in ratings:
        if score is None:
            continue
        if item_id not in judge_scores:
            not_judged += 1
            continue
        judged = judge_scores[item_id]
        if judged is None:
            unscored_items.add(item_id)
            unscored_pairs += 1
            continue
        pairs.append((judged, score, item_id))
    return pairs, {
        "n_unscored_items": len(unscored_items),
        "n_unscored_pairs": unscored_pairs,
        "n_not_judged": not_judged,
    }


def expected_agreement(expected_scores: dict, judge_scores: dict, ratings) -> dict:
    """Spearman's rho and Kendall's tau-b of the judge's probability-weighted score with the human
    scores, beside the integer score's on the same pairs (the items with both): does weighting
    the score tokens by their probability rank explanations more like people do?

    ``expected_scores`` and ``judge_scores``: generation item id -> score (None where missing)."""
    pairs = [
        (expected_scores[item], judge_scores[item], score, item)
        for item, _rater, score in ratings
        if score is not None and expected_scores.get(item) is not None and judge_scores.get(item) is not None
    ]
    expected = [p[0] for p in pairs]
    integer = [p[1] for p in pairs]
    human = [p[2] for p in pairs]
    out = {
        "n": len(pairs),
        "n_items": len({p[3] for p in pairs}),
        "mean": mean(expected),
        "reasons": {},
    }
    for key, statistic in (("spearman_rho", rho), ("kendall_tau", tau_b)):
        for prefix, values in (("", expected), ("integer_", integer)):
            name = f"{prefix}{key}"
            value = statistics.finite(statistic(values, human)) if len(pairs) >= 2 else None
            out[name] = value
            if value is None:
                out["reasons"][name] = (
                    "no probability-weighted scores: the judge gave no log-probabilities"
                    if not pairs
                    else _undefined_reason(key, values, human)
                )
    return out


def rater_pairs(ratings) -> list:
    """Inter-rater pairs on the items at least two raters scored: every pair of raters per item,
    the rater with the lower id first."""
    by_item: dict = {}
    for item_id, rater_id, score in ratings:
        if score is not None:
            by_item.setdefault(item_id, {})[rater_id] = score
    pairs = []
    for item_id in sorted(by_item):
        scores = by_item[item_id]
        for first, second in combinations(sorted(scores), 2):
            pairs.append((scores[first], scores[second], item_id))
    return pairs


def self_agreement(repeats: list[dict]) -> dict:
    """Krippendorff's alpha (interval) of repeated judge runs: reliability data is repeats x items,
    NaN where a repeat left an item unscored or did not judge it."""
    items = sorted({item for scores in repeats for item in scores})
    out = {"n_repeats": len(repeats), "n_items": len(items), "alpha": None, "reason": None}
    if len(repeats) < 2:
        out["reason"] = "a single run: repeat it to measure the judge's noise"
        return out
    data = np.array(
        [[np.nan if scores.get(item) is None else float(scores[item]) for item in items] for scores in repeats],
        dtype=float,
    )
    try:
        alpha = statistics.krippendorff_alpha(data, level_of_measurement="interval")
    except (ValueError, ZeroDivisionError) as exc:
        out["reason"] = _alpha_reason(exc)
        return out
    out["alpha"] = statistics.finite(alpha)
    if out["alpha"] is None:
        out["reason"] = "undefined on these scores (no item scored by two repeats, or no variation)"
    return out


def _alpha_reason(exc: Exception) -> str:
    text = str(exc)
    if "more than one value" in text:
        return "every repeat gave every item the same score: no variation to measure"
    return f"undefined: {text}"


def disagreements(judge_scores: dict, ratings, *, limit: int = 20) -> list[dict]:
    """The items where the judge and the mean human score differ most (judge-scored items only)."""
    by_item: dict = {}
    for item_id, rater_id, score in ratings:
        if score is not None:
            by_item.setdefault(item_id, []).append((rater_id, score))
    rows = []
    for item_id, scores in by_item.items():
        judged = judge_scores.get(item_id)
        if judged is None:
            continue
        human_mean = float(np.mean([s for _r, s in scores]))
        rows.append(
            {
                "item": item_id,
                "judge_score": judged,
                "human_mean": human_mean,
                "difference": judged - human_mean,
                "human_scores": [{"rater": r, "score": s} for r, s in sorted(scores)],
            }
        )
    rows.sort(key=lambda row: (-abs(row["difference"]), row["item"]))
    return rows[:limit]
