"""core.statistics against the reference libraries: the vectorised coefficients equal scikit-learn,
statsmodels, krippendorff and scipy on random resamples; the row bootstrap is scipy.stats.bootstrap's;
the cluster bootstrap reduces to it with one row per cluster, and on clustered data it is wider
and covers the true value at about the nominal rate where the row bootstrap does not."""

import math
import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from core import statistics

# The tests ask the libraries for undefined coefficients on purpose, to check they stay undefined.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")


def mean_of(values):
    """The weighted mean of ``values`` per resample: the statistic of most of these tests."""
    values = np.asarray(values, dtype=float)
    return lambda weights: weights @ values / weights.sum(axis=1)


def scipy_percentile(data, statistic, *, n_resamples, seed, **options):
    result = stats.bootstrap(
        data,
        statistic,
        n_resamples=n_resamples,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
        **options,
    )
    return result.confidence_interval.low, result.confidence_interval.high


# --- Point estimates and small helpers ------------------------------------------------------------


def test_it_turns_undefined_numbers_into_none():
    assert statistics.finite(None) is None
    assert statistics.finite(float("nan")) is None and statistics.finite(float("inf")) is None
    assert statistics.finite(np.float64(0.25)) == 0.25 and type(statistics.finite(np.float64(0.25))) is float


def test_it_wraps_the_libraries_for_point_estimates():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 6, 50), rng.integers(0, 6, 50)
    for weights in (None, "linear", "quadratic"):
        assert statistics.cohen_kappa(a, b, labels=range(6), weights=weights) == pytest.approx(
            cohen_kappa_score(a, b, labels=list(range(6)), weights=weights), abs=1e-12
        )
    assert math.isnan(statistics.cohen_kappa([3, 3], [3, 3], labels=range(6)))
    tau, p_value = statistics.kendall_tau(a, b)
    expected = stats.kendalltau(a, b, variant="b")
    assert (tau, p_value) == pytest.approx((expected.statistic, expected.pvalue), abs=1e-12)
    assert math.isnan(statistics.kendall_tau([1, 1, 1], [1, 2, 3])[0])
    assert statistics.wilson_interval(7, 9) == pytest.approx(proportion_confint(7, 9, alpha=0.05, method="wilson"))
    assert statistics.wilson_interval(7, 9, confidence=0.9) == pytest.approx(
        proportion_confint(7, 9, alpha=0.1, method="wilson")
    )
    codes = rng.integers(0, 4, (30, 3))
    table, _ = aggregate_raters(codes, n_cat=4)
    assert statistics.fleiss_kappa(codes, 4) == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    ratings = rng.integers(0, 4, (3, 30)).astype(float)
    ratings[0, :5] = np.nan
    for level in ("nominal", "interval"):
        assert statistics.krippendorff_alpha(ratings, level_of_measurement=level) == pytest.approx(
            krippendorff.alpha(reliability_data=ratings, level_of_measurement=level), abs=1e-12
        )


def test_it_adds_weights_by_group():
    weights = np.array([[1.0, 2.0, 0.0, 4.0], [0.0, 1.0, 1.0, 1.0]])
    assert statistics.sum_by(weights, np.array([2, 0, 2, 0]), 3).tolist() == [[6.0, 0.0, 1.0], [2.0, 0.0, 1.0]]
    assert statistics.draw_counts(np.array([[0, 0, 2], [1, 2, 2]]), 3).tolist() == [[2, 0, 1], [0, 1, 2]]


# --- The vectorised coefficients equal the libraries on random resamples -------------------------


def test_it_computes_bootstrap_kappa_exactly_as_sklearn_on_random_resamples():
    rng = np.random.default_rng(2024)
    compared = undefined = 0
    for trial in range(60):
        k = int(rng.choice([2, 3, 7]))
        n = int(rng.integers(2, 60))
        first = rng.integers(0, k, n)
        # Some datasets are mostly one category so that undefined resamples occur too.
        second = np.where(rng.random(n) < rng.uniform(0.2, 0.95), first, rng.integers(0, k if trial % 4 else 1, n))
        onehot = statistics.pair_one_hot(first, second, k)
        indices = rng.integers(0, n, (25, n))
        vectorised = statistics.cohen_kappa_weighted(onehot, statistics.draw_counts(indices, n), k)
        for row, value in zip(indices, vectorised, strict=True):
            expected = cohen_kappa_score(first[row], second[row], labels=list(range(k)), replace_undefined_by=np.nan)
            if np.isnan(expected):
                assert np.isnan(value)
                undefined += 1
            else:
                assert value == pytest.approx(expected, abs=1e-12)
            compared += 1
    assert compared == 1500 and undefined > 0


def test_it_matches_sklearn_with_the_fast_kappa_on_six_labels():
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 25))
        a = rng.integers(0, 6, n)
        b = a.copy() if rng.random() < 0.3 else rng.integers(0, 6, n)
        fast = statistics.cohen_kappa_weighted(statistics.pair_one_hot(a, b, 6), np.ones(n), 6)[0]
        slow = statistics.cohen_kappa(a, b, labels=range(6))
        assert (math.isnan(fast) and math.isnan(slow)) or fast == pytest.approx(slow, abs=1e-12)


def test_it_computes_bootstrap_alpha_exactly_as_krippendorff_with_missing_ratings():
    rng = np.random.default_rng(7)
    for _trial in range(40):
        k = int(rng.choice([2, 4, 7]))
        n_annotators, n = int(rng.integers(2, 5)), int(rng.integers(3, 40))
        ratings = rng.integers(0, k, (n_annotators, n)).astype(float)
        ratings[rng.random(ratings.shape) < 0.3] = np.nan
        pairable = np.flatnonzero((~np.isnan(ratings)).sum(axis=0) >= 2)
        if pairable.size < 2:
            continue
        contributions = statistics.coincidences(ratings[:, pairable], k)
        indices = rng.integers(0, pairable.size, (10, pairable.size))
        vectorised = statistics.krippendorff_alpha_weighted(
            contributions, statistics.draw_counts(indices, pairable.size), k
        )
        for row, value in zip(indices, vectorised, strict=True):
            sample = ratings[:, pairable][:, row]
            with np.errstate(all="ignore"):
                expected = krippendorff.alpha(
                    reliability_data=sample, value_domain=list(range(k)), level_of_measurement="nominal"
                )
            if np.isnan(expected):
                assert np.isnan(value)
            else:
                assert value == pytest.approx(expected, abs=1e-10)


def test_it_computes_bootstrap_fleiss_exactly_as_statsmodels():
    rng = np.random.default_rng(5)
    for _trial in range(30):
        k, raters, n = int(rng.integers(2, 8)), int(rng.integers(2, 5)), int(rng.integers(3, 50))
        codes = rng.integers(0, k, (n, raters))
        counts = statistics.category_counts(codes, k)
        assert (counts == aggregate_raters(codes, n_cat=k)[0]).all()
        indices = rng.integers(0, n, (10, n))
        vectorised = statistics.fleiss_kappa_weighted(counts, statistics.draw_counts(indices, n))
        for row, value in zip(indices, vectorised, strict=True):
            table, _ = aggregate_raters(codes[row], n_cat=k)
            with np.errstate(all="ignore"):
                expected = fleiss_kappa(table, method="fleiss")
            assert value == pytest.approx(expected, abs=1e-12) or (np.isnan(value) and not np.isfinite(expected))


def test_it_computes_the_linear_coefficients_as_the_libraries_on_random_resamples():
    """Cohen's, Fleiss' and Krippendorff's coefficients from a few sums per row, one product for all."""
    rng = np.random.default_rng(17)
    compared = undefined = 0
    for trial in range(40):
        k = int(rng.choice([2, 3, 7]))
        raters, n = int(rng.integers(2, 5)), int(rng.integers(2, 40))
        truth = rng.integers(0, k if trial % 5 else 1, n)
        codes = np.where(rng.random((raters, n)) < 0.7, truth, rng.integers(0, k if trial % 5 else 1, (raters, n))).T
        ratings = codes.T.astype(float)
        ratings[rng.random(ratings.shape) < 0.2] = np.nan
        indices = rng.integers(0, n, (12, n))
        weights = statistics.draw_counts(indices, n)
        kappas = statistics.cohen_kappa_linear(codes[:, 0], codes[:, 1], k)(weights)
        fleiss = statistics.fleiss_kappa_linear(codes, k)(weights)
        alphas = statistics.krippendorff_alpha_linear(ratings, k)(weights)
        for row, kappa, fleiss_value, alpha in zip(indices, kappas, fleiss, alphas, strict=True):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected_kappa = cohen_kappa_score(
                    codes[row, 0], codes[row, 1], labels=list(range(k)), replace_undefined_by=np.nan
                )
                expected_fleiss = fleiss_kappa(aggregate_raters(codes[row], n_cat=k)[0], method="fleiss")
                rated = (~np.isnan(ratings[:, row])).sum(axis=0) >= 2
                expected_alpha = (
                    krippendorff.alpha(
                        reliability_data=ratings[:, row][:, rated],
                        value_domain=list(range(k)),
                        level_of_measurement="nominal",
                    )
                    if rated.any()
                    else np.nan
                )
            for value, expected in ((kappa, expected_kappa), (fleiss_value, expected_fleiss), (alpha, expected_alpha)):
                if np.isfinite(expected):
                    assert value == pytest.approx(expected, abs=1e-10)
                else:
                    assert np.isnan(value)
                    undefined += 1
                compared += 1
    assert compared == 40 * 12 * 3 and undefined > 0


def test_it_multiplies_the_linear_statistics_once_and_gives_each_its_interval():
    rng = np.random.default_rng(19)
    codes = rng.integers(0, 3, (60, 2))
    kappa = statistics.cohen_kappa_linear(codes[:, 0], codes[:, 1], 3)
    alpha = statistics.krippendorff_alpha_linear(codes.T.astype(float), 3)
    onehot = statistics.pair_one_hot(codes[:, 0], codes[:, 1], 3)
    contributions = statistics.coincidences(codes.T.astype(float), 3)
    together = statistics.bootstrap_intervals(
        statistics=[kappa, mean_of(codes[:, 0]), alpha], n_rows=60, n_resamples=300, seed=4
    )
    alone = [
        statistics.bootstrap_interval(statistic=statistic, n_rows=60, n_resamples=300, seed=4)
        for statistic in (
            lambda w: statistics.cohen_kappa_weighted(onehot, w, 3),
            mean_of(codes[:, 0]),
            lambda w: statistics.krippendorff_alpha_weighted(contributions, w, 3),
        )
    ]
    # Integer sums: the very same values, whichever way they were added.
    assert [interval.pair() for interval in together] == [interval.pair() for interval in alone]


def test_it_counts_the_draws_a_few_resamples_at_a_time():
    rng = np.random.default_rng(23)
    for n, resamples in ((1, 3), (7, 20_000), (5_000, 40)):
        indices = rng.integers(0, n, (resamples, n))
        expected = np.zeros((resamples, n))
        np.add.at(expected, (np.repeat(np.arange(resamples), n), indices.ravel()), 1)
        assert (statistics.draw_counts(indices, n) == expected).all()


def test_it_draws_strata_that_are_not_consecutive_rows_as_consecutive_ones():
    values = np.arange(10, dtype=float)
    seen = []

    def record(weights):
        seen.append(weights.copy())
        return weights @ values

    statistics.bootstrap_distribution(statistic=record, n_rows=10, strata=[0, 1] * 5, n_resamples=50, seed=6)
    statistics.bootstrap_distribution(statistic=record, n_rows=10, strata=[0] * 5 + [1] * 5, n_resamples=50, seed=6)
    interleaved, consecutive = seen
    assert (interleaved[:, 0::2] == consecutive[:, :5]).all() and (interleaved[:, 1::2] == consecutive[:, 5:]).all()


def _check_tau(x, y, counts):
    x, y, counts = np.asarray(x, dtype=float), np.asarray(y, dtype=float), np.asarray(counts)
    value = statistics.kendall_tau_weighted(x, y, counts[None, :])[0]
    expected = statistics.kendall_tau(np.repeat(x, counts), np.repeat(y, counts))[0]
    if np.isnan(expected):
        assert np.isnan(value)
    else:
        assert value == pytest.approx(expected, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from([-1.0, -0.5, 0.0, 0.25, 1.0]), st.integers(0, 3)),
        min_size=1,
        max_size=30,
    )
)
def test_it_computes_weighted_kendall_tau_as_scipy_on_repeated_rows(rows):
    x, y, counts = zip(*rows, strict=True)
    _check_tau(x, y, counts)


def test_it_computes_bootstrap_kendall_tau_as_scipy_on_random_resamples():
    rng = np.random.default_rng(8)
    for trial in range(40):
        n = int(rng.integers(2, 80))
        # Continuous, few-valued and binary sides: ties of every kind.
        x = rng.normal(size=n) if trial % 3 == 0 else rng.integers(0, 6, n).astype(float)
        y = rng.integers(0, 2, n).astype(float) if trial % 2 else x + rng.integers(-1, 2, n)
        indices = rng.integers(0, n, (15, n))
        vectorised = statistics.kendall_tau_weighted(x, y, statistics.draw_counts(indices, n))
        for row, value in zip(indices, vectorised, strict=True):
            expected = statistics.kendall_tau(x[row], y[row])[0]
            assert (np.isnan(value) and np.isnan(expected)) or value == pytest.approx(expected, abs=1e-12)


def test_it_computes_kendall_tau_in_blocks_when_there_are_many_distinct_pairs(monkeypatch):
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=300), rng.normal(size=300)
    weights = statistics.draw_counts(rng.integers(0, 300, (4, 300)), 300)
    whole = statistics.kendall_tau_weighted(x, y, weights)
    monkeypatch.setattr(statistics, "BATCH_CELLS", 1000)
    assert statistics.kendall_tau_weighted(x, y, weights) == pytest.approx(whole, abs=1e-12)


# --- The bootstrap -------------------------------------------------------------------------------


def test_it_draws_the_row_bootstrap_of_scipy():
    rng = np.random.default_rng(10)
    values = rng.normal(1.0, 2.0, 80)
    interval = statistics.bootstrap_interval(statistic=mean_of(values), n_rows=80, n_resamples=2000, seed=4)
    expected = scipy_percentile((values,), np.mean, n_resamples=2000, seed=4)
    # Same seed, same draws, same percentiles.
    assert (interval.low, interval.high) == pytest.approx(expected, abs=1e-12)
    assert interval.n_resamples == 2000 and interval.n_undefined == 0 and interval.defined
    # Another seed: the same interval up to Monte-Carlo error (sd of an endpoint about 0.04 standard errors).
    standard_error = values.std(ddof=1) / np.sqrt(values.size)
    for seed in (5, 6, 7):
        other = scipy_percentile((values,), np.mean, n_resamples=2000, seed=seed)
        assert abs(interval.low - other[0]) < 0.3 * standard_error
        assert abs(interval.high - other[1]) < 0.3 * standard_error


def test_it_draws_a_stratified_bootstrap_as_scipy_draws_two_samples():
    rng = np.random.default_rng(11)
    shown, hidden = rng.random(30).round(), rng.random(12).round()
    values = np.concatenate([shown, hidden])
    strata = ["shown"] * 30 + ["whatever else"] * 12

    def difference(weights):
        return mean_of(shown)(weights[:, :30]) - mean_of(hidden)(weights[:, 30:])

    interval = statistics.bootstrap_interval(statistic=difference, n_rows=42, strata=strata, n_resamples=999, seed=2)
    expected = scipy_percentile(
        (shown, hidden), lambda a, b, axis=-1: a.mean(axis=axis) - b.mean(axis=axis), n_resamples=999, seed=2
    )
    assert (interval.low, interval.high) == pytest.approx(expected, abs=1e-12)
    assert values.size == 42


def test_it_equals_the_row_bootstrap_with_one_row_per_cluster():
    rng = np.random.default_rng(12)
    values = rng.exponential(size=50)
    rows = statistics.bootstrap_interval(statistic=mean_of(values), n_rows=50, n_resamples=1000, seed=3)
    # Clusters in row order: the very same resamples.
    ids = [f"participant-{i:03d}" for i in range(50)]
    clustered = statistics.bootstrap_interval(
        statistic=mean_of(values), n_rows=50, clusters=ids, n_resamples=1000, seed=3
    )
    assert clustered.pair() == pytest.approx(rows.pair(), abs=1e-12)  # up to the matrix products' rounding
    # Clusters in another order: other resamples of the same law, the same interval up to Monte-Carlo error.
    shuffled = statistics.bootstrap_interval(
        statistic=mean_of(values), n_rows=50, clusters=rng.permutation(50), n_resamples=4000, seed=3
    )
    standard_error = values.std(ddof=1) / np.sqrt(values.size)
    assert abs(shuffled.low - rows.low) < 0.3 * standard_error
    assert abs(shuffled.high - rows.high) < 0.3 * standard_error


def test_it_resamples_whole_clusters():
    # Two participants, three answers each: a resample holds 0, 3 or 6 answers of each.
    values = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    seen = []

    def record(weights):
        seen.append(weights)
        return weights @ values / weights.sum(axis=1)

    distribution = statistics.bootstrap_distribution(
        statistic=record, n_rows=6, clusters=[7, 7, 7, 3, 3, 3], n_resamples=200, seed=1
    )
    weights = np.concatenate(seen)
    assert (weights[:, :3] == weights[:, :1]).all() and (weights[:, 3:] == weights[:, 3:4]).all()
    assert set(weights[:, 0]) == {0.0, 1.0, 2.0} and (weights.sum(axis=1) == 6).all()
    assert set(np.round(distribution, 12)) == {0.0, 0.5, 1.0}


def test_it_gives_several_statistics_the_same_resamples_in_batches(monkeypatch):
    rng = np.random.default_rng(13)
    values = rng.normal(size=40)
    clusters = np.repeat(np.arange(10), 4)
    together = statistics.bootstrap_intervals(
        statistics=[mean_of(values), mean_of(values**2)], n_rows=40, clusters=clusters, n_resamples=500, seed=8
    )
    alone = statistics.bootstrap_interval(
        statistic=mean_of(values**2), n_rows=40, clusters=clusters, n_resamples=500, seed=8
    )
    assert together[1] == alone
    monkeypatch.setattr(statistics, "BATCH_CELLS", 100)  # a few resamples per call
    batched = statistics.bootstrap_intervals(
        statistics=[mean_of(values), mean_of(values**2)], n_rows=40, clusters=clusters, n_resamples=500, seed=8
    )
    # The same resamples; only the matrix products' rounding may differ.
    for one, other in zip(batched, together, strict=True):
        assert one.pair() == pytest.approx(other.pair(), abs=1e-12)


def test_it_leaves_undefined_resamples_out_only_when_most_are_defined():
    distribution = np.array([np.nan] * 5 + list(range(95)), dtype=float)
    strict = statistics.percentile_interval(distribution)
    assert strict.low is None and strict.high is None and strict.n_undefined == 5 and not strict.defined
    tolerant = statistics.percentile_interval(distribution, min_defined=0.9)
    assert tolerant.pair() == pytest.approx(list(np.quantile(np.arange(95), [0.025, 0.975])))
    assert statistics.percentile_interval(distribution, min_defined=0.96).low is None
    assert statistics.percentile_interval(np.full(10, np.nan), min_defined=0).low is None


def test_it_refuses_what_it_cannot_resample():
    with pytest.raises(ValueError, match="nothing to resample"):
        statistics.bootstrap_interval(statistic=mean_of([]), n_rows=0, n_resamples=10)
    with pytest.raises(ValueError, match="ids for 3 rows"):
        statistics.bootstrap_interval(statistic=mean_of([1, 2, 3]), n_rows=3, clusters=[1, 2], n_resamples=10)
    with pytest.raises(ValueError, match="spans two strata"):
        statistics.bootstrap_interval(
            statistic=mean_of([1, 2, 3]), n_rows=3, clusters=[1, 1, 2], strata=[0, 1, 1], n_resamples=10
        )


def test_it_describes_the_interval_method():
    assert statistics.interval_method(unit="participants", n_resamples=2000) == {
        "bootstrap": "participants",
        "resamples": 2000,
        "confidence": 0.95,
        "method": "percentile",
    }


# --- The cluster bootstrap on clustered data -----------------------------------------------------


def _clustered_sample(rng, *, n_clusters=40, per_cluster=8):
    """Rows that share their cluster's random effect: intraclass correlation 0.5, true mean 0."""
    effect = rng.normal(size=n_clusters)
    values = np.repeat(effect, per_cluster) + rng.normal(size=n_clusters * per_cluster)
    return values, np.repeat(np.arange(n_clusters), per_cluster)


def test_it_widens_the_interval_and_keeps_its_coverage_on_clustered_data():
    rng = np.random.default_rng(20240601)
    covered = {"rows": 0, "clusters": 0}
    wider = 0
    n_datasets = 300
    for dataset in range(n_datasets):
        values, clusters = _clustered_sample(rng)
        options = {"statistic": mean_of(values), "n_rows": values.size, "n_resamples": 1000, "seed": dataset}
        rows = statistics.bootstrap_interval(**options)
        by_cluster = statistics.bootstrap_interval(clusters=clusters, **options)
        covered["rows"] += rows.low <= 0 <= rows.high
        covered["clusters"] += by_cluster.low <= 0 <= by_cluster.high
        wider += (by_cluster.high - by_cluster.low) > (rows.high - rows.low)
    # A design effect of 1 + 7 * 0.5 = 4.5: the row interval is about sqrt(4.5) = 2.1 times too
    # narrow and covers about 64%; the cluster interval covers about 93% (percentile, 40 clusters).
    assert wider == n_datasets
    assert covered["rows"] / n_datasets < 0.8
    assert 0.87 <= covered["clusters"] / n_datasets <= 0.99


def test_it_bootstraps_kendall_tau_over_participants_as_scipy_on_the_drawn_rows():
    rng = np.random.default_rng(14)
    participant = np.repeat(np.arange(12), 5)
    x = rng.choice([-0.5, -0.25, 0.0, 0.25, 0.5], 60)
    y = (x + rng.normal(0, 0.4, 60) > 0).astype(float)
    seen = []

    def tau(weights):
        seen.append(weights)
        return statistics.kendall_tau_weighted(x, y, weights)

    distribution = statistics.bootstrap_distribution(
        statistic=tau, n_rows=60, clusters=participant, n_resamples=300, seed=6
    )
    for weights, value in zip(np.concatenate(seen), distribution, strict=True):
        rows = np.repeat(np.arange(60), weights.astype(int))
        expected = statistics.kendall_tau(x[rows], y[rows])[0]
        assert (np.isnan(value) and np.isnan(expected)) or value == pytest.approx(expected, abs=1e-12)
