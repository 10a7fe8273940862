"""The statistics of the artwork preference study (Pragmatics Meets Culture, §6.2 and A.2).

Pure functions on plain lists: no ORM, so the selectors decide which rows count and these
only compute. Every figure that cannot be computed (no rows, a constant column) is None,
never NaN, so the results stay valid JSON.
"""

import math
import warnings
from collections.abc import Sequence

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

DIGITS = 4
CONFIDENCE = 0.95
N_RESAMPLES = 2000
SEED = 20240601


def clean(value, digits: int = DIGITS) -> float | None:
    """A float rounded for reports, or None for a missing or non-finite value."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return round(value, digits)


def proportion(successes: int, n: int) -> dict:
    """``{"rate", "ci": [lo, hi], "n", "k"}``: a share with its 95% Wilson interval.

    Wilson rather than the normal approximation: rates near 0 or 1 with a few dozen
    answers are common here and the normal interval leaves [0, 1] there.
    """
    if n <= 0:
        return {"rate": None, "ci": [None, None], "n": 0, "k": 0}
    low, high = proportion_confint(successes, n, alpha=1 - CONFIDENCE, method="wilson")
    return {"rate": clean(successes / n), "ci": [clean(low), clean(high)], "n": int(n), "k": int(successes)}


def accuracy(correct: Sequence[bool]) -> dict:
    """``{"mean", "ci", "n"}``: the share of correct answers with its Wilson interval."""
    values = [bool(value) for value in correct]
    share = proportion(sum(values), len(values))
    return {"mean": share["rate"], "ci": share["ci"], "n": share["n"]}


def _is_constant(values: np.ndarray) -> bool:
    return values.size == 0 or bool(np.all(values == values[0]))


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    if _is_constant(x) or _is_constant(y):
        return math.nan
    with warnings.catch_warnings():
        # A constant resample is expected now and then; it is dropped, not reported.
        warnings.simplefilter("ignore")
        return float(stats.kendalltau(x, y).statistic)


def kendall(
    x: Sequence[float], y: Sequence[float], *, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> dict:
    """Kendall's tau-b of paired values with a 95% percentile bootstrap interval over rows.

    ``{"tau", "ci": [lo, hi], "n", "p_value"}``; all None (n kept) when there are fewer
    than three pairs or either side is constant, since tau is undefined there.
    """
    pairs = [(float(a), float(b)) for a, b in zip(x, y, strict=True) if a is not None and b is not None]
    n = len(pairs)
    empty = {"tau": None, "ci": [None, None], "n": n, "p_value": None}
    if n < 3:
        return empty
    xs = np.array([a for a, _ in pairs])
    ys = np.array([b for _, b in pairs])
    if _is_constant(xs) or _is_constant(ys):
        return empty
    result = stats.kendalltau(xs, ys)
    tau = float(result.statistic)
    if not math.isfinite(tau):
        return empty
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(n_resamples, n))
    taus = np.array([_tau(xs[rows], ys[rows]) for rows in draws])
    taus = taus[np.isfinite(taus)]
    if taus.size:
        tail = (1 - CONFIDENCE) / 2 * 100
        low, high = np.percentile(taus, [tail, 100 - tail])
        ci = [clean(low), clean(high)]
    else:
        ci = [None, None]
    return {"tau": clean(tau), "ci": ci, "n": n, "p_value": clean(result.pvalue)}
