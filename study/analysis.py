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

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from functools import cache

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
# Draw counts kept per process (Draws): a study of a thousand participants resamples about eight
# sets of participants, 2 MB each, so this keeps two such studies.
DRAW_CACHE_BYTES = 32 * 2**20


def interval_method(*, n_resamples: int = N_RESAMPLES) -> dict:
    """The ``interval_method`` of the results: every interval is a percentile bootstrap over participants."""
    return {
        **statistics.interval_method(unit=RESAMPLED_UNIT, n_resamples=n_resamples, confidence=CONFIDENCE),
        "bootstrapped": list(BOOTSTRAPPED),
    }


@cache
def _blas():
    # threadpoolctl comes with scikit-learn (core.statistics); one controller per process, as
    # finding the loaded BLAS libraries takes milliseconds and limiting them afterwards does not.
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_thread():
    """A context in which numpy's BLAS runs on the calling thread only.

    The bootstrap's products are a few million multiplications each: handing them to a thread
    per core costs more than it saves, and on a busy server (other workers, the database) the
    waiting threads make every product several times slower.
    """
    return _blas().limit(limits=1, user_api="blas")


class Draws:
    """The bootstrap's draws, made once per number of participants and shared by every figure of one
    computation that resamples that many.

    They are ``core.statistics.bootstrap_distribution``'s draws (``default_rng(seed).integers(0, n,
    (resamples, n))``, counted per participant): with ``n`` participants in sorted order of their ids,
    every figure gets the interval it would get alone, and the study's results, whose figures
    mostly resample the same few hundred participants, draw each set of ``n`` once instead of once
    per figure.

    The counts depend on nothing but ``n``, the resamples and the seed, so the process keeps the
    last ones made (``DRAW_CACHE_BYTES`` of them, as small integers): a new answer in a running
    study leaves the numbers of participants as they were, and its results draw nothing again.
    """

    _kept: "OrderedDict[tuple, np.ndarray]" = OrderedDict()
    _lock = threading.Lock()

    def __init__(self, *, n_resamples: int = N_RESAMPLES, seed: int = SEED):
        self.n_resamples = n_resamples
        self.seed = seed
        self._counts: dict[int, np.ndarray] = {}

    def counts(self, n: int) -> np.ndarray:
        """resamples x n: how many times each resample drew each of the n participants."""
        if n not in self._counts:
            self._counts[n] = self._kept_counts(n).astype(float)
        return self._counts[n]

    def _kept_counts(self, n: int) -> np.ndarray:
        key = (n, self.n_resamples, self.seed)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        rng = np.random.default_rng(self.seed)
        # int32 draws are the int64 ones (numpy draws both from 32 bits below 2**32), made faster.
        counts = statistics.draw_counts(rng.integers(0, n, (self.n_resamples, n), dtype=np.int32), n)
        counts = counts.astype(np.uint8 if counts.max(initial=0) <= np.iinfo(np.uint8).max else np.uint32)
        with self._lock:
            self._kept[key] = counts
            while sum(kept.nbytes for kept in self._kept.values()) > DRAW_CACHE_BYTES and len(self._kept) > 1:
                self._kept.popitem(last=False)
        return counts

    @classmethod
    def forget(cls) -> None:
        """Drop the draws this process keeps (a benchmark's cold start)."""
        with cls._lock:
            cls._kept.clear()

    def interval(self, distribution: np.ndarray, *, min_defined: float = 1.0) -> list[float | None]:
        interval = statistics.percentile_interval(distribution, confidence=CONFIDENCE, min_defined=min_defined)
        return [statistics.finite(interval.low), statistics.finite(interval.high)]


def shares(
    figures: Sequence[tuple[Sequence[bool], Sequence]],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    draws: Draws | None = None,
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
    counted = []
    for successes, participants in figures:
        hits = np.asarray(successes, dtype=bool).ravel()
        ids, of_row = np.unique(np.asarray(participants), return_inverse=True)
        of_row = of_row.ravel()
        if hits.shape != of_row.shape:
            raise ValueError(f"{hits.size} successes for {of_row.size} participants")
        counted.append((ids, np.bincount(of_row, hits, ids.size), np.bincount(of_row, minlength=ids.size)))
    return shares_counted(counted, draws=draws or Draws(n_resamples=n_resamples, seed=seed))


def shares_counted(figures: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], *, draws: Draws) -> list[dict]:
    """``shares`` of figures already counted per participant: ``(ids, successes, rows)``, the ids
    sorted and distinct, each with its successes and rows (at least one). The same figures as
    ``shares`` gives for those rows, to the last bit: every sum is of whole numbers."""
    results: list[dict] = []
    # The figures over each set of participants: (index, successes and rows per participant).
    by_participants: dict[tuple, list] = defaultdict(list)
    for index, (ids, hits, rows) in enumerate(figures):
        n, k = int(np.sum(rows)), int(np.sum(hits))
        results.append({"rate": statistics.finite(k / n) if n else None, "ci": [None, None], "n": n, "k": k})
        if len(ids) >= MIN_PARTICIPANTS:
            by_participants[tuple(np.asarray(ids).tolist())].append((index, hits, rows))
    for ids, members in by_participants.items():
        successes = np.column_stack([hits for _, hits, _ in members]).astype(float)
        rows = np.column_stack([count for _, _, count in members]).astype(float)
        weights = draws.counts(len(ids))
        # Every participant here gave rows to every figure, so no resample divides by zero.
        distribution = (weights @ successes) / (weights @ rows)
        for column, (index, _, _) in enumerate(members):
            results[index]["ci"] = draws.interval(distribution[:, column])
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
    draws: Draws | None = None,
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
    ids, participant_of_row = np.unique(participants, return_inverse=True)
    if ids.size < MIN_PARTICIPANTS:
        return {"tau": tau, "ci": [None, None], "n": n, "p_value": statistics.finite(p_value)}
    # A resample's tau depends only on how often it drew each distinct (x, y) pair, so each
    # participant's pairs are counted per cell once and the draws (resamples x participants) are
    # multiplied by that table: the weights of ``kendall_tau_weighted`` for the distinct pairs,
    # the same whole numbers as drawing every row, without a resamples x rows matrix.
    cells, cell_of_row = np.unique(np.column_stack([xs, ys]), axis=0, return_inverse=True)
    per_participant = np.zeros((ids.size, len(cells)))
    np.add.at(per_participant, (participant_of_row.ravel(), cell_of_row.ravel()), 1)
    draws = draws or Draws(n_resamples=n_resamples, seed=seed)
    cell_weights = draws.counts(ids.size) @ per_participant
    distribution = statistics.kendall_tau_weighted(cells[:, 0], cells[:, 1], cell_weights)
    return {
        "tau": tau,
        "ci": draws.interval(distribution, min_defined=0),
        "n": n,
        "p_value": statistics.finite(p_value),
    }
