"""The judge-versus-human statistics: every figure equals scikit-learn / scipy / krippendorff on fixed data,
the pairing rule, reproducible intervals, unscored items, degenerate data and the judge_agreement CLI."""

import csv
import io
import json

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from evaluation import agreement
from evaluation.models import HumanRating, RatingStatus, RunItem
from evaluation.selectors.report import human_report
from llm.models import ModelConfig
from tests.conftest import make_user

from .factories import make_dataset, make_generation_run, make_judge_run, numbered_csv, stored_model

pytestmark = pytest.mark.django_db

LABELS = [0, 1, 2, 3, 4, 5]
N_ITEMS = 12
# Item index -> (rater A score, rater B score or None when B did not rate it).
HUMAN = {
    0: (5, 4),
    1: (4, 4),
    2: (3, 2),
    3: (2, 2),
    4: (1, 0),
    5: (0, 1),
    6: (5, None),
    7: (4, None),
    8: (3, None),
    9: (2, None),
    10: (1, None),
    11: (3, None),
}
# Judge (zero-shot, seed 0): item 11 unscored.
JUDGE = {0: 5, 1: 3, 2: 3, 3: 1, 4: 1, 5: 0, 6: 4, 7: 4, 8: 2, 9: 2, 10: 0, 11: None}
JUDGE_REPEAT = {0: 5, 1: 4, 2: 3, 3: 1, 4: 2, 5: 0, 6: 4, 7: 3, 8: 2, 9: 2, 10: 0, 11: 3}


def kappa(a, b, weights=None):
    return cohen_kappa_score(a, b, labels=LABELS, weights=weights)


@pytest.fixture
def corpus(db):
    return make_dataset(name="Agreement corpus", csv=numbered_csv(N_ITEMS, explanation="Giải thích {n}"))


@pytest.fixture
def models_(db):
    return {
        "gen": stored_model(name="gen-model", model_id="g"),
        "judge": stored_model(name="judge-model", model_id="j"),
        "other": stored_model(name="other-judge", model_id="o"),
    }


@pytest.fixture
def generation(corpus, models_):
    return make_generation_run(corpus, model=models_["gen"], reply="Ý nghĩa của {expression.text}")


def gen_items(run):
    return list(run.items.order_by("id"))


def make_judge(generation, scores, *, strategy="zero-shot", seed=0, model=None, status="done"):
    """A judge run of ``generation`` by "judge-model" unless told otherwise."""
    model = model or ModelConfig.objects.get(name="judge-model")
    return make_judge_run(generation, scores, model=model, strategy=strategy, seed=seed, status=status)


@pytest.fixture
def raters(db):
    return make_user("rater_a"), make_user("rater_b")


def rate(generation, index, rater, score, status=RatingStatus.SUBMITTED, **dimensions):
    item = gen_items(generation)[index]
    return HumanRating.objects.create(run=generation, item=item, rater=rater, score=score, status=status, **dimensions)


@pytest.fixture
def rated(generation, raters):
    a, b = raters
    for index, (score_a, score_b) in HUMAN.items():
        rate(generation, index, a, score_a, accuracy=score_a, completeness=4, native_alignment=3)
        if score_b is not None:
            rate(generation, index, b, score_b, accuracy=score_b, completeness=2, native_alignment=3)
    # A draft never counts.
    rate(generation, 6, b, 0, status=RatingStatus.DRAFT)
    return generation


def expected_judge_pairs(judge_scores):
    judge, human, items = [], [], []
    for index, (score_a, score_b) in HUMAN.items():
        for score in (score_a, score_b):
            if score is not None and judge_scores[index] is not None:
                judge.append(judge_scores[index])
                human.append(score)
                items.append(index)
    return judge, human, items


def scipy_ci(a, b, items, statistic, seed=0, n_resamples=1000):
    """The interval computed directly with scipy, resampling items and taking all of their pairs."""
    a, b = np.asarray(a), np.asarray(b)
    groups = sorted(set(items))
    rows = [np.asarray([i for i, g in enumerate(items) if g == group]) for group in groups]

    def on_items(indices):
        picked = np.concatenate([rows[int(i)] for i in indices])
        return statistic(a[picked], b[picked])

    result = stats.bootstrap(
        (np.arange(len(groups)),),
        on_items,
        n_resamples=n_resamples,
        vectorized=False,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
    )
    return [result.confidence_interval.low, result.confidence_interval.high]


# --- the pure computations -------------------------------------------------------------------------------


def test_it_computes_every_coefficient_like_sklearn_and_scipy():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 6, 80).tolist()
    b = [min(5, max(0, x + int(rng.integers(-1, 2)))) for x in a]
    pairs = [(x, y, i) for i, (x, y) in enumerate(zip(a, b, strict=True))]
    figures = agreement.coefficients(pairs)
    assert figures["n"] == 80
    assert figures["cohen_kappa"] == pytest.approx(kappa(a, b))
    assert figures["cohen_kappa_linear"] == pytest.approx(kappa(a, b, "linear"))
    assert figures["cohen_kappa_quadratic"] == pytest.approx(kappa(a, b, "quadratic"))
    assert figures["kendall_tau"] == pytest.approx(stats.kendalltau(a, b, variant="b").statistic)
    assert figures["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic)
    expected_matrix = [[sum(1 for x, y in zip(a, b, strict=True) if x == i and y == j) for j in LABELS] for i in LABELS]
    assert figures["confusion"] == expected_matrix


def test_it_passes_all_six_labels_to_kappa():
    # Scores 1, 2 and 4 only: the weighted kappa depends on the label set (distances), so it must be 0-5.
    a, b = [1, 4, 4, 1, 2, 4], [4, 4, 1, 1, 4, 2]
    figures = agreement.coefficients([(x, y, i) for i, (x, y) in enumerate(zip(a, b, strict=True))])
    assert figures["cohen_kappa_linear"] == pytest.approx(kappa(a, b, "linear"))
    assert figures["cohen_kappa_quadratic"] == pytest.approx(kappa(a, b, "quadratic"))
    assert figures["cohen_kappa_quadratic"] != pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))


def test_it_bootstraps_items_with_a_reproducible_interval():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 6, 60).tolist()
    b = [min(5, x + int(rng.integers(0, 2))) for x in a]
    items = [i // 2 for i in range(60)]  # two pairs per item, like two raters
    pairs = list(zip(a, b, items, strict=True))
    first = agreement.coefficients(pairs, seed=5)
    again = agreement.coefficients(pairs, seed=5)
    assert first["cohen_kappa_ci"] == again["cohen_kappa_ci"]
    assert first["kendall_tau_ci"] == again["kendall_tau_ci"]
    assert first["cohen_kappa_ci"] == pytest.approx(scipy_ci(a, b, items, kappa, seed=5))
    assert first["kendall_tau_ci"] == pytest.approx(
        scipy_ci(a, b, items, lambda x, y: stats.kendalltau(x, y).statistic, seed=5)
    )
    other = agreement.coefficients(pairs, seed=6)
    assert other["cohen_kappa_ci"] != first["cohen_kappa_ci"]
    low, high = first["cohen_kappa_ci"]
    assert low <= first["cohen_kappa"] <= high


def test_it_gives_null_with_a_reason_on_degenerate_data():
    empty = agreement.coefficients([])
    assert empty["n"] == 0 and empty["cohen_kappa"] is None and empty["kendall_tau_ci"] is None
    assert empty["reasons"]["cohen_kappa"] == "no pairs"

    one = agreement.coefficients([(3, 3, 1)])
    assert one["cohen_kappa"] is None and "fewer than two" in one["reasons"]["cohen_kappa"]

    constant = agreement.coefficients([(3, 3, 1), (3, 3, 2), (3, 3, 3)])
    assert constant["cohen_kappa"] is None and "chance agreement" in constant["reasons"]["cohen_kappa"]
    assert constant["kendall_tau"] is None and "same score" in constant["reasons"]["kendall_tau"]
    assert constant["cohen_kappa_ci"] is None

    one_item = agreement.coefficients([(3, 3, 1), (2, 2, 1), (4, 1, 1)])
    assert one_item["kendall_tau"] is not None
    assert one_item["kendall_tau_ci"] is None and "fewer than two items" in one_item["reasons"]["kendall_tau_ci"]
    text = json.dumps([empty, one, constant, one_item], allow_nan=False)  # no NaN anywhere
    assert "NaN" not in text


def test_it_pairs_each_rating_with_the_judge_score_of_its_item():
    ratings = [(1, "a", 4), (1, "b", 5), (2, "a", 3), (3, "a", 2), (4, "a", 1)]
    pairs, left_out = agreement.judge_pairs({1: 4, 2: None, 3: 2}, ratings)
    assert pairs == [(4, 4, 1), (4, 5, 1), (2, 2, 3)]  # the shared item gives one pair per rater
    assert left_out == {"n_unscored_items": 1, "n_unscored_pairs": 1, "n_not_judged": 1}


def test_it_pairs_every_two_raters_of_a_shared_item():
    ratings = [(1, 10, 4), (1, 11, 5), (1, 12, 3), (2, 10, 2), (2, 11, 2), (3, 10, 1)]
    assert agreement.rater_pairs(ratings) == [(4, 5, 1), (4, 3, 1), (5, 3, 1), (2, 2, 2)]


def test_it_measures_self_agreement_with_krippendorff_alpha():
    repeats = [{1: 3, 2: 4, 3: None, 4: 1}, {1: 3, 2: 5, 3: 2, 4: 1}, {1: 2, 2: 5, 3: 2}]
    expected = krippendorff.alpha(
        reliability_data=[[3, 4, np.nan, 1], [3, 5, 2, 1], [2, 5, 2, np.nan]], level_of_measurement="interval"
    )
    result = agreement.self_agreement(repeats)
    assert result["n_repeats"] == 3 and result["n_items"] == 4
    assert result["alpha"] == pytest.approx(expected)
    single = agreement.self_agreement([{1: 3}])
    assert single["alpha"] is None and "single run" in single["reason"]
    constant = agreement.self_agreement([{1: 3, 2: 3}, {1: 3, 2: 3}])
    assert constant["alpha"] is None and "no variation" in constant["reason"]


# --- the report from the database ------------------------------------------------------------------------


def test_it_reports_a_judge_run_against_the_humans(rated):
    judge = make_judge(rated, JUDGE)
    make_judge(rated, {i: 3 for i in range(N_ITEMS)}, status="running")  # not finished: left out
    report = human_report(run=rated, use_cache=False)
    figures = report["judges"][str(judge.pk)]
    a, b, items = expected_judge_pairs(JUDGE)
    assert figures["n"] == len(a) == 17  # 6 shared items x 2 raters + 5 items x 1 rater (item 11 unscored)
    assert figures["n_items"] == 11
    assert figures["n_unscored_items"] == 1 and figures["n_unscored_pairs"] == 1
    assert figures["mean"] == pytest.approx(np.mean(a))
    assert figures["human_mean"] == pytest.approx(np.mean(b))
    assert figures["cohen_kappa"] == pytest.approx(kappa(a, b))
    assert figures["cohen_kappa_linear"] == pytest.approx(kappa(a, b, "linear"))
    assert figures["cohen_kappa_quadratic"] == pytest.approx(kappa(a, b, "quadratic"))
    assert figures["kendall_tau"] == pytest.approx(stats.kendalltau(a, b, variant="b").statistic)
    assert figures["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic)
    assert figures["cohen_kappa_ci"] == pytest.approx(scipy_ci(a, b, items, kappa))
    assert figures["kendall_tau_ci"] == pytest.approx(
        scipy_ci(a, b, items, lambda x, y: stats.kendalltau(x, y).statistic)
    )
    assert figures["strategy"] == "zero-shot" and figures["judge_model"] == "judge-model"
    assert sum(map(sum, figures["confusion"])) == 17
    assert report["n_judge_runs_pending"] == 1 and len(report["judges"]) == 1


def test_it_reports_the_humans_and_their_inter_rater_agreement(rated):
    report = human_report(run=rated, use_cache=False)
    human = report["human"]
    scores = [s for pair in HUMAN.values() for s in pair if s is not None]
    assert human["n_ratings"] == 18 and human["n_raters"] == 2
    assert human["mean"] == pytest.approx(np.mean(scores))
    assert human["dimensions"]["completeness"] == pytest.approx((12 * 4 + 6 * 2) / 18)
    shared = [(x, y) for x, y in HUMAN.values() if y is not None]
    a, b = [x for x, _ in shared], [y for _, y in shared]
    inter = human["inter_rater"]
    assert inter["n"] == 6 and inter["n_items"] == 6
    assert inter["cohen_kappa"] == pytest.approx(kappa(a, b))
    assert inter["cohen_kappa_quadratic"] == pytest.approx(kappa(a, b, "quadratic"))
    assert inter["kendall_tau"] == pytest.approx(stats.kendalltau(a, b).statistic)
    assert inter["cohen_kappa_ci"] == pytest.approx(scipy_ci(a, b, list(range(6)), kappa))
    assert report["table1"][0]["row"] == "human" and report["table1"][0]["cohen_kappa"] == inter["cohen_kappa"]


def test_it_groups_repeated_judge_runs_for_noise(rated):
    first = make_judge(rated, JUDGE, seed=0)
    second = make_judge(rated, JUDGE_REPEAT, seed=1)
    other = make_judge(rated, JUDGE, strategy="aspect", model=ModelConfig.objects.get(name="other-judge"))
    report = human_report(run=rated, use_cache=False)
    groups = {(g["strategy"], g["judge_model"]): g for g in report["noise"]}
    repeated = groups[("zero-shot", "judge-model")]
    assert repeated["runs"] == [first.pk, second.pk] and repeated["seeds"] == [0, 1] and repeated["n_repeats"] == 2
    data = [
        [np.nan if JUDGE[i] is None else JUDGE[i] for i in range(N_ITEMS)],
        [JUDGE_REPEAT[i] for i in range(N_ITEMS)],
    ]
    assert repeated["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    )
    assert report["judges"][str(second.pk)]["self_agreement_alpha"] == repeated["alpha"]
    lone = groups[("aspect", "other-judge")]
    assert lone["n_repeats"] == 1 and lone["alpha"] is None and lone["reason"]
    assert report["judges"][str(other.pk)]["repeats"] == 1


def test_it_lists_the_items_where_judge_and_humans_differ_most(rated):
    judge = make_judge(rated, JUDGE)
    rows = human_report(run=rated, use_cache=False)["disagreements"][str(judge.pk)]
    items = gen_items(rated)
    assert len(rows) == 11  # item 11 is unscored
    differences = [abs(r["difference"]) for r in rows]
    assert differences == sorted(differences, reverse=True)
    top = rows[0]
    index = next(i for i, item in enumerate(items) if item.pk == top["generation_item"])
    scores = [s for s in HUMAN[index] if s is not None]
    assert top["difference"] == pytest.approx(JUDGE[index] - np.mean(scores))
    assert RunItem.objects.get(pk=top["judge_item"]).run_id == judge.pk
    assert sorted(s["score"] for s in top["human_scores"]) == sorted(scores)
    assert {s["rater"] for s in top["human_scores"]} <= {"rater_a", "rater_b"}


def test_it_recomputes_when_a_rating_arrives(rated, raters):
    judge = make_judge(rated, JUDGE)
    before = human_report(run=rated)
    assert human_report(run=rated) == before  # cached
    rate(rated, 7, raters[1], 4)
    after = human_report(run=rated)
    assert after["judges"][str(judge.pk)]["n"] == before["judges"][str(judge.pk)]["n"] + 1


def test_it_reports_an_empty_run_without_nan(generation):
    report = human_report(run=generation, use_cache=False)
    assert report["human"]["n_ratings"] == 0 and report["human"]["mean"] is None
    assert report["judges"] == {}
    json.dumps(report, allow_nan=False)


# --- the CLI ---------------------------------------------------------------------------------------------


def test_it_prints_the_contract_json(rated):
    judge = make_judge(rated, JUDGE)
    out = io.StringIO()
    call_command("judge_agreement", "--run", str(rated.pk), "--format", "json", stdout=out)
    text = out.getvalue()
    data = json.loads(text)
    assert "NaN" not in text and "Câu số" in text  # ensure_ascii=False
    assert text.startswith('{\n  "')  # indent 2
    assert {"n_ratings", "mean", "inter_rater"} <= set(data["human"])
    assert data["interval_method"] == {
        "bootstrap": "items",
        "resamples": 1000,
        "confidence": 0.95,
        "method": "percentile",
    }
    coefficient_keys = {
        "n",
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
        "kendall_tau",
        "kendall_tau_ci",
        "cohen_kappa_ci",
        "spearman_rho",
    }
    assert coefficient_keys <= set(data["human"]["inter_rater"])
    entry = data["judges"][str(judge.pk)]
    assert {"strategy", "judge_model", "n", "mean", "human_mean", *coefficient_keys} <= set(entry)
    assert isinstance(entry["cohen_kappa_ci"], list) and len(entry["cohen_kappa_ci"]) == 2
    assert entry["cohen_kappa_ci"][0] <= entry["cohen_kappa_ci"][1]


def test_it_prints_one_csv_row_per_judge_run_and_a_human_row(rated):
    first = make_judge(rated, JUDGE, seed=0)
    second = make_judge(rated, JUDGE_REPEAT, seed=1)
    out = io.StringIO()
    call_command("judge_agreement", "--run", str(rated.pk), "--format", "csv", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["id"] for r in rows] == [str(first.pk), str(second.pk), "human"]
    assert {"cohen_kappa", "cohen_kappa_ci_low", "kendall_tau_ci_high", "spearman_rho", "mean", "human_mean"} <= set(
        rows[0]
    )
    report = human_report(run=rated)
    assert float(rows[0]["cohen_kappa"]) == pytest.approx(report["judges"][str(first.pk)]["cohen_kappa"])
    assert float(rows[2]["cohen_kappa"]) == pytest.approx(report["human"]["inter_rater"]["cohen_kappa"])
    assert float(rows[2]["mean"]) == pytest.approx(report["human"]["mean"])


def test_it_refuses_an_unknown_or_non_generation_run(rated):
    judge = make_judge(rated, JUDGE)
    with pytest.raises(CommandError, match="no run"):
        call_command("judge_agreement", "--run", "999999", stdout=io.StringIO())
    with pytest.raises(CommandError, match="not a generation run"):
        call_command("judge_agreement", "--run", str(judge.pk), stdout=io.StringIO())
