"""The statistics of the artwork preference study (Pragmatics Meets Culture, §6.2 and A.2).

Pure functions on plain lists: no ORM, so the selectors decide which rows count and these
only compute, through core.statistics. Every figure that cannot be computed (no rows, a
constant column) is None, never NaN, so the results stay valid JSON. Figures keep their full
precision: the page rounds them, the JSON and the API do not.

Kendall's tau gets a percentile bootstrap interval that resamples *participants*: a participant
gives a row per artwork, and rows of one person are not independent, so resampling rows would
make the interval too narrow. Rates and accuracies keep Wilson intervals over their answers.
"""

from collections.abc import Sequence

import numpy as np

from core import statistics

CONFIDENCE = statistics.CONFIDENCE
N_RESAMPLES = 2000
SEED = 20240601
# What the bootstrap draws, each with all of their rows, as the results say.
RESAMPLED_UNIT = "participants"


def interval_method(*, n_resamples: int = N_RESAMPLES) -> dict:
    """The ``interval_method`` of the results: which intervals are bootstrapped, over what."""
    return {
        **statistics.interval_method(unit=RESAMPLED_UNIT, n_resamples=n_resamples, confidence=CONFIDENCE),
        "bootstrapped": ["kendall"],
        "rates": "wilson",
    }


def proportion(successes: int, n: int) -> dict:
    """``{"rate", "ci": [lo, hi], "n", "k"}``: a share with its 95% Wilson interval."""
    if n <= 0:
        return {"rate": None, "ci": [None, None], "n": 0, "k": 0}
    low, high = statistics.wilson_interval(successes, n, confidence=CONFIDENCE)
    return {
        "rate": statistics.finite(successes / n),
        "ci": [statistics.finite(low), statistics.finite(high)],
        "n": int(n),
        "k": int(successes),
    }


def accuracy(correct: Sequence[bool]) -> dict:
    """``{"mean", "ci", "n"}``: the share of correct answers with its Wilson interval."""
    values = [bool(value) for value in correct]
    share = proportion(sum(values), len(values))
    return {"mean": share["rate"], "ci": share["ci"], "n": share["n"]}


def _is_constant(values: np.ndarray) -> bool:
    return values.size == 0 or bool(np.all(values == values[0]))


def kendall(
    x: Sequence[float],
    y: Sequence[float],
    *,
    clusters: Sequence | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> dict:
    """Kendall's tau-b of paired values with a 95% percentile bootstrap interval.

    ``clusters`` gives each pair's participant: a resample draws participants with all their
    pairs. Without it every pair is its own participant. ``{"tau", "ci": [lo, hi], "n",
    "p_value"}``; all None (n kept) when there are fewer than three pairs or either side is
    constant, since tau is undefined there. Resamples that happen to be constant are left out.
    """
    clusters = list(range(len(x))) if clusters is None else list(clusters)
    kept = [
        (float(a), float(b), cluster)
        for a, b, cluster in zip(x, y, clusters, strict=True)
        if a is not None and b is not None
    ]
    n = len(kept)
    empty = {"tau": None, "ci": [None, None], "n": n, "p_value": None}
    if n < 3:
        return empty
    xs = np.array([a for a, _, _ in kept])
    ys = np.array([b for _, b, _ in kept])
    if _is_constant(xs) or _is_constant(ys):
        return empty
    tau, p_value = statistics.kendall_tau(xs, ys)
    if statistics.finite(tau) is None:
        return empty
    interval = statistics.bootstrap_interval(
        statistic=lambda weights: statistics.kendall_tau_weighted(xs, ys, weights),
        n_rows=n,
        clusters=np.array([cluster for _, _, cluster in kept]),
        n_resamples=n_resamples,
        confidence=CONFIDENCE,
        seed=seed,
        min_defined=0,
    )
    return {"tau": tau, "ci": interval.pair(), "n": n, "p_value": statistics.finite(p_value)}
