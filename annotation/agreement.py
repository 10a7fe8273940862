"""Inter-annotator agreement, on plain Python and numpy data (no ORM).

The coefficients computed once per label come from the libraries the field
trusts: Cohen's kappa (two annotators) from scikit-learn, Fleiss' kappa from
statsmodels, Krippendorff's alpha from ``krippendorff``, each through
core.statistics. Cohen's kappa, percent agreement and the confusion tables
are also wanted per annotator pair (and per annotator, against the final
labels or the LLM): one scikit-learn call each would take seconds with a few
dozen annotators, so every pair's comes at once from stacked confusion
matrices (``statistics.stacked_confusions`` and
``statistics.cohen_kappa_from_confusion``, scikit-learn's own arithmetic;
tests/annotation/test_agreement_arrays.py holds them to the library).

The intervals come from core.statistics' bootstrap, which resamples *items*:
an item drawn brings all of its ratings, and every figure of a label set is
computed on the same resamples. Each resample's coefficient is computed from
per-item sums weighted by how often the resample drew the item
(``statistics.LinearStatistic``: one matrix product per batch of resamples
serves every figure; tests/core/test_statistics.py proves these equal the
libraries).

A ratings matrix is annotators x items, float, holding category indices
(0..k-1; for a binary trait 0 = absent, 1 = present) and NaN where an
annotator did not rate the item. Undefined values (no items, a single
category everywhere, ...) are ``None`` with a reason code in ``reasons``,
never NaN, so the result always serialises to strict JSON.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np

from core import statistics

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 20240601
CONFIDENCE_LEVEL = 0.95
# Below this share of defined bootstrap replicates an interval says more about
# the resampling than about the data, so none is reported.
MIN_DEFINED_REPLICATES = 0.9

# Reason codes for a value left out (None). The page translates them; the JSON keeps the codes.
NO_ITEMS = "no_items"
TOO_FEW_ITEMS = "too_few_items"
SINGLE_CATEGORY = "single_category"
NOT_TWO_ANNOTATORS = "not_two_annotators"
COHEN_FOR_TWO = "cohen_for_two_annotators"
TOO_FEW_ANNOTATORS = "too_few_annotators"
UNSTABLE_BOOTSTRAP = "unstable_bootstrap"
NO_HIDDEN_ITEMS = "no_hidden_items"
NO_SHOWN_ITEMS = "no_shown_items"
NO_SUGGESTIONS = "no_suggestions"


# --- Building ratings ---------------------------------------------------------


def ratings_matrix(values: dict[tuple[str, object], int], *, annotators: list[str], items: list) -> np.ndarray:
    """Annotators x items from {(annotator, item): category index}; NaN where missing."""
    matrix = np.full((len(annotators), len(items)), np.nan)
    row = {a: i for i, a in enumerate(annotators)}
    column = {item: j for j, item in enumerate(items)}
    for (annotator, item), value in values.items():
        if annotator in row and item in column and value is not None:
            matrix[row[annotator], column[item]] = value
    return matrix


def complete_items(ratings: np.ndarray, per_item: int) -> np.ndarray:
    """Indices of the items rated by the full number of annotators."""
    return np.flatnonzero((~np.isnan(ratings)).sum(axis=0) == per_item)


def item_codes(ratings: np.ndarray, items: np.ndarray, per_item: int) -> np.ndarray:
    """items x per_item category indices: each complete item's ratings in annotator order."""
    columns = ratings[:, items].T
    # Row-major order of the non-missing cells keeps each item's ratings together, in annotator order.
    return columns[~np.isnan(columns)].astype(np.intp).reshape(len(items), per_item)


# --- The bootstrap -------------------------------------------------------------------------


def bootstrap_cis(
    replicates: list, n_items: int, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> list[tuple[dict | None, str | None]]:
    """Percentile intervals from one bootstrap that resamples items (core.statistics).

    Each of ``replicates`` maps a resamples x items weight matrix (how often
    each resample drew each item) to one value per resample. Resampling items
    keeps all of an item's ratings together (paired resampling), and one run
    serves every figure, so they are computed on the same resamples. Resamples
    that drew a single category leave the coefficient undefined; they are left
    out while at least MIN_DEFINED_REPLICATES of them are defined.
    Returns one ({low, high}, None) or (None, reason) per replicate.
    """
    if n_items < 2:
        return [(None, TOO_FEW_ITEMS)] * len(replicates)
    intervals = statistics.bootstrap_intervals(
        statistics=replicates,
        n_rows=n_items,
        n_resamples=n_resamples,
        confidence=CONFIDENCE_LEVEL,
        seed=seed,
        min_defined=MIN_DEFINED_REPLICATES,
    )
    return [_interval(interval) for interval in intervals]


def _interval(interval: statistics.Interval) -> tuple[dict | None, str | None]:
    if not interval.defined:
        return None, UNSTABLE_BOOTSTRAP
    return {"low": interval.low, "high": interval.high}, None


# --- Library point estimates ------------------------------------------------------


def cohen_kappa(first, second, n_categories: int) -> float | None:
    """sklearn's Cohen's kappa over all k categories; None when undefined."""
    if len(first) == 0:
        return None
    return statistics.finite(
        statistics.cohen_kappa(
            np.asarray(first, dtype=np.intp), np.asarray(second, dtype=np.intp), labels=range(n_categories)
        )
    )


def fleiss(codes: np.ndarray, n_categories: int) -> float | None:
    """statsmodels' Fleiss' kappa of items x raters category indices."""
    if codes.shape[0] == 0:
        return None
    return statistics.finite(statistics.fleiss_kappa(codes, n_categories))


def alpha(ratings: np.ndarray, n_categories: int) -> float | None:
    """krippendorff's nominal alpha of annotators x items with NaN for missing."""
    if ratings.size == 0 or ((~np.isnan(ratings)).sum(axis=0) >= 2).sum() == 0:
        return None
    return statistics.finite(
        statistics.krippendorff_alpha(ratings, value_domain=range(n_categories), level_of_measurement="nominal")
    )


# --- One label ------------------------------------------------------------------


def trait_bits(trait_sets: list, trait_codes: list[str]) -> np.ndarray:
    """rows x traits, 1 where the row's set (or list) of trait codes holds the trait: what the
    per-trait agreement figures compare, for every row and trait at once."""
    column = {code: t for t, code in enumerate(trait_codes)}
    bits = np.zeros((len(trait_sets), len(trait_codes)), dtype=np.intp)
    for row, traits in enumerate(trait_sets):
        for code in traits:
            if code in column:
                bits[row, column[code]] = 1
    return bits


def rater_pairs(ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first annotator, second annotator, item) of every two annotators who rated the same item,
    first < second, as three index arrays: what a loop over annotator pairs would visit, without
    the loop (a pair of annotators costs nothing when they share no item)."""
    items, annotators = np.nonzero(~np.isnan(np.asarray(ratings, dtype=float).T))
    # Item-major: each item's annotators are consecutive and ascending, so the rows ``offset`` apart
    # within an item are its pairs, for offsets up to the most ratings an item has.
    per_item = np.bincount(items).max(initial=0)
    firsts, seconds, shared = [np.empty(0, np.intp)], [np.empty(0, np.intp)], [np.empty(0, np.intp)]
    for offset in range(1, per_item):
        same = items[offset:] == items[:-offset]
        firsts.append(annotators[:-offset][same])
        seconds.append(annotators[offset:][same])
        shared.append(items[offset:][same])
    return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(shared)


def pair_index(first, second, n_annotators: int) -> np.ndarray:
    """The position of the pair (first, second), first < second, in ``itertools.combinations(range(n), 2)``."""
    first = np.asarray(first, dtype=np.intp)
    return first * n_annotators - first * (first + 1) // 2 + np.asarray(second, dtype=np.intp) - first - 1


def pooled_confusion(ratings: np.ndarray, n_categories: int, items: np.ndarray | None = None) -> np.ndarray:
    """k x k counts of (annotator i, annotator j) labels for i < j, summed over annotator pairs."""
    columns = ratings if items is None else ratings[:, items]
    first, second, item = rater_pairs(columns)
    return statistics.stacked_confusions(
        np.zeros(item.size, dtype=np.intp),
        columns[first, item],
        columns[second, item],
        n_groups=1,
        n_categories=n_categories,
    )[0]


def pair_agreements(groups, first, second, *, n_groups: int, n_categories: int, binary: bool = False) -> list[dict]:
    """``pair_agreement`` of each group of rows (0..n_groups-1), all computed at once: row r puts the
    labels ``first[r]`` and ``second[r]`` (categories 0..k-1) in group ``groups[r]``."""
    confusions = statistics.stacked_confusions(groups, first, second, n_groups=n_groups, n_categories=n_categories)
    totals = confusions.sum(axis=(1, 2))
    agreeing = np.trace(confusions, axis1=1, axis2=2)
    kappas = statistics.cohen_kappa_from_confusion(confusions)
    if binary:
        # Each side's "present" count: a row and a column of the confusion matrix.
        present = confusions[:, 1, :].sum(axis=1) + confusions[:, :, 1].sum(axis=1)
    results = []
    for g in range(int(n_groups)):
        n = int(totals[g])
        result = {"n": n, "cohen_kappa": None, "percent_agreement": None, "reasons": {}}
        if n == 0:
            result["reasons"] = {"cohen_kappa": NO_ITEMS, "percent_agreement": NO_ITEMS}
            results.append(result)
            continue
        result["percent_agreement"] = float(100 * (agreeing[g] / n))
        result["cohen_kappa"] = statistics.finite(kappas[g])
        if result["cohen_kappa"] is None:
            result["reasons"]["cohen_kappa"] = SINGLE_CATEGORY
        if binary:
            result["prevalence"] = float(present[g] / (2 * n))
        results.append(result)
    return results


def pair_agreement(first, second, n_categories: int, *, binary: bool = False) -> dict:
    """Agreement of two label sequences (an annotator against another, the final labels or the LLM)."""
    first = np.asarray(first, dtype=np.intp)
    return pair_agreements(
        np.zeros(first.size, dtype=np.intp), first, second, n_groups=1, n_categories=n_categories, binary=binary
    )[0]


def label_agreement(ratings: np.ndarray, *, n_categories: int, binary: bool = False, **options) -> dict:
    """Every agreement figure of one label; see ``labels_agreement``."""
    return labels_agreement({"label": (ratings, n_categories, binary)}, **options)["label"]


def labels_agreement(
    labels: dict[str, tuple[np.ndarray, int, bool]],
    *,
    per_item: int = 2,
    annotators: list[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, dict]:
    """Every agreement figure of each label, given as {name: (ratings, number of categories, binary)}.

    ``n`` counts the items rated by ``per_item`` annotators; kappa, Fleiss'
    kappa and the agreement figures use those. Krippendorff's alpha uses every
    item with at least two ratings (``n_pairable``), as the coefficient is
    designed to. Percent agreement is the share of agreeing annotator pairs
    (for two annotators: of agreeing items), as a percentage.

    Labels rated on the same items (the theme and the traits of one review
    always are) share their bootstrap resamples: one scipy run per item set.
    """
    results: dict[str, dict] = {}
    jobs: dict[tuple, list] = defaultdict(list)
    for name, (ratings, n_categories, binary) in labels.items():
        result, label_jobs = _label_figures(ratings, n_categories, binary, per_item, annotators)
        results[name] = result
        for ci_key, items, replicate in label_jobs:
            jobs[(ratings.shape[1], items.tobytes())].append((name, ci_key, items.size, replicate))
    for group in jobs.values():
        cis = bootstrap_cis([job[3] for job in group], group[0][2], n_resamples=n_resamples, seed=seed)
        for (name, ci_key, _n, _replicate), (ci, reason) in zip(group, cis, strict=True):
            results[name][ci_key] = ci
            if reason:
                results[name]["reasons"][ci_key] = reason
    for result in results.values():
        _explain_missing(result)
    return results


def _label_figures(ratings, n_categories, binary, per_item, annotators) -> tuple[dict, list]:
    """The point estimates of one label, and the bootstrap jobs for its intervals:
    (key, item indices resampled, replicate function of the resample weights)."""
    n_annotators = ratings.shape[0]
    annotators = annotators or [str(i) for i in range(n_annotators)]
    items = complete_items(ratings, per_item) if per_item >= 2 else np.array([], dtype=np.intp)
    n = int(items.size)
    pairable = np.flatnonzero((~np.isnan(ratings)).sum(axis=0) >= 2)
    result: dict = {
        "n": n,
        "n_pairable": int(pairable.size),
        "percent_agreement": None,
        "observed_agreement": None,
        "cohen_kappa": None,
        "cohen_kappa_ci": None,
        "krippendorff_alpha": None,
        "krippendorff_alpha_ci": None,
        "fleiss_kappa": None,
        "fleiss_kappa_ci": None,
        "pabak": None,
    }
    if binary:
        result |= {"prevalence": None, "prevalence_index": None, "bias_index": None}
    reasons: dict[str, str] = {}
    result["reasons"] = reasons
    jobs: list = []

    if n_annotators < 2 or per_item < 2:
        for key in [k for k, v in result.items() if v is None]:
            reasons[key] = TOO_FEW_ANNOTATORS
        return result, jobs

    # Observed agreement over annotator pairs, as PABAK, prevalence and bias need it.
    confusion = pooled_confusion(ratings, n_categories, items)
    pairs = int(confusion.sum())
    if binary:
        rated = ratings[:, items]
        rated = rated[~np.isnan(rated)]
        result["prevalence"] = float(rated.mean()) if rated.size else None
    if pairs:
        po = float(np.trace(confusion) / pairs)
        result["observed_agreement"] = po
        result["percent_agreement"] = 100 * po
        result["pabak"] = (n_categories * po - 1) / (n_categories - 1)
        if binary:
            # Byrt, Bishop and Carlin (1993): a = both present, d = both absent, b and c the disagreements.
            result["prevalence_index"] = float(abs(confusion[1, 1] - confusion[0, 0]) / pairs)
            result["bias_index"] = float(abs(confusion[0, 1] - confusion[1, 0]) / pairs)

    codes = item_codes(ratings, items, per_item)
    if n_annotators == 2:
        result["cohen_kappa"] = cohen_kappa(codes[:, 0], codes[:, 1], n_categories) if n else None
        if result["cohen_kappa"] is not None:
            jobs.append(
                ("cohen_kappa_ci", items, statistics.cohen_kappa_linear(codes[:, 0], codes[:, 1], n_categories))
            )
    else:
        reasons["cohen_kappa"] = reasons["cohen_kappa_ci"] = NOT_TWO_ANNOTATORS
        first, second, item = rater_pairs(ratings)
        pairwise = pair_agreements(
            pair_index(first, second, n_annotators),
            ratings[first, item],
            ratings[second, item],
            n_groups=n_annotators * (n_annotators - 1) // 2,
            n_categories=n_categories,
        )
        result["pairwise"] = [
            {"annotators": [annotators[i], annotators[j]], **pair}
            for (i, j), pair in zip(itertools.combinations(range(n_annotators), 2), pairwise, strict=True)
        ]

    result["fleiss_kappa"] = fleiss(codes, n_categories)
    if n_annotators == 2:
        # Cohen's kappa carries the interval for two annotators; a second bootstrap would only slow the page.
        reasons["fleiss_kappa_ci"] = COHEN_FOR_TWO
    elif result["fleiss_kappa"] is not None:
        jobs.append(("fleiss_kappa_ci", items, statistics.fleiss_kappa_linear(codes, n_categories)))

    result["krippendorff_alpha"] = alpha(ratings, n_categories)
    if result["krippendorff_alpha"] is not None:
        jobs.append(
            (
                "krippendorff_alpha_ci",
                pairable,
                statistics.krippendorff_alpha_linear(ratings[:, pairable], n_categories),
            )
        )
    return result, jobs


def _explain_missing(result: dict) -> None:
    """Give every None figure a reason code."""
    reasons = result["reasons"]
    n = result["n"]
    for key, value in result.items():
        if value is not None or key in reasons:
            continue
        if key in ("krippendorff_alpha", "krippendorff_alpha_ci"):
            reasons[key] = NO_ITEMS if not result["n_pairable"] else reasons.get("krippendorff_alpha", SINGLE_CATEGORY)
        elif n == 0:
            reasons[key] = NO_ITEMS
        elif key.endswith("_ci"):
            reasons[key] = reasons.get(key.removesuffix("_ci"), SINGLE_CATEGORY)
        else:
            reasons[key] = SINGLE_CATEGORY


# --- Suggestions: annotator vs LLM and the anchoring control --------------------------


def rate_difference(shown, hidden, **options) -> dict:
    """Mean of ``shown`` minus mean of ``hidden`` (per-item match rates), with a bootstrap interval."""
    return rate_differences(np.atleast_2d(shown), np.atleast_2d(hidden), **options)[0]


def rate_differences(
    shown: np.ndarray, hidden: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> list[dict]:
    """Row by row, the mean of ``shown`` minus the mean of ``hidden`` (figures x items each).

    The two groups of items are resampled independently, each item keeping all
    its figures (one scipy run for every row).
    """
    shown = np.asarray(shown, dtype=float).reshape(len(shown), -1)
    hidden = np.asarray(hidden, dtype=float).reshape(len(hidden), -1)
    n_shown, n_hidden = shown.shape[1], hidden.shape[1]
    results = [
        {
            "n_shown": n_shown,
            "n_hidden": n_hidden,
            "match_rate_shown": float(shown[row].mean()) if n_shown else None,
            "match_rate_hidden": float(hidden[row].mean()) if n_hidden else None,
            "difference": float(shown[row].mean() - hidden[row].mean()) if n_shown and n_hidden else None,
            "difference_ci": None,
            "reasons": {},
        }
        for row in range(max(len(shown), len(hidden)))
    ]
    if not n_hidden or not n_shown:
        reason = NO_HIDDEN_ITEMS if not n_hidden else NO_SHOWN_ITEMS
        for result in results:
            result["reasons"] = {"difference": reason, "difference_ci": reason}
        return results
    if n_shown < 2 or n_hidden < 2:
        for result in results:
            result["reasons"]["difference_ci"] = TOO_FEW_ITEMS
        return results
    # Shown and hidden items are two samples: each resample redraws each group at its own size.
    figures = np.concatenate([shown, hidden], axis=1)

    def difference(weights):
        shown_weights, hidden_weights = weights[:, :n_shown], weights[:, n_shown:]
        return (
            (shown_weights @ shown.T) / shown_weights.sum(axis=1)[:, None]
            - (hidden_weights @ hidden.T) / hidden_weights.sum(axis=1)[:, None]
        ).T

    intervals = statistics.bootstrap_intervals(
        statistics=[difference],
        n_rows=figures.shape[1],
        strata=np.repeat([0, 1], [n_shown, n_hidden]),
        n_resamples=n_resamples,
        confidence=CONFIDENCE_LEVEL,
        seed=seed,
        min_defined=MIN_DEFINED_REPLICATES,
    )
    for result, interval in zip(results, intervals, strict=True):
        result["difference_ci"], reason = _interval(interval)
        if reason:
            result["reasons"]["difference_ci"] = reason
    return results


# --- Distributions --------------------------------------------------------------------


def distribution(labels: list, categories: list[str], *, multi: bool) -> dict:
    """Count and percent of label sets per category (a trait per item may repeat across categories)."""
    n = len(labels)
    counts = dict.fromkeys(categories, 0)
    for label in labels:
        for code in label if multi else [label]:
            if code in counts:
                counts[code] += 1
    return {code: {"count": c, "percent": (100 * c / n) if n else None} for code, c in counts.items()}
