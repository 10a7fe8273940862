"""The agreement and quality figures computed on arrays equal the libraries computed pair by pair.

Kappa, percent agreement and confusion tables come from one ``numpy.bincount`` per label over
every pair or window at once (core.statistics); these tests hold them to scikit-learn's
``cohen_kappa_score`` and ``confusion_matrix`` on random data, to a slow reference written the
obvious way (one library call per pair), and to the rounds' figures saved before the change
(tests/annotation/data/*_reference_*.json, written by ``VIVID_WRITE_REFERENCE=1``).
"""

import datetime
import itertools
import json
import math
import os
import warnings
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from annotation import agreement
from annotation.models import Assignment, ItemStatus, RoundItem
from annotation.selectors.quality import _round_quality
from annotation.selectors.stats import _round_agreement_stats
from annotation.services import (
    adjudication_resolve,
    assignment_submit,
    control_item_create,
    round_lock,
    round_quality_update,
    suggested_codes,
)
from core import statistics

from .factories import make_annotator, make_dataset, make_researcher, make_round, make_suggestions, numbered_csv

pytestmark = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning"),
    pytest.mark.filterwarnings("ignore:A single label was found:UserWarning"),
]

DATA = Path(__file__).parent / "data"
TRAITS = ["literal", "sino_vietnamese", "uncommon_vocabulary", "folk_knowledge", "pragmatic"]
THEMES = ["love", "virtues", "criticism", "work_nature", "social_relationships", "life_lessons", "other"]
BASE_TIME = datetime.datetime(2025, 3, 1, 8, 0, tzinfo=datetime.UTC)


# --- Kappa and confusion tables on arrays, against scikit-learn ---------------------------------


def sklearn_kappa(first, second, k) -> float:
    """scikit-learn's kappa over every one of k categories; NaN where it leaves it undefined."""
    if len(first) == 0:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohen_kappa_score(first, second, labels=list(range(k)), replace_undefined_by=np.nan)


def random_groups(rng, k: int, n_groups: int):
    """(group, first, second) rows of ``n_groups`` groups of 0 to 40 rows; some groups agree a lot,
    some hold a single category on both sides (scikit-learn's kappa is undefined there)."""
    groups, firsts, seconds = [], [], []
    for g in range(n_groups):
        n = int(rng.choice([0, 1, 2, 3, rng.randint(4, 41)]))
        first = rng.randint(0, k, n)
        if g % 5 == 0:
            first[:] = rng.randint(k)
            second = first.copy()
        elif g % 5 == 1:
            second = rng.randint(0, k, n)
        else:
            second = np.where(rng.random_sample(n) < 0.7, first, rng.randint(0, k, n))
        groups.append(np.full(n, g))
        firsts.append(first)
        seconds.append(second)
    return np.concatenate(groups), np.concatenate(firsts), np.concatenate(seconds)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_it_computes_kappa_from_stacked_confusions_as_scikit_learn(seed, k):
    rng = np.random.RandomState(seed)
    groups, first, second = random_groups(rng, k, 40)
    order = rng.permutation(groups.size)  # rows of a group need not be together
    confusions = statistics.stacked_confusions(groups[order], first[order], second[order], n_groups=40, n_categories=k)
    kappas = statistics.cohen_kappa_from_confusion(confusions)
    undefined = 0
    for g in range(40):
        expected = sklearn_kappa(first[groups == g], second[groups == g], k)
        if math.isnan(expected):
            assert math.isnan(kappas[g]) and statistics.finite(kappas[g]) is None
            undefined += 1
        else:
            assert kappas[g] == pytest.approx(expected, abs=1e-12)
    assert undefined >= 8  # every fifth group holds one category, and the empty ones


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 2, 5, 7])
def test_it_stacks_confusion_matrices_as_scikit_learn_counts_them(seed, k):
    rng = np.random.RandomState(seed)
    groups, first, second = random_groups(rng, k, 25)
    confusions = statistics.stacked_confusions(groups, first, second, n_groups=27, n_categories=k)
    assert confusions.shape == (27, k, k)
    for g in range(27):
        rows = groups == g
        if rows.any():
            expected = confusion_matrix(first[rows], second[rows], labels=list(range(k)))
        else:
            expected = np.zeros((k, k), dtype=int)
        assert confusions[g].tolist() == expected.tolist()


def test_it_gives_each_group_the_agreement_of_one_pair_computed_alone():
    rng = np.random.RandomState(7)
    groups, first, second = random_groups(rng, 2, 30)
    results = agreement.pair_agreements(groups, first, second, n_groups=31, n_categories=2, binary=True)
    for g, result in enumerate(results):
        a, b = first[groups == g], second[groups == g]
        assert result == reference_pair(a, b, 2, binary=True)


def test_it_pairs_every_two_annotators_of_an_item_and_pools_their_confusion():
    rng = np.random.RandomState(11)
    for n_annotators in (1, 2, 3, 6):
        ratings = rng.randint(0, 4, (n_annotators, 30)).astype(float)
        ratings[rng.random_sample(ratings.shape) < 0.4] = np.nan
        first, second, item = agreement.rater_pairs(ratings)
        found = sorted(zip(first.tolist(), second.tolist(), item.tolist(), strict=True))
        expected = [
            (i, j, column)
            for i, j in itertools.combinations(range(n_annotators), 2)
            for column in range(30)
            if not np.isnan(ratings[i, column]) and not np.isnan(ratings[j, column])
        ]
        assert found == sorted(expected)
        pooled = np.zeros((4, 4), dtype=int)
        for i, j, column in expected:
            pooled[int(ratings[i, column]), int(ratings[j, column])] += 1
        assert agreement.pooled_confusion(ratings, 4).tolist() == pooled.tolist()
        index = agreement.pair_index(first, second, n_annotators)
        assert [list(itertools.combinations(range(n_annotators), 2))[p] for p in index] == list(
            zip(first.tolist(), second.tolist(), strict=True)
        )


# --- Every figure of a label, against the libraries called pair by pair and resample by resample ----


def reference_pair(first, second, k, *, binary=False) -> dict:
    """``pair_agreement`` the obvious way: scikit-learn's kappa, the mean of the agreeing pairs."""
    first, second = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
    n = len(first)
    if n == 0:
        return {
            "n": 0,
            "cohen_kappa": None,
            "percent_agreement": None,
            "reasons": {"cohen_kappa": agreement.NO_ITEMS, "percent_agreement": agreement.NO_ITEMS},
        }
    kappa = statistics.finite(sklearn_kappa(first, second, k))
    result = {
        "n": n,
        "cohen_kappa": kappa,
        "percent_agreement": float(100 * np.mean(first == second)),
        "reasons": {} if kappa is not None else {"cohen_kappa": agreement.SINGLE_CATEGORY},
    }
    if binary:
        result["prevalence"] = float(np.mean(np.concatenate([first, second]) == 1))
    return result


def library_fleiss(codes, k) -> float:
    table, _ = aggregate_raters(codes, n_cat=k)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fleiss_kappa(table, method="fleiss")


def library_alpha(ratings, k) -> float:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return krippendorff.alpha(reliability_data=ratings, value_domain=list(range(k)), level_of_measurement="nominal")


def reference_interval(coefficient, n, *, n_resamples, seed):
    """({low, high}, None) or (None, reason): the library on every resample of the n rows, drawn as
    scipy.stats.bootstrap draws them, and the percentile interval of the defined values."""
    if n < 2:
        return None, agreement.TOO_FEW_ITEMS
    draws = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    values = np.array([coefficient(rows) for rows in draws], dtype=float)
    defined = values[np.isfinite(values)]
    if defined.size == 0 or defined.size < agreement.MIN_DEFINED_REPLICATES * n_resamples:
        return None, agreement.UNSTABLE_BOOTSTRAP
    low, high = np.quantile(defined, [0.025, 0.975])
    return {"low": float(low), "high": float(high)}, None


def reference_label(ratings, k, binary, *, per_item, annotators, n_resamples, seed) -> dict:
    """Every figure of ``labels_agreement`` for one label, one library call per pair and resample."""
    n_annotators = len(annotators)
    rated = ~np.isnan(ratings)
    items = np.flatnonzero(rated.sum(axis=0) == per_item)
    pairable = np.flatnonzero(rated.sum(axis=0) >= 2)
    n = items.size
    codes = np.array([ratings[rated[:, j], j] for j in items], dtype=int).reshape(n, per_item)
    result = {"n": int(n), "n_pairable": int(pairable.size)}
    reasons = {}

    def undefined(key, reason):
        reasons[key] = reason
        return None

    pooled = np.zeros((k, k), dtype=int)
    for i, j in itertools.combinations(range(n_annotators), 2):
        both = rated[i, items] & rated[j, items]
        if both.any():
            pooled += confusion_matrix(ratings[i, items][both], ratings[j, items][both], labels=list(range(k)))
    pairs = pooled.sum()
    po = np.trace(pooled) / pairs if pairs else None
    empty = agreement.NO_ITEMS if n == 0 else agreement.SINGLE_CATEGORY
    result["percent_agreement"] = 100 * float(po) if pairs else undefined("percent_agreement", empty)
    result["observed_agreement"] = float(po) if pairs else undefined("observed_agreement", empty)

    if n_annotators == 2:
        kappa = statistics.finite(sklearn_kappa(codes[:, 0], codes[:, 1], k)) if n else None
        result["cohen_kappa"] = kappa if kappa is not None else undefined("cohen_kappa", empty)
        if kappa is None:
            result["cohen_kappa_ci"] = undefined("cohen_kappa_ci", empty)
        else:
            ci, reason = reference_interval(
                lambda rows: sklearn_kappa(codes[rows, 0], codes[rows, 1], k), n, n_resamples=n_resamples, seed=seed
            )
            result["cohen_kappa_ci"] = ci if ci else undefined("cohen_kappa_ci", reason)
    else:
        result["cohen_kappa"] = undefined("cohen_kappa", agreement.NOT_TWO_ANNOTATORS)
        result["cohen_kappa_ci"] = undefined("cohen_kappa_ci", agreement.NOT_TWO_ANNOTATORS)

    alpha = statistics.finite(library_alpha(ratings, k)) if pairable.size else None
    alpha_reason = agreement.NO_ITEMS if not pairable.size else agreement.SINGLE_CATEGORY
    result["krippendorff_alpha"] = alpha if alpha is not None else undefined("krippendorff_alpha", alpha_reason)
    if alpha is None:
        result["krippendorff_alpha_ci"] = undefined("krippendorff_alpha_ci", alpha_reason)
    else:
        units = ratings[:, pairable]
        ci, reason = reference_interval(
            lambda rows: library_alpha(units[:, rows], k), pairable.size, n_resamples=n_resamples, seed=seed
        )
        result["krippendorff_alpha_ci"] = ci if ci else undefined("krippendorff_alpha_ci", reason)

    fleiss = statistics.finite(library_fleiss(codes, k)) if n else None
    result["fleiss_kappa"] = fleiss if fleiss is not None else undefined("fleiss_kappa", empty)
    if n_annotators == 2:
        result["fleiss_kappa_ci"] = undefined("fleiss_kappa_ci", agreement.COHEN_FOR_TWO)
    elif fleiss is None:
        result["fleiss_kappa_ci"] = undefined("fleiss_kappa_ci", empty)
    else:
        ci, reason = reference_interval(
            lambda rows: library_fleiss(codes[rows], k), n, n_resamples=n_resamples, seed=seed
        )
        result["fleiss_kappa_ci"] = ci if ci else undefined("fleiss_kappa_ci", reason)

    result["pabak"] = (k * float(po) - 1) / (k - 1) if pairs else undefined("pabak", empty)
    if binary:
        values = ratings[:, items][rated[:, items]]
        result["prevalence"] = float(values.mean()) if values.size else undefined("prevalence", empty)
        if pairs:
            result["prevalence_index"] = float(abs(pooled[1, 1] - pooled[0, 0]) / pairs)
            result["bias_index"] = float(abs(pooled[0, 1] - pooled[1, 0]) / pairs)
        else:
            result["prevalence_index"] = undefined("prevalence_index", empty)
            result["bias_index"] = undefined("bias_index", empty)
    result["reasons"] = reasons
    if n_annotators > 2:
        result["pairwise"] = []
        for i, j in itertools.combinations(range(n_annotators), 2):
            both = rated[i] & rated[j]
            pair = reference_pair(ratings[i, both], ratings[j, both], k)
            result["pairwise"].append({"annotators": [annotators[i], annotators[j]], **pair})
    return result


def random_ratings(rng, n_annotators, per_item, n_items, k, *, constant=False):
    """Annotators x items: ``per_item`` annotators on most items (fewer on some, still waiting for
    a review), labels near each item's own; a single category everywhere when ``constant``."""
    ratings = np.full((n_annotators, n_items), np.nan)
    truth = rng.randint(0, k, n_items)
    for item in range(n_items):
        raters = rng.choice(n_annotators, per_item, replace=False)
        if rng.random_sample() < 0.15:
            raters = raters[: rng.randint(1, per_item)]
        noisy = np.where(rng.random_sample(raters.size) < 0.7, truth[item], rng.randint(0, k, raters.size))
        ratings[raters, item] = 0 if constant else noisy
    return ratings


@pytest.mark.parametrize(
    "n_annotators, per_item, seed",
    [(2, 2, 0), (2, 2, 1), (3, 2, 2), (3, 3, 3), (6, 2, 4), (6, 3, 5)],
)
def test_it_gives_every_label_figure_the_libraries_give_pair_by_pair(n_annotators, per_item, seed):
    rng = np.random.RandomState(seed)
    n_items = int(rng.choice([0, 1, 2, 12, 30]) if seed % 2 else 30)
    names = [f"annotator {i}" for i in range(n_annotators)]
    labels = {
        "theme": (random_ratings(rng, n_annotators, per_item, n_items, 7), 7, False),
        "trait": (random_ratings(rng, n_annotators, per_item, n_items, 2), 2, True),
        "constant": (random_ratings(rng, n_annotators, per_item, n_items, 2, constant=True), 2, True),
    }
    results = agreement.labels_agreement(labels, per_item=per_item, annotators=names, n_resamples=40, seed=seed)
    for name, (ratings, k, binary) in labels.items():
        expected = reference_label(ratings, k, binary, per_item=per_item, annotators=names, n_resamples=40, seed=seed)
        # The reasons come in another order; every value and reason must be the same.
        assert_same(results[name], expected, name, ordered=False)


# --- Rounds built through the services, against the figures saved before the arrays ------------

# name: annotators, per item, items, controls (theme, traits), window, hidden share, suggestions,
# the share of answers each annotator gives, whether the round is locked and its disputes resolved,
# and the themes' spread (a low one gives windows of a single category).
SCENARIOS = {
    "five": {
        "annotators": 5,
        "per_item": 2,
        "items": 40,
        "controls": [("love", ["literal"]), ("criticism", []), ("other", ["pragmatic", "literal"])],
        "window": 6,
        "hide": 0.25,
        "suggestions": True,
        "answered": [1.0, 1.0, 0.7, 1.0, 0.0],
        "adjudicate": 0.5,
        "spread": 0.35,
    },
    "three_each": {
        "annotators": 3,
        "per_item": 3,
        "items": 24,
        "controls": [],
        "window": 5,
        "hide": 0.0,
        "suggestions": False,
        "answered": [1.0, 1.0, 0.8],
        "adjudicate": None,
        "spread": 0.12,
    },
    "two": {
        "annotators": 2,
        "per_item": 2,
        "items": 30,
        "controls": [("virtues", ["folk_knowledge"]), ("love", [])],
        "window": 5,
        "hide": 0.5,
        "suggestions": True,
        "answered": [1.0, 1.0],
        "adjudicate": 1.0,
        "spread": 0.5,
    },
}


def _llm_traits(expression) -> list[str]:
    number = int(expression.text.split()[-1])
    return [] if number % 3 == 0 else [TRAITS[number % 5], TRAITS[(number + 2) % 5]]


def build_scenario(name: str):
    """A round of ``SCENARIOS[name]`` answered through the services at fixed, partly equal, times."""
    spec = SCENARIOS[name]
    rng = np.random.RandomState(sum(map(ord, name)))
    researcher = make_researcher(f"{name}_researcher")
    annotators = [make_annotator(f"{name}_{i}") for i in range(spec["annotators"])]
    n_extra = len(spec["controls"])
    dataset = make_dataset(name=f"{name} corpus", csv=numbered_csv(spec["items"] + n_extra, text=f"{name} câu {{n}}"))
    expressions = list(dataset.expressions.order_by("id"))
    options = {}
    if spec["suggestions"]:
        options["suggestion_set"] = make_suggestions(dataset, traits=_llm_traits, name=f"{name} llm")
    round_ = make_round(
        dataset,
        annotators,
        name=f"{name} round",
        seed=17,
        expressions=dataset.expressions.filter(pk__in=[e.pk for e in expressions[: spec["items"]]]),
        annotators_per_item=spec["per_item"],
        hide_suggestions_fraction=spec["hide"],
        **options,
    )
    round_quality_update(
        round=round_,
        user=researcher,
        control_rate=0.1 if spec["controls"] else 0.0,
        quality_window=spec["window"],
        quality_threshold=0.4,
        fast_seconds=3,
    )
    for expression, (theme, traits) in zip(expressions[spec["items"] :], spec["controls"], strict=True):
        control_item_create(round=round_, user=researcher, expression=expression.text, traits=traits, theme=theme)

    # Each item's "true" theme and traits; an annotator keeps them with probability 1 - spread.
    truth = {}
    for expression in expressions:
        number = int(expression.text.split()[-1])
        theme = THEMES[0] if rng.random_sample() < 0.6 - spec["spread"] else THEMES[number % 7]
        truth[expression.pk] = (theme, {t for t in TRAITS if rng.random_sample() < 0.3})
    queues = []
    for user, share in zip(annotators, spec["answered"], strict=True):
        queue = list(Assignment.objects.filter(item__round=round_, annotator=user).order_by("position"))
        queues.append(queue[: int(round(share * len(queue)))])
    moment, order = 0, []
    while any(queues):
        queue = queues[rng.choice([i for i, q in enumerate(queues) if q])]
        order.append(queue.pop(0))
    for assignment in order:
        item = RoundItem.objects.select_related("expression").get(pk=assignment.item_id)
        theme, traits = truth[item.expression_id]
        if rng.random_sample() < spec["spread"]:
            theme = THEMES[rng.randint(7)]
        traits = {t for t in TRAITS if (t in traits) != (rng.random_sample() < spec["spread"] / 2)}
        suggested = suggested_codes(item)
        decisions = {
            code: "unsure" if rng.random_sample() < 0.05 else ("accept" if code in traits else "reject")
            for code in suggested
        }
        seconds = None if rng.random_sample() < 0.15 else float(rng.choice([0.5, 1.5, 2.9, 3.0, 4.2, 8.0, 20.0]))
        assignment_submit(
            assignment=assignment,
            user=assignment.annotator,
            theme=theme,
            trait_decisions=decisions,
            added_traits=sorted(traits - set(suggested)),
            seconds=seconds,
        )
        # A third of the answers arrive in the same microsecond as the one before.
        moment += 0 if rng.random_sample() < 0.33 else 1
        Assignment.objects.filter(pk=assignment.pk).update(submitted_at=BASE_TIME + datetime.timedelta(seconds=moment))
    if spec["adjudicate"] is not None:
        round_lock(round=round_)
        disputed = list(RoundItem.objects.filter(round=round_, status=ItemStatus.NEEDS_ADJUDICATION).order_by("id"))
        for item in disputed[: int(round(spec["adjudicate"] * len(disputed)))]:
            first = item.assignments.filter(status="submitted").order_by("annotator__username").first()
            answer_traits = {c for c, d in first.trait_decisions.items() if d == "accept"} | set(first.added_traits)
            adjudication_resolve(
                item=item, user=researcher, traits=sorted(answer_traits), theme=first.theme.code, revision=item.revision
            )
    round_.refresh_from_db()
    return round_


def _stable_ids(report: dict, round_) -> dict:
    """The quality report with the ids of the fast answers replaced by their rank in the round:
    primary keys depend on what the database handed out before."""
    items = {
        pk: n for n, pk in enumerate(RoundItem.objects.filter(round=round_).order_by("id").values_list("id", flat=True))
    }
    answers = {
        pk: n
        for n, pk in enumerate(
            Assignment.objects.filter(item__round=round_).order_by("id").values_list("id", flat=True)
        )
    }
    for entry in report["fast_items"]:
        entry["item"] = items[entry["item"]]
        entry["assignment"] = answers[entry["assignment"]]
    return report


def reference_outputs(name: str) -> dict:
    round_ = build_scenario(name)
    return json.loads(
        json.dumps(
            {
                "quality": _stable_ids(_round_quality(round=round_), round_),
                "stats": _round_agreement_stats(round=round_, n_resamples=200, seed=20240601),
            },
            allow_nan=False,
        )
    )


def assert_same(actual, expected, path="$", *, ordered=True):
    """Equal values with the same keys (in the same order unless ``ordered`` is false); floats equal to 1e-9."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert list(actual) == list(expected) if ordered else set(actual) == set(expected), (path, actual, expected)
        for key in expected:
            assert_same(actual[key], expected[key], f"{path}.{key}", ordered=ordered)
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for n, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, f"{path}[{n}]", ordered=ordered)
    elif isinstance(expected, float) and not isinstance(actual, bool):
        assert isinstance(actual, (int, float)) and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9), (
            path,
            actual,
            expected,
        )
    else:
        assert type(actual) is type(expected) and actual == expected, (path, actual, expected)


def as_before_intervals(report: dict) -> dict:
    """The quality report without what the windows' bootstrap intervals added (each window's ``n``,
    ``theme_kappa_ci`` and ``warns``, the smallest window that warns, the interval method), its warnings
    those of before that still warn: a window warns now only when it is large enough and its
    interval's upper end is below the threshold, so every warning now is one of before."""
    report = json.loads(json.dumps(report))
    new = ("n", "theme_kappa_ci", "warns")
    for entry in [*report["annotators"].values(), *report["annotator_details"].values(), *report["pairs"]]:
        entry["windows"] = [{k: v for k, v in w.items() if k not in new} for w in entry["windows"]]
    for pair in report["pair_details"]:
        pair["windows"] = [{k: v for k, v in w.items() if k not in new[1:]} for w in pair["windows"]]
    report["settings"].pop("min_window_items", None)
    report.pop("interval_method", None)
    report["warnings"] = [{k: v for k, v in w.items() if k not in new} for w in report["warnings"]]
    return report


def assert_same_quality(actual: dict, expected: dict) -> None:
    actual, expected = as_before_intervals(actual), as_before_intervals(expected)
    assert all(warning in expected["warnings"] for warning in actual["warnings"]), actual["warnings"]
    actual["warnings"] = expected["warnings"]
    assert_same(actual, expected, "$.quality")


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_it_gives_the_round_figures_computed_before_the_arrays(name):
    path = DATA / f"agreement_reference_{name}.json"
    outputs = reference_outputs(name)
    if os.environ.get("VIVID_WRITE_REFERENCE") == "1":
        DATA.mkdir(exist_ok=True)
        path.write_text(json.dumps(outputs, indent=1, ensure_ascii=False) + "\n")
    reference = json.loads(path.read_text())
    assert_same_quality(outputs.pop("quality"), reference.pop("quality"))
    assert_same(outputs, reference)


@pytest.mark.parametrize(
    "n_items, n_annotators, per_item, seed", [(120, 3, 2, 1), (60, 7, 2, 2), (40, 2, 2, 3), (50, 5, 3, 4)]
)
def test_it_gives_the_figures_of_the_pair_by_pair_reference_on_synthetic_rounds(n_items, n_annotators, per_item, seed):
    """benchmarks/agreement_arrays.py keeps the computation as it was (one scikit-learn call per
    window, label and pair): on its synthetic rounds, where answers often share a time, the two agree."""
    from annotation.selectors.quality import quality_figures
    from annotation.selectors.stats import agreement_figures
    from benchmarks import agreement_arrays

    inputs = agreement_arrays.synthetic_round(n_items, n_annotators, per_item=per_item, seed=seed)
    inputs["quality"]["window"] = 7
    inputs["stats"]["n_resamples"] = 60
    assert_same_quality(quality_figures(**inputs["quality"]), agreement_arrays.old_quality(**inputs["quality"]))
    assert_same(agreement_figures(**inputs["stats"]), agreement_arrays.old_stats(**inputs["stats"]))
