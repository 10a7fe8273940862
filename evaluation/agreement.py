"""Agreement between scorers on the 0-5 scale (VIVID §4.1.1, Table 1): pure computations, no database.

A *pair* is (a, b, group): two scores of the same generated explanation and
the generation item it belongs to. The judge-versus-human pairs have the judge
as ``a`` and one human rater as ``b``, so an item two raters scored gives two
pairs; the inter-rater pairs have two raters (the lower user id as ``a``).

Every coefficient comes from the library the literature uses, with nothing
reimplemented: Cohen's kappa from scikit-learn with the six labels 0-5 passed
explicitly (unweighted, linear, quadratic), Kendall's tau-b and Spearman's rho
from scipy, percentile bootstrap intervals from ``scipy.stats.bootstrap``
resampling *items* (an item drawn brings all of its pairs), and Krippendorff's
alpha (interval) from ``krippendorff``. A coefficient that is undefined on the
data (no pairs, a constant scorer ...) is ``None`` with a reason, never NaN.
"""

import math
import warnings
from itertools import combinations

import krippendorff
import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score

LABELS = [0, 1, 2, 3, 4, 5]
CONFIDENCE_LEVEL = 0.95
N_RESAMPLES = 1000
SEED = 0
COEFFICIENT_KEYS = (
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "kendall_tau",
    "spearman_rho",
)
KAPPA_WEIGHTS = {"cohen_kappa": None, "cohen_kappa_linear": "linear", "cohen_kappa_quadratic": "quadratic"}


def finite(value) -> float | None:
    """A float for JSON, or None for NaN/inf."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def kappa(a, b, weights=None) -> float:
    """Cohen's kappa with all six labels, NaN where undefined (scikit-learn's own convention)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(a, b, labels=LABELS, weights=weights))


def tau_b(a, b) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.kendalltau(a, b, variant="b").statistic)


def rho(a, b) -> float:
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


def kappa_unweighted_fast(a, b) -> float:
    """scikit-learn's unweighted Cohen's kappa (labels 0-5), written out on the confusion matrix so a
    bootstrap's thousand resamples take milliseconds; the tests check it equals ``cohen_kappa_score``."""
    counts = np.bincount(np.asarray(a, dtype=np.intp) * 6 + np.asarray(b, dtype=np.intp), minlength=36)
    matrix = counts.reshape(6, 6).astype(float)
    expected = np.outer(matrix.sum(axis=1), matrix.sum(axis=0)) / matrix.sum()
    disagree = 1.0 - np.eye(6)
    denominator = np.sum(disagree * expected)
    if denominator == 0:
        return math.nan
    return float(1.0 - np.sum(disagree * matrix) / denominator)


# What the bootstrap resamples compute: the same values, faster where it matters.
BOOTSTRAP_STATISTICS = {"cohen_kappa": kappa_unweighted_fast, "kendall_tau": tau_b}


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


def bootstrap_ci(a, b, groups, statistic, *, seed: int = SEED, n_resamples: int = N_RESAMPLES):
    """95% percentile bootstrap interval of ``statistic(a, b)`` resampling groups (items), with their pairs.

    Returns ``([low, high], None)`` or ``(None, reason)``.
    """
    a, b = np.asarray(a), np.asarray(b)
    group_ids = sorted(set(groups))
    if len(group_ids) < 2:
        return None, "fewer than two items to resample"
    members = {g: [] for g in group_ids}
    for index, group in enumerate(groups):
        members[group].append(index)
    rows = [np.asarray(members[g]) for g in group_ids]

    def on_items(item_indices):
        picked = np.concatenate([rows[int(i)] for i in item_indices])
        return statistic(a[picked], b[picked])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (np.arange(len(group_ids)),),
            on_items,
            n_resamples=n_resamples,
            vectorized=False,
            confidence_level=CONFIDENCE_LEVEL,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    low, high = finite(result.confidence_interval.low), finite(result.confidence_interval.high)
    if low is None or high is None:
        undefined = int(np.sum(~np.isfinite(result.bootstrap_distribution)))
        return None, f"undefined in {undefined} of {n_resamples} resamples"
    return [low, high], None


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
        value = finite(statistic(a, b)) if len(a) >= 2 else None
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
            a, b, groups, BOOTSTRAP_STATISTICS[key], seed=seed, n_resamples=n_resamples
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
    return pairs, {"n_unscored_items": len(unscored_items), "n_unscored_pairs": unscored_pairs, "n_not_judged": not_judged}


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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    except (ValueError, ZeroDivisionError) as exc:
        out["reason"] = _alpha_reason(exc)
        return out
    out["alpha"] = finite(alpha)
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
