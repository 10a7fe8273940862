"""Judge bias diagnostics: every figure against its reference library on fixed data (scipy's Spearman,
a partial Spearman from statsmodels OLS residuals on ranks, krippendorff's alpha, statsmodels' Wilson
interval), paraphrase runs, self-preference, the judge_bias CLI contract and who may see it."""

import io
import json

import krippendorff
import numpy as np
import pytest
import statsmodels.api as sm
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evaluation import bias
from evaluation.models import HumanRating, ItemStatus, RatingStatus, Run, RunItem, RunStatus
from evaluation.scoring import parse_pairwise_choice
from evaluation.selectors.bias import judge_bias
from evaluation.selectors.results import results_table
from evaluation.services.bias import judge_paraphrases_start, paraphrase_prompts
from llm.models import ModelConfig
from tests.conftest import make_user

from .factories import make_dataset, make_generation_run, make_judge_run, numbered_csv, stored_model

pytestmark = pytest.mark.django_db

N_ITEMS = 12
# Words in each generated explanation, the judge's scores and the human scores (two raters on some).
LENGTHS = [3, 10, 5, 8, 12, 2, 7, 9, 4, 11, 6, 1]
JUDGE = [2, 5, 3, 4, 5, 1, 3, 4, 2, 5, 3, 0]
HUMAN = {0: (2, 3), 1: (4,), 2: (3, 3), 3: (3,), 4: (4, 5), 5: (2,), 6: (3,), 7: (2, 3), 8: (3,), 9: (3,)}
# The same judge under three other wordings (None: unscored).
PARAPHRASED = [
    [2, 4, 3, 4, 5, 1, 3, 3, 2, 5, 2, 0],
    [3, 5, 3, 3, 4, 1, 2, 4, 2, 4, 3, 1],
    [2, 5, None, 4, 5, 0, 3, 4, 5, 5, 3, 0],
]


@pytest.fixture
def bias_corpus(db):
    return make_dataset(name="Bias corpus", csv=numbered_csv(N_ITEMS, explanation="Giải thích {n}"))


@pytest.fixture
def judge_model(db):
    return stored_model(name="judge-model", model_id="j")


@pytest.fixture
def generation(bias_corpus):
    run = make_generation_run(bias_corpus, model=stored_model(name="gen-model", model_id="g"))
    for item, length in zip(run.items.order_by("id"), LENGTHS, strict=True):
        RunItem.objects.filter(pk=item.pk).update(response=" ".join(["từ"] * length))
    return run


@pytest.fixture
def raters(db):
    return make_user("rater_a"), make_user("rater_b")


def rate(generation, raters, human=HUMAN):
    items = list(generation.items.order_by("id"))
    for index, scores in human.items():
        for rater, score in zip(raters, scores, strict=False):
            HumanRating.objects.create(
                run=generation, item=items[index], rater=rater, score=score, status=RatingStatus.SUBMITTED
            )
    # A draft never counts.
    HumanRating.objects.create(run=generation, item=items[11], rater=raters[0], score=5, status=RatingStatus.DRAFT)


@pytest.fixture
def judge(generation, judge_model):
    return make_judge_run(generation, dict(enumerate(JUDGE)), model=judge_model, strategy="zero-shot")


def human_means():
    return [float(np.mean(HUMAN[i])) for i in sorted(HUMAN)]


# --- the statistics against their references ------------------------------------------------------


def test_it_gives_scipys_spearman_between_score_and_length(judge):
    verbosity = judge_bias(run=judge)["verbosity"]
    expected = stats.spearmanr(JUDGE, LENGTHS)
    assert verbosity["n"] == N_ITEMS
    assert verbosity["spearman"] == pytest.approx(expected.statistic, abs=1e-12)
    assert verbosity["p_value"] == pytest.approx(expected.pvalue, abs=1e-12)


def test_it_gives_the_partial_spearman_of_ols_residuals_on_ranks(judge, generation, raters):
    rate(generation, raters)
    verbosity = judge_bias(run=judge)["verbosity"]
    rated = sorted(HUMAN)
    x = stats.rankdata([JUDGE[i] for i in rated])
    y = stats.rankdata([LENGTHS[i] for i in rated])
    z = sm.add_constant(stats.rankdata(human_means()))
    residual_x = sm.OLS(x, z).fit().resid
    residual_y = sm.OLS(y, z).fit().resid
    expected = np.corrcoef(residual_x, residual_y)[0, 1]
    assert verbosity["n_partial"] == len(rated)
    assert verbosity["partial_spearman"] == pytest.approx(expected, abs=1e-12)
    # Student's t with n - 3 degrees of freedom: one more lost to the variable held constant.
    t = expected * np.sqrt((len(rated) - 3) / (1 - expected**2))
    assert verbosity["partial_p_value"] == pytest.approx(2 * stats.t.sf(abs(t), len(rated) - 3), abs=1e-12)


def test_it_leaves_undefined_figures_null_with_a_reason():
    assert bias.spearman([1, 2], [3, 4])[0] is None
    value, p_value, reason = bias.spearman([3, 3, 3, 3], [1, 2, 3, 4])
    assert (value, p_value) == (None, None) and "constant" in reason
    result = bias.verbosity([(1, 2, None), (2, 3, None), (3, 5, None)])
    assert result["partial_spearman"] is None and result["n_partial"] == 0
    assert "human" in result["reasons"]["partial_spearman"]
    json.dumps(result, allow_nan=False)


def test_it_gives_krippendorffs_alpha_across_paraphrase_runs(judge, generation):
    runs = judge_paraphrases_start(judge=judge)
    assert [run.prompt.name for run in runs] == [f"zero-shot (paraphrase {n})" for n in (1, 2, 3)]
    for run, scores in zip(runs, PARAPHRASED, strict=True):
        assert (run.strategy, run.model_id, run.source_run_id, run.params["seed"]) == (
            "zero-shot",
            judge.model_id,
            generation.pk,
            0,
        )
        assert run.prompt.ours and run.prompt.paraphrase_of == "zero-shot" and run.params["max_tokens"] == 10
        for item, score in zip(run.items.order_by("source_item_id"), scores, strict=True):
            RunItem.objects.filter(pk=item.pk).update(status=ItemStatus.DONE, score=score)
        Run.objects.filter(pk=run.pk).update(status=RunStatus.DONE)

    paraphrase = judge_bias(run=judge)["paraphrase"]
    data = np.array([JUDGE, *PARAPHRASED], dtype=float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert (paraphrase["k"], paraphrase["n"]) == (4, N_ITEMS)
    assert paraphrase["alpha"] == pytest.approx(expected, abs=1e-12)
    assert [row["id"] for row in paraphrase["runs"]] == [judge.pk, *(run.pk for run in runs)]
    # Item 8: 2, 2, 2, 5 is the widest spread.
    widest = paraphrase["widest"][0]
    assert (widest["label"], widest["range"], widest["scores"]) == ("Câu số 8", 3.0, [2, 2, 2, 5])
    # Starting them again starts nothing: the same three runs come back.
    again = judge_paraphrases_start(judge=judge)
    assert [run.pk for run in again] == [run.pk for run in runs]
    assert Run.objects.filter(source_run=generation).count() == 4
    # A paraphrase is a diagnostic, never a row of Table 3.
    rows = results_table(table="theme", strategy="zero-shot")["rows"]
    assert [row["judge_run"] for row in rows] == [judge.pk]


def test_it_ships_three_builtin_paraphrases_per_strategy():
    for strategy in ("zero-shot", "demonstration", "cot", "aspect"):
        prompts = paraphrase_prompts(strategy=strategy)
        assert len(prompts) == 3 and all(prompt.ours and prompt.builtin for prompt in prompts)


def test_it_compares_the_judge_on_its_own_models_explanations(bias_corpus, judge, judge_model, generation, raters):
    own = make_generation_run(bias_corpus, model=judge_model)
    own_scores = [5, 5, 4, 5, 5, 4, 5, 5, 4, 5, 5, 5]
    own_judge = make_judge_run(own, dict(enumerate(own_scores)), model=judge_model, strategy="zero-shot")
    rate(generation, raters)
    rate(own, raters, {0: (3,), 1: (3, 4), 2: (2,)})

    report = judge_bias(run=judge)["self_preference"]
    assert report["applicable"] is True
    assert report["own"]["runs"] == [own_judge.pk] and report["others"]["runs"] == [judge.pk]
    assert report["own"]["judge_mean"] == pytest.approx(np.mean(own_scores))
    assert report["others"]["judge_mean"] == pytest.approx(np.mean(JUDGE))
    assert report["own"]["human_mean"] == pytest.approx(np.mean([3, 3.5, 2]))
    assert report["others"]["human_mean"] == pytest.approx(np.mean(human_means()))
    assert report["own"]["judge_mean_rated"] == pytest.approx(np.mean(own_scores[:3]))
    assert report["judge_difference"] == pytest.approx(np.mean(own_scores) - np.mean(JUDGE))
    expected_excess = (np.mean(own_scores[:3]) - np.mean([JUDGE[i] for i in sorted(HUMAN)])) - (
        np.mean([3, 3.5, 2]) - np.mean(human_means())
    )
    assert report["excess"] == pytest.approx(expected_excess)
    # The same answer from the other judge run of the group.
    assert judge_bias(run=own_judge)["self_preference"]["own"]["runs"] == [own_judge.pk]


def test_it_says_when_the_judge_generated_none_of_the_explanations(judge):
    report = judge_bias(run=judge)["self_preference"]
    assert report["applicable"] is False and "generated none" in report["reason"]


def test_it_agrees_with_statsmodels_wilson_interval_and_reads_pairwise_verdicts():
    # Idiom 1 consistent for A, 2 consistent for B, 3 flips with the order, 4 read once only.
    verdicts = [(1, False, 1), (1, True, 2), (2, False, 2), (2, True, 1), (3, False, 1), (3, True, 1), (4, False, 1)]
    result = bias.pairwise(verdicts, {1: "a", 2: "a", 3: "b"})
    assert (result["n"], result["n_one_order"]) == (3, 1)
    assert result["first_position_rate"] == pytest.approx(4 / 6)
    assert result["consistency"] == pytest.approx(2 / 3)
    low, high = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert result["consistency_ci"] == [pytest.approx(low), pytest.approx(high)]
    assert result["win_rate"]["a"]["count"] == 1 and result["win_rate"]["b"]["count"] == 1
    # Humans preferred A on 1 and 2: the judge agrees on 1 only; 3 had no consistent verdict.
    assert result["human_agreement"]["count"] == 1 and result["human_agreement"]["n"] == 2
    assert result["human_agreement"]["n_inconsistent"] == 1


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("1", 1), ("2", 2), ("**2**", 2), ("Giải thích 1 tốt hơn.", 1), ("Phân tích...\nĐáp án: 2", 2)]
    + [("1 hoặc 2", None), ("", None), ("12", None), ("Cả hai đều tốt", None), ("1.5", None)],
)
def test_it_reads_the_position_a_pairwise_judge_chose(reply, expected):
    assert parse_pairwise_choice(reply) == expected


# --- the CLI and who may see it ----------------------------------------------------------------


def test_it_prints_exactly_the_cli_keys(judge, generation, raters):
    rate(generation, raters)
    out = io.StringIO()
    call_command("judge_bias", "--run", str(judge.pk), "--format", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert set(data) == {"verbosity", "paraphrase", "self_preference"}
    assert set(data["verbosity"]) == {"spearman", "partial_spearman", "n"}
    assert set(data["paraphrase"]) == {"alpha", "k", "n"}
    assert data["verbosity"]["n"] == N_ITEMS and data["paraphrase"]["k"] == 1
    detail = io.StringIO()
    call_command("judge_bias", "--run", str(judge.pk), "--detail", stdout=detail)
    assert "widest" in json.loads(detail.getvalue())["paraphrase"]


def test_it_refuses_a_run_that_is_not_a_judge_run(generation):
    with pytest.raises(CommandError, match="not a judge run"):
        call_command("judge_bias", "--run", str(generation.pk))
    with pytest.raises(CommandError, match="no run"):
        call_command("judge_bias", "--run", "999999")


def test_it_starts_the_paraphrases_from_the_cli(judge):
    out = io.StringIO()
    call_command("judge_bias", "--run", str(judge.pk), "--start-paraphrases", stdout=out)
    ids = [int(line) for line in out.getvalue().split()]
    assert len(ids) == 3 and set(Run.objects.filter(pk__in=ids).values_list("strategy", flat=True)) == {"zero-shot"}


def test_it_shows_the_bias_tab_to_researchers(researcher_client, judge):
    response = researcher_client.get(reverse("evaluation:run_bias", args=[judge.pk]))
    assert response.status_code == 200
    for testid in ("bias-verbosity", "bias-paraphrase", "bias-self-preference", "run-tabs"):
        assert f'data-testid="{testid}"' in response.content.decode()
    download = researcher_client.get(reverse("evaluation:run_bias", args=[judge.pk]), {"format": "json"})
    assert json.loads(download.content)["verbosity"]["n"] == N_ITEMS
    assert researcher_client.get(reverse("evaluation:run_bias", args=[judge.pk]), {"format": "xml"}).status_code == 400
    api = researcher_client.get(reverse("evaluation-api:run_bias", args=[judge.pk]))
    assert api.status_code == 200 and api.json()["run"]["id"] == judge.pk
    assert researcher_client.get(reverse("evaluation-api:run_bias", args=[judge.source_run_id])).status_code == 404
    # The run page links its Bias tab.
    page = researcher_client.get(reverse("evaluation:run_detail", args=[judge.pk])).content.decode()
    assert reverse("evaluation:run_bias", args=[judge.pk]) in page


def test_it_starts_the_paraphrases_from_the_tab_once(researcher_client, judge):
    url = reverse("evaluation:run_bias_paraphrase", args=[judge.pk])
    first = researcher_client.post(url, {"idempotency_key": "key-one-1"})
    assert first.status_code == 302
    assert researcher_client.post(url, {"idempotency_key": "key-one-1"}).status_code == 302
    # Another submit (another key) finds the three wordings already run.
    assert researcher_client.post(url, {"idempotency_key": "key-two-2"}).status_code == 302
    assert Run.objects.filter(source_run=judge.source_run).exclude(pk=judge.pk).count() == 3


def test_it_refuses_the_bias_tab_and_api_to_everyone_else(
    annotator_client, outsider_client, anonymous_client, adjudicator_client, judge
):
    page = reverse("evaluation:run_bias", args=[judge.pk])
    api = reverse("evaluation-api:run_bias", args=[judge.pk])
    start = reverse("evaluation:run_bias_paraphrase", args=[judge.pk])
    for client in (annotator_client, outsider_client, adjudicator_client):
        assert client.get(page).status_code == 403
        assert client.get(api).status_code == 403
        assert client.post(start).status_code == 403
    assert anonymous_client.get(api).status_code == 401
    assert anonymous_client.get(page).status_code == 302
    assert Run.objects.filter(source_run=judge.source_run).count() == 1
    assert ModelConfig.objects.filter(name="judge-model").exists()


def test_it_starts_no_paraphrase_when_their_cost_is_not_confirmed(judge, judge_model, settings):
    settings.EVAL_COST_CONFIRM_USD = 0.01
    ModelConfig.objects.filter(pk=judge_model.pk).update(price_input=1_000_000.0, price_output=1_000_000.0)
    judge.model.refresh_from_db()
    with pytest.raises(ValidationError) as caught:
        judge_paraphrases_start(judge=judge)
    assert "confirm_cost" in caught.value.message_dict
    assert Run.objects.filter(source_run=judge.source_run).count() == 1
    runs = judge_paraphrases_start(judge=judge, confirm_cost=True)
    assert len(runs) == 3 and all(run.estimate["confirmed"] for run in runs)
