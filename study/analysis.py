"""The statistics of the artwork preference study (Pragmatics Meets Culture, §6.2 and A.2).

Pure functions on plain lists: no ORM, so the selectors decide which rows count and these
only compute, through core.statistics. Every figure that cannot be computed (no rows, a
constant column) is None, never NaN, so the results stay valid JSON. Figures keep their full
precision: the page rounds them, the JSON and the API do not.

Every interval is a percentile bootstrap that resamples *participants*: a participant gives
many rows (a choice per artwork and question, several answers per artwork), and rows of one
person are not independent, so an interval over rows (Wilson's, or a bootstrap of rows) would
be too narrow. A resample draws as many participants as the figure has, with replacement,
each bringing all of their rows.
"""

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from core import statistics

CONFIDENCE = statistics.CONFIDENCE
N_RESAMPLES = 2000
SEED = 20240601
# What the bootstrap draws, each with all of their rows, as the results say.
RESAMPLED_UNIT = "participants"
# Every section of the results with intervals; all of them resample participants.
BOOTSTRAPPED = ["preferences", "position_bias", "qa_accuracy", "qc_accuracy", "kendall"]
# Resampling a single person shows nothing of how people vary: the interval would be a point.
MIN_PARTICIPANTS = 2


def interval_method(*, n_resamples: int = N_RESAMPLES) -> dict:
    """The ``interval_method`` of the results: every interval is a percentile bootstrap over participants."""
    return {
        **statistics.interval_method(unit=RESAMPLED_UNIT, n_resamples=n_resamples, confidence=CONFIDENCE),
        "bootstrapped": list(BOOTSTRAPPED),
    }


def shares(
    figures: Sequence[tuple[Sequence[bool], Sequence]], *, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> list[dict]:
    """Shares of answers, each ``{"rate", "ci": [lo, hi], "n", "k"}`` with a 95% percentile
    bootstrap interval over participants.

    A figure is ``(successes, participants)``: an entry per answer row, whether it is a success
    and who gave it. A resample draws the figure's participants with replacement and its share
    is their successes over their rows (a ratio: someone who gave more rows weighs more, as in
    the share itself). The draws are ``core.statistics.bootstrap_interval``'s with ``seed`` and
    the participants in sorted order, so each figure's interval is the one it would get alone;
    figures over the same participants are computed on one set of draws. No rows: all None and
    n = k = 0; rows from fewer than ``MIN_PARTICIPANTS`` participants: the interval is None.
    """
    results: list[dict | None] = [None] * len(figures)
    # The figures over each set of participants: (index, successes and rows per participant).
    by_participants: dict[tuple, list] = defaultdict(list)
    for index, (successes, participants) in enumerate(figures):
        hits = np.asarray(successes, dtype=bool).ravel()
        ids, of_row = np.unique(np.asarray(participants), return_inverse=True)
        if hits.shape != of_row.ravel().shape:
            raise ValueError(f"{hits.size} successes for {of_row.size} participants")
        n, k = int(hits.size), int(hits.sum())
        results[index] = {"rate": statistics.finite(k / n) if n else None, "ci": [None, None], "n": n, "k": k}
        if ids.size >= MIN_PARTICIPANTS:
            of_row = of_row.ravel()
            per_participant = (np.bincount(of_row, hits, ids.size), np.bincount(of_row, minlength=ids.size))
            by_participants[tuple(ids.tolist())].append((index, *per_participant))
    for ids, members in by_participants.items():
        successes = np.column_stack([hits for _, hits, _ in members]).astype(float)
        rows = np.column_stack([count for _, _, count in members]).astype(float)
        intervals = statistics.bootstrap_intervals(
            # Every participant here gave rows to every figure, so no resample divides by zero.
            statistics=[lambda weights, successes=successes, rows=rows: ((weights @ successes) / (weights @ rows)).T],
            n_rows=len(ids),
            clusters=np.asarray(ids),
            n_resamples=n_resamples,
            confidence=CONFIDENCE,
            seed=seed,
        )
        for (index, _, _), interval in zip(members, intervals, strict=True):
            results[index]["ci"] = [statistics.finite(interval.low), statistics.finite(interval.high)]
    return results


def share(successes: Sequence[bool], participants: Sequence, **options) -> dict:
    """One share with its interval over participants; see ``shares``."""
    return shares([(successes, participants)], **options)[0]


def accuracy(correct: Sequence[bool], participants: Sequence, **options) -> dict:
    """``{"mean", "ci", "n"}``: the share of correct answers, its interval over participants."""
    figure = share(correct, participants, **options)
    return {"mean": figure["rate"], "ci": figure["ci"], "n": figure["n"]}


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
    constant, since tau is undefined there; the interval None when the pairs come from fewer
    than ``MIN_PARTICIPANTS`` participants. Resamples that happen to be constant are left out.
    The p-value is scipy's, which takes the pairs as independent.
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
    participants = np.array([cluster for _, _, cluster in kept])
    if np.unique(participants).size < MIN_PARTICIPANTS:
        return {"tau": tau, "ci": [None, None], "n": n, "p_value": statistics.finite(p_value)}
    interval = statistics.bootstrap_interval(
        statistic=lambda weights: statistics.kendall_tau_weighted(xs, ys, weights),
        n_rows=n,
        clusters=participants,
        n_resamples=n_resamples,
        confidence=CONFIDENCE,
        seed=seed,
        min_defined=0,
    )
    return {"tau": tau, "ci": interval.pair(), "n": n, "p_value": statistics.finite(p_value)}
