"""Agreement statistics against the libraries they come from, on fixed data and random resamples."""

import io
import itertools
import json

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from annotation import agreement
from annotation.models import Dataset, ItemStatus
from annotation.selectors.stats import round_agreement_stats
from annotation.services import (
    adjudication_resolve,
    assignment_submit,
    exports,
    expression_import,
    round_create,
    round_lock,
    suggested_codes,
    suggestion_set_create,
)
from tests.conftest import make_user

# The tests ask sklearn for undefined kappas on purpose, to check they stay undefined.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")

TRAITS = ["literal", "sino_vietnamese", "uncommon_vocabulary", "folk_knowledge", "pragmatic"]
THEMES = ["love", "virtues", "criticism", "work_nature", "social_relationships", "life_lessons", "other"]

# Twenty items, two annotators, theme indices (7 categories) and one binary trait.
THEME_A = [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 0, 1, 2, 2, 6]
THEME_B = [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 0, 6, 1, 0, 1, 5, 2, 3]
TRAIT_A = [1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0]
TRAIT_B = [1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0]


def two(first, second) -> np.ndarray:
    return np.array([first, second], dtype=float)


def strict_json(value) -> str:
    return json.dumps(value, allow_nan=False)


# --- Point estimates equal the libraries' ----------------------------------------------


def test_it_matches_sklearn_krippendorff_and_statsmodels_on_the_theme():
    result = agreement.label_agreement(two(THEME_A, THEME_B), n_categories=7)
    assert result["n"] == result["n_pairable"] == 20
    assert result["cohen_kappa"] == pytest.approx(cohen_kappa_score(THEME_A, THEME_B, labels=list(range(7))), abs=1e-12)
    expected_alpha = krippendorff.alpha(
        reliability_data=two(THEME_A, THEME_B), value_domain=list(range(7)), level_of_measurement="nominal"
    )
    assert result["krippendorff_alpha"] == pytest.approx(expected_alpha, abs=1e-12)
    table, _ = aggregate_raters(np.array([THEME_A, THEME_B]).T, n_cat=7)
    assert result["fleiss_kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    po = np.mean(np.array(THEME_A) == np.array(THEME_B))
    assert po == 0.8
    assert result["percent_agreement"] == pytest.approx(80.0)
    assert result["observed_agreement"] == pytest.approx(0.8)
    assert result["pabak"] == pytest.approx((7 * 0.8 - 1) / 6)
    assert "prevalence_index" not in result
    assert result["reasons"] == {"fleiss_kappa_ci": agreement.COHEN_FOR_TWO}
    strict_json(result)


def test_it_matches_the_libraries_on_a_binary_trait_with_prevalence_and_bias():
    result = agreement.label_agreement(two(TRAIT_A, TRAIT_B), n_categories=2, binary=True)
    assert result["cohen_kappa"] == pytest.approx(cohen_kappa_score(TRAIT_A, TRAIT_B, labels=[0, 1]), abs=1e-12)
    assert result["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=two(TRAIT_A, TRAIT_B), value_domain=[0, 1], level_of_measurement="nominal"),
        abs=1e-12,
    )
    a, b = np.array(TRAIT_A), np.array(TRAIT_B)
    both_present, both_absent = np.sum((a == 1) & (b == 1)), np.sum((a == 0) & (b == 0))
    a_only, b_only = np.sum((a == 1) & (b == 0)), np.sum((a == 0) & (b == 1))
    assert (both_present, both_absent, a_only, b_only) == (5, 12, 2, 1)
    assert result["prevalence_index"] == pytest.approx(abs(5 - 12) / 20)
    assert result["bias_index"] == pytest.approx(abs(2 - 1) / 20)
    assert result["pabak"] == pytest.approx(2 * (17 / 20) - 1)
    assert result["prevalence"] == pytest.approx((7 + 6) / 40)


def test_it_gives_a_bootstrap_interval_around_the_estimate_reproducibly():
    rng = np.random.default_rng(3)
    first = rng.integers(0, 7, 400)
    second = np.where(rng.random(400) < 0.7, first, rng.integers(0, 7, 400))
    ratings = two(first, second)
    result = agreement.label_agreement(ratings, n_categories=7, n_resamples=500, seed=11)
    for key in ("cohen_kappa", "krippendorff_alpha"):
        ci = result[f"{key}_ci"]
        assert ci["low"] < result[key] < ci["high"]
        assert ci["high"] - ci["low"] < 0.2
    again = agreement.label_agreement(ratings, n_categories=7, n_resamples=500, seed=11)
    assert again["cohen_kappa_ci"] == result["cohen_kappa_ci"]
    other_seed = agreement.label_agreement(ratings, n_categories=7, n_resamples=500, seed=12)
    assert other_seed["cohen_kappa_ci"] != result["cohen_kappa_ci"]


# --- The intervals are the reference bootstrap's -----------------------------------------------
# (The vectorised coefficients behind them are checked against the libraries in tests/core/test_statistics.py.)


def test_it_gives_the_interval_scipy_gives_resampling_items():
    rng = np.random.default_rng(21)
    first = rng.integers(0, 3, 60)
    second = np.where(rng.random(60) < 0.6, first, rng.integers(0, 3, 60))
    result = agreement.label_agreement(two(first, second), n_categories=3, n_resamples=400, seed=9)

    def kappa(indices, axis=-1):
        return cohen_kappa_score(first[indices], second[indices], labels=[0, 1, 2])

    expected = stats.bootstrap(
        (np.arange(60),),
        kappa,
        n_resamples=400,
        vectorized=False,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(9),
    ).confidence_interval
    assert [result["cohen_kappa_ci"]["low"], result["cohen_kappa_ci"]["high"]] == pytest.approx(
        [expected.low, expected.high], abs=1e-12
    )


def test_it_resamples_shown_and_hidden_items_each_in_their_group_as_scipy():
    rng = np.random.default_rng(22)
    shown, hidden = rng.random(40).round(), rng.random(15).round()
    result = agreement.rate_difference(shown, hidden, n_resamples=300, seed=4)
    expected = stats.bootstrap(
        (shown, hidden),
        lambda a, b, axis=-1: a.mean(axis=axis) - b.mean(axis=axis),
        n_resamples=300,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(4),
    ).confidence_interval
    assert [result["difference_ci"]["low"], result["difference_ci"]["high"]] == pytest.approx(
        [expected.low, expected.high], abs=1e-12
    )


# --- Degenerate data: None with a reason, never NaN or a crash -------------------------------


@pytest.mark.parametrize("n_categories, binary", [(7, False), (2, True)])
def test_it_reports_undefined_figures_with_reasons_when_there_are_no_items(n_categories, binary):
    result = agreement.label_agreement(np.empty((2, 0)), n_categories=n_categories, binary=binary)
    assert result["n"] == 0
    for key in ("cohen_kappa", "krippendorff_alpha", "percent_agreement", "pabak", "fleiss_kappa", "cohen_kappa_ci"):
        assert result[key] is None
        assert result["reasons"][key] == agreement.NO_ITEMS
    strict_json(result)


def test_it_reports_a_single_category_as_undefined_but_keeps_percent_agreement():
    result = agreement.label_agreement(np.zeros((2, 6)), n_categories=2, binary=True)
    assert result["percent_agreement"] == 100.0 and result["pabak"] == 1.0
    assert result["prevalence_index"] == 1.0 and result["bias_index"] == 0.0
    for key in ("cohen_kappa", "krippendorff_alpha", "fleiss_kappa"):
        assert result[key] is None and result["reasons"][key] == agreement.SINGLE_CATEGORY
        assert result[f"{key}_ci"] is None
    strict_json(result)


def test_it_handles_a_single_item_and_items_missing_a_rating():
    one = agreement.label_agreement(two([3], [3]), n_categories=7)
    assert one["n"] == 1 and one["percent_agreement"] == 100.0
    assert one["cohen_kappa"] is None and one["krippendorff_alpha"] is None
    assert one["cohen_kappa_ci"] is None and one["reasons"]["cohen_kappa_ci"]
    strict_json(one)
    # The third item has one rating: out of n and of kappa, ignored by alpha.
    partial = np.array([[0, 1, 1, 0], [0, 1, np.nan, 1]])
    result = agreement.label_agreement(partial, n_categories=2, binary=True, n_resamples=50)
    assert result["n"] == result["n_pairable"] == 3
    assert result["cohen_kappa"] == pytest.approx(cohen_kappa_score([0, 1, 0], [0, 1, 1], labels=[0, 1]))
    assert result["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=partial, value_domain=[0, 1], level_of_measurement="nominal")
    )
    strict_json(result)


def test_it_reports_too_few_annotators():
    result = agreement.label_agreement(np.array([[0.0, 1.0]]), n_categories=2, per_item=1)
    assert result["cohen_kappa"] is None and result["reasons"]["cohen_kappa"] == agreement.TOO_FEW_ANNOTATORS
    strict_json(result)


# --- More than two annotators ----------------------------------------------------------------


def test_it_uses_fleiss_kappa_when_three_annotators_rate_every_item():
    rng = np.random.default_rng(9)
    truth = rng.integers(0, 7, 50)
    ratings = np.array([np.where(rng.random(50) < 0.75, truth, rng.integers(0, 7, 50)) for _ in range(3)], dtype=float)
    result = agreement.label_agreement(ratings, n_categories=7, per_item=3, annotators=["a", "b", "c"], n_resamples=200)
    table, _ = aggregate_raters(ratings.T.astype(int), n_cat=7)
    assert result["fleiss_kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert result["fleiss_kappa_ci"]["low"] < result["fleiss_kappa"] < result["fleiss_kappa_ci"]["high"]
    assert result["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=ratings, value_domain=list(range(7)), level_of_measurement="nominal"),
        abs=1e-12,
    )
    assert result["cohen_kappa"] is None and result["reasons"]["cohen_kappa"] == agreement.NOT_TWO_ANNOTATORS
    pairs = {tuple(p["annotators"]): p for p in result["pairwise"]}
    assert set(pairs) == {("a", "b"), ("a", "c"), ("b", "c")}
    for (i, first), (j, second) in itertools.combinations(enumerate("abc"), 2):
        pair = pairs[(first, second)]
        assert pair["n"] == 50
        assert pair["cohen_kappa"] == pytest.approx(cohen_kappa_score(ratings[i], ratings[j], labels=list(range(7))))
    # Percent agreement counts agreeing pairs: the mean of the three pairs' agreement.
    assert result["percent_agreement"] == pytest.approx(np.mean([p["percent_agreement"] for p in pairs.values()]))
    strict_json(result)


def test_it_uses_fleiss_on_items_with_all_ratings_when_four_annotators_share_items():
    """Four annotators, two per item, as round_create spreads them; some items await their second review."""
    rng = np.random.default_rng(4)
    n = 60
    ratings = np.full((4, n), np.nan)
    for item, (i, j) in zip(range(n), itertools.cycle(itertools.combinations(range(4), 2))):
        ratings[i, item] = rng.integers(0, 2)
        ratings[j, item] = ratings[i, item] if rng.random() < 0.8 else 1 - ratings[i, item]
    ratings[3, 57:] = np.nan  # unfinished: annotator d has not submitted these yet
    complete = np.flatnonzero((~np.isnan(ratings)).sum(axis=0) == 2)
    result = agreement.label_agreement(ratings, n_categories=2, binary=True, annotators=list("abcd"), n_resamples=200)
    assert result["n"] == complete.size < n
    codes = np.array([column[~np.isnan(column)] for column in ratings[:, complete].T]).astype(int)
    table, _ = aggregate_raters(codes, n_cat=2)
    assert result["fleiss_kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert result["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=ratings, value_domain=[0, 1], level_of_measurement="nominal"), abs=1e-12
    )
    assert len(result["pairwise"]) == 6
    for pair in result["pairwise"]:
        i, j = ("abcd".index(a) for a in pair["annotators"])
        both = ~np.isnan(ratings[i]) & ~np.isnan(ratings[j])
        assert pair["n"] == both.sum()
        if pair["cohen_kappa"] is not None:
            assert pair["cohen_kappa"] == pytest.approx(
                cohen_kappa_score(ratings[i, both], ratings[j, both], labels=[0, 1])
            )
    assert result["percent_agreement"] == pytest.approx(100 * np.mean(codes[:, 0] == codes[:, 1]))
    strict_json(result)


def test_it_pools_the_confusion_matrix_over_annotator_pairs():
    ratings = np.array([[0, 1, np.nan], [0, np.nan, 2], [np.nan, 2, 2]])
    confusion = agreement.pooled_confusion(ratings, 3)
    assert confusion.tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 1]]


def test_it_measures_a_rate_difference_with_an_interval():
    shown = np.array([1.0] * 80 + [0.0] * 20)
    hidden = np.array([1.0] * 50 + [0.0] * 50)
    result = agreement.rate_difference(shown, hidden, n_resamples=500)
    assert result["difference"] == pytest.approx(0.3)
    assert result["difference_ci"]["low"] < 0.3 < result["difference_ci"]["high"]
    assert result["difference_ci"]["low"] > 0
    empty = agreement.rate_difference(shown, np.array([]))
    assert empty["difference"] is None and empty["reasons"]["difference"] == agreement.NO_HIDDEN_ITEMS
    strict_json(empty)


def test_it_gives_the_same_interval_whether_labels_are_bootstrapped_together_or_alone():
    together = agreement.labels_agreement(
        {"theme": (two(THEME_A, THEME_B), 7, False), "trait": (two(TRAIT_A, TRAIT_B), 2, True)}, n_resamples=300
    )
    alone = agreement.label_agreement(two(TRAIT_A, TRAIT_B), n_categories=2, binary=True, n_resamples=300)
    assert together["trait"]["cohen_kappa_ci"] == alone["cohen_kappa_ci"]
    assert together["trait"]["krippendorff_alpha_ci"] == alone["krippendorff_alpha_ci"]


def test_it_writes_one_csv_row_per_label():
    stats = {
        "theme": agreement.label_agreement(two(THEME_A, THEME_B), n_categories=7, n_resamples=100),
        "traits": {
            "literal": agreement.label_agreement(two(TRAIT_A, TRAIT_B), n_categories=2, binary=True, n_resamples=100)
        },
    }
    lines = exports.stats_csv(stats).splitlines()
    assert lines[0].split(",") == exports.CSV_COLUMNS
    assert [line.split(",")[0] for line in lines[1:]] == ["theme", "literal"]


# --- A round in the database, through the CLI ----------------------------------------------


def build_round(*, annotators, name="Agreement round", n_items=24, hide=0.25, seed=5):
    """A round whose labels are a fixed function of the item and annotator, submitted through the services.

    Returns the round and {(username, expression text): (theme, trait set)}.
    """
    rows = "".join(f"Câu {n},Giải nghĩa {n}\n" for n in range(n_items))
    expression_import(
        dataset_name=f"{name} corpus", filename="c.csv", content=("expression,explanation\n" + rows).encode()
    )
    dataset = Dataset.objects.get(name=f"{name} corpus")
    expressions = list(dataset.expressions.order_by("id"))
    predictions = [
        (e.pk, [TRAITS[i % 5], TRAITS[(i + 2) % 5]] if i % 3 else [], "raw") for i, e in enumerate(expressions)
    ]
    suggestions = suggestion_set_create(dataset=dataset, name="llm", model_name="gpt-test", predictions=predictions)
    round_ = round_create(
        name=name,
        dataset=dataset,
        annotators=annotators,
        suggestion_set=suggestions,
        hide_suggestions_fraction=hide,
        seed=seed,
    )
    number = {e.pk: i for i, e in enumerate(expressions)}
    labels = {}
    for item in round_.items.select_related("expression", "round"):
        i = number[item.expression_id]
        for position, assignment in enumerate(
            item.assignments.select_related("annotator").order_by("annotator__username")
        ):
            disagree = position == 1 and i % 4 == 0
            theme = THEMES[(i + (1 if disagree else 0)) % 7]
            traits = {TRAITS[i % 5]} | ({TRAITS[(i + 1) % 5]} if disagree or i % 5 == 0 else set())
            suggested = suggested_codes(item)
            assignment_submit(
                assignment=assignment,
                user=assignment.annotator,
                theme=theme,
                trait_decisions={code: "accept" if code in traits else "reject" for code in suggested},
                added_traits=sorted(traits - set(suggested)),
            )
            labels[(assignment.annotator.username, item.expression.text)] = (theme, traits)
    return round_, labels


def run_stats(name: str, fmt: str = "json") -> str:
    out = io.StringIO()
    call_command("agreement_stats", "--round", name, "--format", fmt, "--resamples", "200", stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_it_prints_the_json_contract_with_library_values():
    a, b = make_user("người_a"), make_user("annotator_b")
    round_, labels = build_round(annotators=[a, b])
    text = run_stats(round_.name)
    assert "người_a" in text  # ensure_ascii=False
    assert text.startswith("{\n  ")  # indent 2
    stats = json.loads(text)
    assert stats["n_items"] == 24
    assert stats["annotators"] == sorted(["người_a", "annotator_b"])
    assert set(stats["traits"]) == set(TRAITS)
    for values in [stats["theme"], *stats["traits"].values()]:
        assert {"cohen_kappa", "krippendorff_alpha", "percent_agreement", "n"} <= set(values)
        assert values["n"] == 24
    for key in ("theme_confusion", "vs_final", "vs_llm", "anchoring", "distributions"):
        assert key in stats
    assert stats["interval_method"] == {
        "bootstrap": "items",
        "resamples": 200,
        "confidence": 0.95,
        "method": "percentile",
    }

    texts = sorted({text for _user, text in labels})
    first, second = stats["annotators"]
    theme_a = [THEMES.index(labels[(first, t)][0]) for t in texts]
    theme_b = [THEMES.index(labels[(second, t)][0]) for t in texts]
    assert stats["theme"]["cohen_kappa"] == pytest.approx(
        cohen_kappa_score(theme_a, theme_b, labels=list(range(7))), abs=1e-12
    )
    assert stats["theme"]["percent_agreement"] == pytest.approx(100 * np.mean(np.array(theme_a) == np.array(theme_b)))
    assert stats["theme"]["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(
            reliability_data=[theme_a, theme_b], value_domain=list(range(7)), level_of_measurement="nominal"
        )
    )
    for code in TRAITS:
        trait_a = [int(code in labels[(first, t)][1]) for t in texts]
        trait_b = [int(code in labels[(second, t)][1]) for t in texts]
        expected = cohen_kappa_score(trait_a, trait_b, labels=[0, 1], replace_undefined_by=np.nan)
        assert stats["traits"][code]["cohen_kappa"] == pytest.approx(expected, abs=1e-12)
    confusion = np.array(stats["theme_confusion"]["counts"])
    assert confusion.sum() == 24 and np.trace(confusion) == 18
    assert confusion[THEMES.index(labels[(first, "Câu 0")][0]), THEMES.index(labels[(second, "Câu 0")][0])] >= 1
    assert stats["distributions"]["source"] == "final"  # the unanimous items already have final labels
    assert stats["vs_llm"]["available"] and stats["anchoring"]["available"]
    assert (
        stats["anchoring"]["overall"]["n_hidden"] + stats["anchoring"]["overall"]["n_shown"] == 24
    )  # every item has a suggestion (some with no trait)
    # The anchoring control, recomputed by hand: per item, the annotators' mean match with the LLM.
    hidden_texts = set(round_.items.filter(suggestions_hidden=True).values_list("expression__text", flat=True))
    assert len(hidden_texts) == 6

    def llm_of(text):
        i = int(text.split()[-1])
        return {TRAITS[i % 5], TRAITS[(i + 2) % 5]} if i % 3 else set()

    def item_rate(text, codes):
        return np.mean(
            [np.mean([(c in labels[(u, text)][1]) == (c in llm_of(text)) for c in codes]) for u in stats["annotators"]]
        )

    for key, codes in [("overall", TRAITS), *[(code, [code]) for code in TRAITS]]:
        entry = stats["anchoring"]["overall"] if key == "overall" else stats["anchoring"]["traits"][key]
        shown = np.mean([item_rate(t, codes) for t in texts if t not in hidden_texts])
        hidden = np.mean([item_rate(t, codes) for t in texts if t in hidden_texts])
        assert entry["match_rate_shown"] == pytest.approx(shown) and entry["match_rate_hidden"] == pytest.approx(hidden)
        assert entry["difference"] == pytest.approx(shown - hidden)
        assert entry["difference_ci"]["low"] <= entry["difference"] <= entry["difference_ci"]["high"]
    # Annotators against the LLM, on the shown items only.
    shown_texts = [t for t in texts if t not in hidden_texts]
    llm_codes = [int("folk_knowledge" in llm_of(t)) for t in shown_texts]
    theirs = [int("folk_knowledge" in labels[(first, t)][1]) for t in shown_texts]
    vs_llm = stats["vs_llm"]["traits"]["folk_knowledge"]["annotators"][first]
    assert vs_llm["n"] == 18
    assert vs_llm["cohen_kappa"] == pytest.approx(cohen_kappa_score(llm_codes, theirs, labels=[0, 1]))


@pytest.mark.django_db
def test_it_reports_agreement_with_the_final_labels_after_adjudication(adjudicator):
    a, b = make_user("ann_1"), make_user("ann_2")
    round_, labels = build_round(annotators=[a, b], name="Final round")
    round_lock(round=round_)
    disputed = list(round_.items.filter(status=ItemStatus.NEEDS_ADJUDICATION).select_related("expression"))
    assert len(disputed) == 6
    for item in disputed:
        # The adjudicator sides with ann_1 every time.
        theme, traits = labels[("ann_1", item.expression.text)]
        adjudication_resolve(item=item, user=adjudicator, traits=sorted(traits), theme=theme, revision=item.revision)
    stats = round_agreement_stats(round=round_, n_resamples=100)
    assert stats["vs_final"]["n_items"] == 24
    first = stats["vs_final"]["annotators"]["ann_1"]
    assert first["theme"]["cohen_kappa"] == 1.0 and first["theme"]["percent_agreement"] == 100.0
    second = stats["vs_final"]["annotators"]["ann_2"]
    assert second["theme"]["percent_agreement"] == pytest.approx(100 * 18 / 24)
    texts = sorted({text for _user, text in labels})
    final_themes = [THEMES.index(labels[("ann_1", t)][0]) for t in texts]
    theirs = [THEMES.index(labels[("ann_2", t)][0]) for t in texts]
    assert second["theme"]["cohen_kappa"] == pytest.approx(
        cohen_kappa_score(theirs, final_themes, labels=list(range(7)))
    )
    # Distributions of the final labels: Figures 2 and 3 of the paper.
    themes = stats["distributions"]["themes"]
    assert sum(v["count"] for v in themes.values()) == 24
    assert sum(v["percent"] for v in themes.values()) == pytest.approx(100)
    strict_json(stats)


@pytest.mark.django_db
def test_it_writes_csv_rows_for_the_theme_then_each_trait():
    a, b = make_user("ann_1"), make_user("ann_2")
    round_, _labels = build_round(annotators=[a, b], name="CSV round", n_items=8, hide=0)
    lines = run_stats(round_.name, "csv").splitlines()
    assert lines[0].split(",")[:4] == ["label", "n", "percent_agreement", "observed_agreement"]
    assert [line.split(",")[0] for line in lines[1:]] == ["theme", *TRAITS]
    stats = json.loads(run_stats(round_.name))
    assert stats["anchoring"]["overall"]["difference"] is None
    assert stats["anchoring"]["overall"]["reasons"]["difference"] == agreement.NO_HIDDEN_ITEMS


@pytest.mark.django_db
def test_it_names_an_unknown_round_in_the_error():
    with pytest.raises(CommandError, match="no round named 'Nowhere'"):
        call_command("agreement_stats", "--round", "Nowhere", "--format", "json")


@pytest.mark.django_db
def test_it_reports_a_round_without_reviews_without_crashing():
    a, b = make_user("ann_1"), make_user("ann_2")
    expression_import(
        dataset_name="Empty corpus", filename="c.csv", content="expression,explanation\nMột,Hai\n".encode()
    )
    round_create(name="Empty", dataset=Dataset.objects.get(name="Empty corpus"), annotators=[a, b])
    stats = json.loads(run_stats("Empty"))
    assert stats["theme"]["n"] == 0 and stats["theme"]["cohen_kappa"] is None
    assert stats["vs_llm"] == {"available": False, "reason": agreement.NO_SUGGESTIONS, "traits": {}}
    assert stats["distributions"]["source"] == "annotators" and stats["distributions"]["n"] == 0


@pytest.mark.django_db
def test_it_reports_a_round_with_suggestions_but_no_reviews_without_crashing():
    a, b = make_user("ann_1"), make_user("ann_2")
    expression_import(
        dataset_name="Quiet corpus", filename="c.csv", content="expression,explanation\nMột,Hai\nBa,Bốn\n".encode()
    )
    dataset = Dataset.objects.get(name="Quiet corpus")
    llm = suggestion_set_create(
        dataset=dataset,
        name="llm",
        model_name="m",
        predictions=[(e.pk, ["literal"], "") for e in dataset.expressions.all()],
    )
    round_create(
        name="Quiet", dataset=dataset, annotators=[a, b], suggestion_set=llm, hide_suggestions_fraction=0.5, seed=1
    )
    stats = json.loads(run_stats("Quiet"))
    assert stats["anchoring"]["available"] is True
    overall = stats["anchoring"]["overall"]
    assert overall["difference"] is None and overall["n_shown"] == overall["n_hidden"] == 0
    assert stats["vs_llm"]["traits"]["literal"]["cohen_kappa"] is None
    assert stats["vs_final"]["annotators"]["ann_1"]["theme"]["reasons"]["cohen_kappa"] == agreement.NO_ITEMS


@pytest.mark.django_db
def test_it_uses_fleiss_and_pairwise_kappa_for_a_four_annotator_round():
    annotators = [make_user(f"ann_{n}") for n in range(4)]
    round_, labels = build_round(annotators=annotators, name="Four", n_items=24)
    stats = round_agreement_stats(round=round_, n_resamples=100)
    assert stats["theme"]["cohen_kappa"] is None
    assert len(stats["theme"]["pairwise"]) == 6
    assert stats["theme"]["n"] == 24
    codes = []
    for text in sorted({t for _u, t in labels}):
        codes.append([THEMES.index(theme) for (user, t), (theme, _traits) in sorted(labels.items()) if t == text])
    table, _ = aggregate_raters(np.array(codes), n_cat=7)
    assert stats["theme"]["fleiss_kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert stats["theme_confusion"]["pooled_over_pairs"] is True
