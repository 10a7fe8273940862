"""The statistics every report shares: agreement coefficients, Wilson intervals and one bootstrap.

Point estimates come from the libraries the field trusts: Cohen's kappa from scikit-learn,
Fleiss' kappa and Wilson intervals from statsmodels, Krippendorff's alpha from ``krippendorff``,
Kendall's tau-b from scipy.

A bootstrap interval needs the statistic on thousands of resamples, and calling those libraries
that often would take seconds on every report. So the bootstrap hands the statistic a matrix of
*weights*, how many times each resample drew each row (resamples x rows), and the ``*_weighted``
coefficients below compute every resample at once from per-row contributions (a confusion
matrix, Krippendorff's coincidences, Fleiss' category counts, Kendall's concordant pairs).
tests/core/test_statistics.py proves they equal the libraries on random resamples. Cohen's,
Fleiss' and Krippendorff's coefficients depend on a resample only through a few sums over the rows
it drew, so they also come as ``LinearStatistic``: the bootstrap multiplies the weights by the sums
of every such figure side by side, once per batch, instead of once per figure.

Cohen's kappa is also wanted per annotator pair, per drift window, per annotator against the final
labels: ``stacked_confusions`` counts every group's confusion matrix in one ``bincount`` and
``cohen_kappa_from_confusion`` takes scikit-learn's arithmetic to all of them at once.

``bootstrap_interval`` resamples rows, or whole clusters of rows (an item with all its ratings, a
participant with all their answers), optionally within strata (two groups resampled each on
its own). It draws exactly what ``scipy.stats.bootstrap`` draws from the same seed, so with one
row per cluster its percentile intervals equal scipy's.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# scipy (scipy.sparse too: 0.13 s of CPU), scikit-learn, statsmodels and krippendorff are imported where
# they are used: the admin loads this module in every process that starts Django (core/warmup.py says
# what that cost).

CONFIDENCE = 0.95
# The statistic sees at most this many weights at once (resamples x rows), about 32 MB.
BATCH_CELLS = 4_000_000


def finite(value) -> float | None:
    """A plain float for JSON, or None for anything undefined (None, NaN, inf)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


# --- Library point estimates -------------------------------------------------------------------


def cohen_kappa(first, second, *, labels: Sequence, weights: str | None = None) -> float:
    """scikit-learn's Cohen's kappa over every one of ``labels``; NaN where undefined."""
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            cohen_kappa_score(first, second, labels=list(labels), weights=weights, replace_undefined_by=np.nan)
        )


def fleiss_kappa(codes: np.ndarray, n_categories: int) -> float:
    """statsmodels' Fleiss' kappa of items x raters category indices; NaN where undefined.

    The items x categories table is ``aggregate_raters``' (with ``n_cat``), counted without its loop
    over the items, which took longer than the coefficient on a few thousand items.
    """
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

    table = category_counts(codes, n_categories).astype(int)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        return float(statsmodels_fleiss_kappa(table, method="fleiss"))


def krippendorff_alpha(reliability_data, *, level_of_measurement: str, value_domain: Sequence | None = None) -> float:
    """``krippendorff.alpha`` of raters x units with NaN for missing; NaN where undefined.

    Raises the library's ValueError when the data hold a single value.
    """
    import krippendorff

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        return float(
            krippendorff.alpha(
                reliability_data=reliability_data,
                value_domain=None if value_domain is None else list(value_domain),
                level_of_measurement=level_of_measurement,
            )
        )


def kendall_tau(x, y) -> tuple[float, float]:
    """scipy's Kendall's tau-b and its p-value; NaN where undefined (a constant side)."""
    from scipy import stats as scipy_stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = scipy_stats.kendalltau(x, y, variant="b")
    return float(result.statistic), float(result.pvalue)


def wilson_interval(successes: int, n: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """statsmodels' Wilson score interval of ``successes`` out of ``n`` (n > 0).

    Wilson rather than the normal approximation: rates near 0 or 1 over a few dozen answers are
    common, and the normal interval leaves [0, 1] there.
    """
    from statsmodels.stats.proportion import proportion_confint

    # 1 - 0.95 is 0.050000000000000044 in binary: round it so 95% is statsmodels' alpha=0.05 exactly.
    low, high = proportion_confint(successes, n, alpha=round(1 - confidence, 12), method="wilson")
    return float(low), float(high)


# --- Vectorised coefficients: one value per row of a weights matrix -----------------------------


def draw_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """resamples x n: how many times each resample (a row of ``indices``) drew each of 0..n-1."""
    flat = np.asarray(indices, dtype=np.intp).reshape(-1, np.shape(indices)[-1])
    counts = np.empty((flat.shape[0], n))
    # A few resamples at a time, so the counts being written stay in the cache: twice as fast as
    # one bincount over every resample (the draws are half of a bootstrap's time on large data).
    block = max(1, 65_536 // max(1, n))
    for start in range(0, flat.shape[0], block):
        part = flat[start : start + block]
        offsets = (np.arange(part.shape[0])[:, None] * n + part).ravel()
        counts[start : start + block] = np.bincount(offsets, minlength=part.shape[0] * n).reshape(part.shape[0], n)
    return counts


def sum_by(weights: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """resamples x n_groups: the weights of the rows of each group (``groups`` gives each row's), added."""
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    groups = np.asarray(groups, dtype=np.intp)
    from scipy import sparse

    # A sparse rows x groups indicator: one pass over the weights, however many groups.
    indicator = sparse.csr_matrix(
        (np.ones(groups.size), (groups, np.arange(groups.size))), shape=(n_groups, groups.size)
    )
    return np.asarray((indicator @ weights.T).T)


def pair_one_hot(first, second, n_categories: int) -> np.ndarray:
    """rows x k*k: each row's (first, second) category pair, one-hot (categories 0..k-1)."""
    first = np.asarray(first, dtype=np.intp)
    onehot = np.zeros((len(first), n_categories * n_categories))
    onehot[np.arange(len(first)), first * n_categories + np.asarray(second, dtype=np.intp)] = 1
    return onehot


def kappa_from_confusion(confusion: np.ndarray) -> np.ndarray:
    """Unweighted Cohen's kappa of (..., k, k) confusion counts, as scikit-learn computes it; NaN where undefined."""
    confusion = np.asarray(confusion, dtype=float)
    total = confusion.sum(axis=(-2, -1))
    rows, cols = confusion.sum(axis=-1), confusion.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_disagreement = total - (rows * cols).sum(axis=-1) / total
        observed_disagreement = total - np.trace(confusion, axis1=-2, axis2=-1)
        kappa = 1 - observed_disagreement / expected_disagreement
    return np.where((total > 0) & (expected_disagreement > 0), kappa, np.nan)


def stacked_confusions(groups, first, second, *, n_groups: int, n_categories: int) -> np.ndarray:
    """(n_groups, k, k) counts: matrix g counts the (first, second) category pairs of the rows in group g.

    One ``bincount`` over every group at once (each row's cell offset by its group's k*k block), so a
    thousand pairs or windows cost about what one does. Categories are 0..k-1, groups 0..n_groups-1.
    """
    k = int(n_categories)
    cells = (np.asarray(groups, dtype=np.intp) * k + np.asarray(first, dtype=np.intp)) * k + np.asarray(
        second, dtype=np.intp
    )
    return np.bincount(cells.ravel(), minlength=int(n_groups) * k * k).reshape(int(n_groups), k, k)


def cohen_kappa_from_confusion(confusions: np.ndarray) -> np.ndarray:
    """Unweighted Cohen's kappa of each of a stack of (..., k, k) confusion matrices; NaN where undefined.

    The operations of scikit-learn's ``cohen_kappa_score(y1, y2, labels=range(k))`` on its own
    confusion matrix (expected counts from the outer product of the marginals, kappa = 1 - the
    observed over the expected off-diagonal counts), so the values agree to the last bits, and it is
    undefined where scikit-learn's is: no pair, or both sides in one same category. (The bootstrap's
    ``kappa_from_confusion`` rearranges the same formula and agrees to about 1e-15.)
    """
    confusions = np.asarray(confusions, dtype=float)
    k = confusions.shape[-1]
    columns = confusions.sum(axis=-2)
    rows = confusions.sum(axis=-1)
    total = columns.sum(axis=-1)
    off_diagonal = 1.0 - np.eye(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = columns[..., :, None] * rows[..., None, :] / total[..., None, None]
        observed_disagreement = (off_diagonal * confusions).sum(axis=(-2, -1))
        expected_disagreement = (off_diagonal * expected).sum(axis=(-2, -1))
        kappa = 1 - observed_disagreement / expected_disagreement
    # scikit-learn tests the expected disagreement for exact zero too: a sum of non-negative terms.
    return np.where((total > 0) & (expected_disagreement != 0), kappa, np.nan)


@dataclass(frozen=True, eq=False)
class LinearStatistic:
    """A coefficient that depends on the weights (resamples x rows) only through ``weights @ sums``:
    ``finish`` turns those resamples x m sums into one value per resample. Called with weights it
    computes that; ``bootstrap_intervals`` stacks the sums of several such statistics and multiplies
    once (a matrix product is far cheaper than as many products as there are figures)."""

    sums: np.ndarray
    finish: Callable[[np.ndarray], np.ndarray]

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        return self.finish(np.atleast_2d(weights) @ self.sums)


def cohen_kappa_linear(first, second, n_categories: int) -> LinearStatistic:
    """Unweighted Cohen's kappa of the rows' (first, second) categories, as ``cohen_kappa_weighted``
    computes it: each row adds to a row sum, a column sum and, when both agree, the trace."""
    k = int(n_categories)
    first, second = np.asarray(first, dtype=np.intp), np.asarray(second, dtype=np.intp)
    sums = np.zeros((first.size, 2 * k + 1))
    rows = np.arange(first.size)
    sums[rows, first] = 1
    sums[rows, k + second] = 1
    sums[:, 2 * k] = first == second

    def finish(totals):
        rows, cols, trace = totals[:, :k], totals[:, k : 2 * k], totals[:, 2 * k]
        total = rows.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected_disagreement = total - (rows * cols).sum(axis=-1) / total
            kappa = 1 - (total - trace) / expected_disagreement
        return np.where((total > 0) & (expected_disagreement > 0), kappa, np.nan)

    return LinearStatistic(sums, finish)


def fleiss_kappa_linear(codes: np.ndarray, n_categories: int) -> LinearStatistic:
    """Fleiss' kappa of items x raters category indices (the same number of raters per item), as
    ``fleiss_kappa_weighted`` computes it: per item a one (to count the items drawn), its observed
    agreement and its category counts."""
    counts = category_counts(codes, n_categories)
    raters = np.asarray(codes).shape[1]
    agreement = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))

    def finish(totals):
        n = totals[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            p_mean = totals[:, 1] / n
            p_category = totals[:, 2:] / (n * raters)[:, None]
            p_expected = (p_category**2).sum(axis=1)
            kappa = (p_mean - p_expected) / (1 - p_expected)
        return np.where(p_expected < 1, kappa, np.nan)

    return LinearStatistic(np.column_stack([np.ones(len(counts)), agreement, counts]), finish)


def krippendorff_alpha_linear(ratings: np.ndarray, n_categories: int) -> LinearStatistic:
    """Nominal Krippendorff's alpha of raters x units (NaN for missing), as ``krippendorff_alpha_weighted``
    computes it: of a unit's coincidences only the row sums (its category counts, when it has two
    ratings or more) and the diagonal's total are needed."""
    k = int(n_categories)
    counts = np.zeros((ratings.shape[1], k))
    for row in ratings:
        rated = ~np.isnan(row)
        counts[np.flatnonzero(rated), row[rated].astype(np.intp)] += 1
    m = counts.sum(axis=1)
    pairable = m >= 2
    sums = np.zeros((ratings.shape[1], k + 1))
    sums[pairable, :k] = counts[pairable]
    sums[pairable, k] = (counts[pairable] * (counts[pairable] - 1)).sum(axis=1) / (m[pairable] - 1)

    def finish(totals):
        n_c = totals[:, :k]
        n = n_c.sum(axis=1)
        expected = n**2 - (n_c**2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = 1 - (n - 1) * (n - totals[:, k]) / expected
        return np.where(expected > 0, alpha, np.nan)

    return LinearStatistic(sums, finish)


def cohen_kappa_weighted(onehot: np.ndarray, weights: np.ndarray, n_categories: int) -> np.ndarray:
    """Unweighted Cohen's kappa per row of ``weights``, the rows' pairs given by ``pair_one_hot``."""
    return kappa_from_confusion((np.atleast_2d(weights) @ onehot).reshape(-1, n_categories, n_categories))


def category_counts(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """items x k: how many raters put each item in each category (statsmodels' aggregate_raters table)."""
    codes = np.asarray(codes, dtype=np.intp)
    counts = np.zeros((codes.shape[0], n_categories))
    for column in codes.T:
        counts[np.arange(codes.shape[0]), column] += 1
    return counts


def fleiss_kappa_weighted(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fleiss' kappa per row of ``weights``, from the items x k count table (the same number of raters per item)."""
    weights = np.atleast_2d(weights)
    raters = counts[0].sum()
    agreement = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    n = weights.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_mean = weights @ agreement / n
        p_category = (weights @ counts) / (n * raters)[:, None]
        p_expected = (p_category**2).sum(axis=1)
        kappa = (p_mean - p_expected) / (1 - p_expected)
    return np.where(p_expected < 1, kappa, np.nan)


def coincidences(ratings: np.ndarray, n_categories: int) -> np.ndarray:
    """units x k*k: each unit's contribution to Krippendorff's coincidence matrix, from raters x units
    category indices with NaN for missing (zero for units with fewer than two ratings: not pairable)."""
    counts = np.zeros((ratings.shape[1], n_categories))
    for row in ratings:
        rated = ~np.isnan(row)
        counts[np.flatnonzero(rated), row[rated].astype(np.intp)] += 1
    m = counts.sum(axis=1)
    pairable = m >= 2
    outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(n_categories)[None]
    contribution = np.zeros_like(outer)
    contribution[pairable] = outer[pairable] / (m[pairable] - 1)[:, None, None]
    return contribution.reshape(ratings.shape[1], -1)


def alpha_from_coincidences(observed: np.ndarray, n_categories: int) -> np.ndarray:
    """Nominal Krippendorff's alpha of (..., k*k) coincidence matrices; NaN where undefined."""
    observed = np.asarray(observed, dtype=float).reshape(-1, n_categories, n_categories)
    n_c = observed.sum(axis=2)
    n = n_c.sum(axis=1)
    disagreement = observed.sum(axis=(1, 2)) - np.trace(observed, axis1=1, axis2=2)
    expected = n**2 - (n_c**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (n - 1) * disagreement / expected
    return np.where(expected > 0, alpha, np.nan)


def krippendorff_alpha_weighted(contributions: np.ndarray, weights: np.ndarray, n_categories: int) -> np.ndarray:
    """Nominal Krippendorff's alpha per row of ``weights``, the units' contributions given by ``coincidences``."""
    return alpha_from_coincidences(np.atleast_2d(weights) @ contributions, n_categories)


def kendall_tau_weighted(x, y, weights: np.ndarray) -> np.ndarray:
    """Kendall's tau-b per row of ``weights``: scipy's tau-b of the rows repeated as often as weighted.

    A row drawn twice is two observations tied on both sides, as in the resample itself. Rows
    with equal (x, y) are merged first, so the work grows with the distinct pairs, not the rows.
    """
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    x_rank = np.unique(np.asarray(x, dtype=float), return_inverse=True)[1].ravel()
    y_rank = np.unique(np.asarray(y, dtype=float), return_inverse=True)[1].ravel()
    cells, cell_of_row = np.unique(np.column_stack([x_rank, y_rank]), axis=0, return_inverse=True)
    cell_weights = sum_by(weights, cell_of_row.ravel(), len(cells))
    x_weights = sum_by(cell_weights, cells[:, 0], int(x_rank.max(initial=-1)) + 1)
    y_weights = sum_by(cell_weights, cells[:, 1], int(y_rank.max(initial=-1)) + 1)
    # Concordant minus discordant pairs: sum over cell pairs of w_i w_j sign(dx) sign(dy), in column blocks.
    con_minus_dis = np.zeros(weights.shape[0])
    block = max(1, BATCH_CELLS // max(1, len(cells)))
    for start in range(0, len(cells), block):
        part = cells[start : start + block]
        sign = np.sign(cells[:, None, 0] - part[None, :, 0]) * np.sign(cells[:, None, 1] - part[None, :, 1])
        con_minus_dis += ((cell_weights @ sign) * cell_weights[:, start : start + block]).sum(axis=1)
    con_minus_dis /= 2
    total = weights.sum(axis=1)
    pairs = total * (total - 1) / 2
    x_untied = pairs - (x_weights * (x_weights - 1)).sum(axis=1) / 2
    y_untied = pairs - (y_weights * (y_weights - 1)).sum(axis=1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = con_minus_dis / np.sqrt(x_untied) / np.sqrt(y_untied)
    return np.where((x_untied > 0) & (y_untied > 0), np.clip(tau, -1, 1), np.nan)


# --- The bootstrap ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval, or ``low = high = None`` when too few resamples were defined."""

    low: float | None
    high: float | None
    n_resamples: int
    n_undefined: int

    @property
    def defined(self) -> bool:
        return self.low is not None

    def pair(self) -> list[float | None]:
        return [self.low, self.high]


def _cluster_layout(n_rows: int, clusters, strata) -> tuple[np.ndarray, list[np.ndarray], int]:
    """Each row's cluster index (clusters in sorted order of their ids), the cluster indices of each
    stratum (strata in sorted order), and the number of clusters."""
    if n_rows < 1:
        raise ValueError("nothing to resample")
    if clusters is None:
        cluster_of_row = np.arange(n_rows)
    else:
        ids = np.asarray(clusters)
        if ids.shape != (n_rows,):
            raise ValueError(f"clusters gives {ids.size} ids for {n_rows} rows")
        cluster_of_row = np.unique(ids, return_inverse=True)[1].ravel()
    n_clusters = int(cluster_of_row.max(initial=-1)) + 1
    if strata is None:
        return cluster_of_row, [np.arange(n_clusters)], n_clusters
    strata = np.asarray(strata)
    if strata.shape != (n_rows,):
        raise ValueError(f"strata gives {strata.size} ids for {n_rows} rows")
    stratum_of_row = np.unique(strata, return_inverse=True)[1].ravel()
    stratum_of_cluster = np.full(n_clusters, -1)
    stratum_of_cluster[cluster_of_row] = stratum_of_row
    if (stratum_of_cluster[cluster_of_row] != stratum_of_row).any():
        raise ValueError("a cluster spans two strata")
    return (
        cluster_of_row,
        [np.flatnonzero(stratum_of_cluster == s) for s in range(stratum_of_row.max() + 1)],
        n_clusters,
    )


def bootstrap_distribution(
    *,
    statistic: Callable[[np.ndarray], np.ndarray],
    n_rows: int,
    clusters: Sequence | np.ndarray | None = None,
    strata: Sequence | np.ndarray | None = None,
    n_resamples: int,
    seed: int,
) -> np.ndarray:
    """The statistic on ``n_resamples`` bootstrap resamples: shape (..., n_resamples).

    ``statistic`` maps a resamples x rows weights matrix (how many times each resample drew each
    row) to one value per resample, or to (k, resamples) for k figures computed on the same resamples.

    ``clusters`` gives each row's cluster id (an item, a participant, a rater): a resample draws
    as many whole clusters as there are, with replacement, and a drawn cluster brings all its rows.
    None: every row is its own cluster. ``strata`` gives each row's stratum: clusters are drawn
    within each stratum, keeping its size (a cluster must lie in one stratum). The draws are
    ``scipy.stats.bootstrap``'s: for each stratum in sorted order, ``integers(0, clusters in it,
    (n_resamples, clusters in it))`` from ``numpy.random.default_rng(seed)``.
    """
    cluster_of_row, by_stratum, n_clusters = _cluster_layout(n_rows, clusters, strata)
    rng = np.random.default_rng(seed)
    if len(by_stratum) == 1:
        counts = draw_counts(rng.integers(0, n_clusters, (n_resamples, n_clusters)), n_clusters)
    else:
        # Every cluster lies in one stratum, so every column is written below.
        counts = np.empty((n_resamples, n_clusters))
        for members in by_stratum:
            draws = rng.integers(0, members.size, (n_resamples, members.size))
            # Strata usually come as consecutive runs of rows: a slice writes them without a gather.
            consecutive = members[-1] - members[0] + 1 == members.size
            counts[:, slice(members[0], members[-1] + 1) if consecutive else members] = draw_counts(draws, members.size)
    if clusters is None:
        # Every row is its own cluster, in row order: the counts are the row weights already.
        cluster_of_row = slice(None)
    batch = max(1, BATCH_CELLS // max(1, n_rows))
    values = [
        np.asarray(statistic(counts[start : start + batch][:, cluster_of_row]), dtype=float)
        for start in range(0, n_resamples, batch)
    ]
    return np.concatenate(values, axis=-1)


def percentile_interval(
    distribution: np.ndarray, *, confidence: float = CONFIDENCE, min_defined: float = 1.0
) -> Interval:
    """The percentile interval of one bootstrap distribution (linear interpolation, as scipy's).

    Resamples where the statistic is undefined (NaN) are left out as long as at least
    ``min_defined`` of them (a share) are defined; below that, or with none defined, no interval.
    """
    distribution = np.asarray(distribution, dtype=float).ravel()
    defined = distribution[np.isfinite(distribution)]
    n_undefined = int(distribution.size - defined.size)
    if defined.size == 0 or defined.size < min_defined * distribution.size:
        return Interval(None, None, int(distribution.size), n_undefined)
    tail = (1 - confidence) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return Interval(float(low), float(high), int(distribution.size), n_undefined)


def bootstrap_intervals(
    *,
    statistics: Sequence[Callable[[np.ndarray], np.ndarray]],
    n_rows: int,
    clusters: Sequence | np.ndarray | None = None,
    strata: Sequence | np.ndarray | None = None,
    n_resamples: int,
    confidence: float = CONFIDENCE,
    seed: int,
    min_defined: float = 1.0,
) -> list[Interval]:
    """Percentile intervals of several figures computed on the same resamples (see ``bootstrap_distribution``).

    Each statistic returns (resamples,) for one figure or (k, resamples) for k figures; one
    interval per figure, in order.
    """

    # Every linear statistic from one product per batch: their sums side by side.
    linear = [i for i, statistic in enumerate(statistics) if isinstance(statistic, LinearStatistic)]
    widths = np.cumsum([0, *(statistics[i].sums.shape[1] for i in linear)])
    columns = {i: slice(start, end) for i, (start, end) in zip(linear, itertools.pairwise(widths), strict=True)}
    stacked = np.column_stack([statistics[i].sums for i in linear]) if linear else None

    def all_of(weights):
        totals = weights @ stacked if linear else None
        values = [
            statistic.finish(totals[:, columns[i]]) if i in columns else statistic(weights)
            for i, statistic in enumerate(statistics)
        ]
        return np.concatenate([np.atleast_2d(np.asarray(value, dtype=float)) for value in values])

    distribution = bootstrap_distribution(
        statistic=all_of, n_rows=n_rows, clusters=clusters, strata=strata, n_resamples=n_resamples, seed=seed
    )
    return [percentile_interval(row, confidence=confidence, min_defined=min_defined) for row in distribution]


def bootstrap_interval(
    *,
    statistic: Callable[[np.ndarray], np.ndarray],
    n_rows: int,
    clusters: Sequence | np.ndarray | None = None,
    strata: Sequence | np.ndarray | None = None,
    n_resamples: int = 2000,
    confidence: float = CONFIDENCE,
    seed: int = 0,
    min_defined: float = 1.0,
) -> Interval:
    """The percentile bootstrap interval of one statistic of the weights; see ``bootstrap_distribution``.

    Resample the unit that is independent: rows only when every row is; items when an item
    brings several ratings; participants when a participant gives several answers.
    """
    return bootstrap_intervals(
        statistics=[statistic],
        n_rows=n_rows,
        clusters=clusters,
        strata=strata,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        min_defined=min_defined,
    )[0]


def interval_method(*, unit: str, n_resamples: int, confidence: float = CONFIDENCE) -> dict:
    """What a report's bootstrap intervals resampled, for its JSON (``interval_method``) and its page."""
    return {"bootstrap": unit, "resamples": int(n_resamples), "confidence": float(confidence), "method": "percentile"}
