"""Judge replies through the run engine and a loopback OpenAI-compatible endpoint: the finish_reason and
refusal kept with each reply, the probability-weighted score (G-Eval) from the endpoint's top_logprobs,
the cut-off warning and its rerun with a larger limit, and `reparse_scores` (the stored replies read
again with the current parser, no request sent) from the CLI and the run page."""

import io
import json
import math

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from scipy import stats

from evaluation.models import Run, RunItem
from evaluation.scoring import PARSER_VERSION
from evaluation.selectors import run_report
from evaluation.selectors.report import human_report
from evaluation.services import run_start
from llm.models import ResponseCache

from . import test_judge_agreement as data
from .factories import make_generation_run, make_judge_run, make_model

corpus, models_, generation, raters, rated = data.corpus, data.models_, data.generation, data.raters, data.rated

pytestmark = pytest.mark.django_db

# The criteria the aspect prompt lists, then the verdict: cut at the paper's max_tokens=10 (whitespace
# words at the fake endpoint) inside criterion 1.
ASPECT_REPLY = (
    "1. Độ chính xác của ý nghĩa cốt lõi: 4/5\n2. Khả năng nắm bắt sắc thái, ngữ cảnh, ẩn ý: 3/5\n"
    "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát: 5/5\n4. Độ đầy đủ: 4/5\nĐộ tương đồng tổng thể: 4/5"
)
P_SCORE = {" 4": 0.6, " 3": 0.3, " 5": 0.1}


@pytest.fixture
def judge_model(fake_openai):
    # One slot: the chunk works in the test's own thread, where the test transaction's rows are visible.
    return make_model("judge-lp", base_url=fake_openai.base_url, model_id="jlp", timeout=5, supports_logprobs=True)


@pytest.fixture
def explained(dataset):
    return make_generation_run(dataset)


def start_judge(django_capture_on_commit_callbacks, **arguments) -> Run:
    with django_capture_on_commit_callbacks(execute=True):
        run = run_start(kind="judge", **arguments)
    run.refresh_from_db()
    return run


def score_alternatives(body, token):
    """The score token's distribution: P(4) 0.6, P(3) 0.3, P(5) 0.1."""
    return {t: math.log(p) for t, p in P_SCORE.items()} if token == " 4" else None


def test_it_stores_the_probability_weighted_score_from_the_endpoints_top_logprobs(
    eager, explained, judge_model, fake_openai, django_capture_on_commit_callbacks, researcher_client
):
    fake_openai.reply = lambda body: "Điểm: 4\nGiải thích: đúng ý chính."
    fake_openai.token_alternatives = score_alternatives

    run = start_judge(
        django_capture_on_commit_callbacks, model=judge_model, prompt_name="zero-shot", source_run=explained
    )

    assert run.status == "done" and run.params["top_logprobs"] == 20
    assert all(body["logprobs"] is True and body["top_logprobs"] == 20 for body in fake_openai.bodies())
    expected = sum(int(t) * p for t, p in P_SCORE.items())  # 3.8
    items = list(run.items.all())
    assert [(i.score, i.finish_reason, i.parser_version, i.score_reason) for i in items] == [
        (4, "stop", PARSER_VERSION, "")
    ] * 4
    assert all(i.expected_score == pytest.approx(expected) for i in items)
    assert items[0].score_probabilities == pytest.approx([0, 0, 0, 0.3, 0.6, 0.1])
    report = run_report(run=run)
    assert report["expected_average"] == pytest.approx(expected) and report["n_expected"] == 4
    # The cache keeps every token but the alternatives of the score's only.
    cached = ResponseCache.objects.first().response["logprobs"]
    assert [len(entry["top"]) for entry in cached] == [0, 3, 0, 0, 0, 0, 0]

    html = researcher_client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode()
    assert 'data-testid="expected-average">3.80<' in html and '<td class="numeric" data-expected>3.80</td>' in html
    item_html = researcher_client.get(reverse("evaluation:item_detail", args=[run.pk, items[0].pk])).content.decode()
    assert "3.800" in item_html and "P(4) = 0.600" in item_html and "<code>stop</code>" in item_html
    api = researcher_client.get(reverse("evaluation-api:item_list", args=[run.pk])).json()["results"][0]
    assert api["expected_score"] == pytest.approx(expected) and api["finish_reason"] == "stop"
    assert api["parser_version"] == PARSER_VERSION and api["score_reason"] == ""


def test_it_asks_no_logprobs_of_a_judge_not_known_to_give_them(
    eager, explained, fake_openai, django_capture_on_commit_callbacks
):
    model = make_model("judge-plain", base_url=fake_openai.base_url, model_id="jp", timeout=5)
    fake_openai.reply = lambda body: "4"

    run = start_judge(django_capture_on_commit_callbacks, model=model, prompt_name="zero-shot", source_run=explained)

    assert "top_logprobs" not in run.params and not any("logprobs" in body for body in fake_openai.bodies())
    assert {(i.score, i.expected_score) for i in run.items.all()} == {(4, None)}


def test_it_warns_of_cut_off_replies_and_reruns_the_judge_with_a_larger_limit(
    eager, explained, judge_model, fake_openai, django_capture_on_commit_callbacks, researcher_client
):
    fake_openai.reply = lambda body: ASPECT_REPLY

    run = start_judge(django_capture_on_commit_callbacks, model=judge_model, prompt_name="aspect", source_run=explained)

    assert run.params["max_tokens"] == 10
    items = list(run.items.all())
    # Cut inside criterion 1 ("1. Độ chính xác ... 4/5\n2."): no verdict, and the "1." is no score.
    assert {(i.finish_reason, i.score, i.score_reason) for i in items} == {("length", None, "cut_off")}
    page = researcher_client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode()
    assert 'data-testid="truncation-warning"' in page and "4 of 4 replies were cut off by max_tokens=10" in page
    assert 'name="max_tokens" value="256"' in page and page.count('data-testid="cut-off"') == 4
    assert "cut off by the token limit before a verdict" in page
    assert run_report(run=run)["run"]["n_cut_off"] == 4

    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            reverse("evaluation:run_rerun", args=[run.pk]), {"max_tokens": 256, "idempotency_key": "rerun-key-1"}
        )
    rerun = Run.objects.exclude(pk__in=[run.pk, explained.pk]).get()
    assert response.status_code == 302 and response["Location"] == reverse("evaluation:run_detail", args=[rerun.pk])
    assert rerun.params["max_tokens"] == 256 and rerun.prompt_id == run.prompt_id and rerun.strategy == "aspect"
    assert rerun.source_run_id == explained.pk and rerun.params["seed"] == run.params["seed"]
    assert {(i.finish_reason, i.score) for i in rerun.items.all()} == {("stop", 4)}
    assert 'data-testid="truncation-warning"' not in researcher_client.get(response["Location"]).content.decode()
    # Not smaller than the run's own limit.
    refused = researcher_client.post(
        reverse("evaluation:run_rerun", args=[run.pk]), {"max_tokens": 8, "idempotency_key": "rerun-key-2"}, follow=True
    )
    assert "more than the run" in refused.content.decode() and Run.objects.count() == 3


def test_it_keeps_the_providers_refusal_and_leaves_the_reply_unscored(
    eager, explained, judge_model, fake_openai, django_capture_on_commit_callbacks, researcher_client
):
    fake_openai.refusal = "I can't help with that."

    run = start_judge(
        django_capture_on_commit_callbacks, model=judge_model, prompt_name="zero-shot", source_run=explained
    )

    item = run.items.first()
    assert (item.score, item.score_reason, item.refusal, item.response) == (
        None,
        "refusal",
        "I can't help with that.",
        "",
    )
    html = researcher_client.get(reverse("evaluation:item_detail", args=[run.pk, item.pk])).content.decode()
    assert "the model refused to judge" in html and "I can&#x27;t help with that." in html


def old_judge_run(source: Run) -> Run:
    """A judge run read by the first parser: "1. Kim chỉ có đ" (cut at max_tokens=10) stored as 1,
    "3 con mèo" as 3."""
    judge = make_judge_run(source, {0: 1, 1: 4, 2: 3, 3: None}, strategy="aspect")
    judge.params = {**judge.params, "max_tokens": 10}
    judge.save(update_fields=["params"])
    replies = ["1. Kim chỉ có đ", "Độ tương đồng tổng thể: 4/5", "3 con mèo", "Score: 6"]
    for item, reply, tokens_out in zip(judge.items.order_by("id"), replies, [10, 9, 3, 2], strict=True):
        RunItem.objects.filter(pk=item.pk).update(response=reply, tokens_out=tokens_out, parser_version=1)
    return judge


def test_it_reparses_stored_replies_from_the_cli_and_prints_how_many_scores_changed(explained):
    judge = old_judge_run(explained)

    out = io.StringIO()
    call_command("reparse_scores", "--run", str(judge.pk), "--dry-run", stdout=out)
    assert "2 scores would change (2 now unscored, 0 now scored, 0 another value)" in out.getvalue()
    assert list(judge.items.order_by("id").values_list("score", flat=True)) == [1, 4, 3, None]

    out = io.StringIO()
    call_command("reparse_scores", "--run", str(judge.pk), stdout=out)
    assert out.getvalue().startswith(
        f"run {judge.pk}: 4 replies read with score parser v{PARSER_VERSION}: 2 scores changed"
    )
    rows = list(judge.items.order_by("id").values_list("score", "score_reason", "finish_reason", "parser_version"))
    assert rows == [
        (None, "cut_off", "length", PARSER_VERSION),  # 10 tokens of max_tokens=10: cut off
        (4, "", "", PARSER_VERSION),
        (None, "not_a_verdict", "", PARSER_VERSION),
        (None, "out_of_range", "", PARSER_VERSION),
    ]
    judge.refresh_from_db()
    assert judge.reproducibility["reparsed"][0]["n_changed"] == 2

    out = io.StringIO()
    call_command("reparse_scores", "--run", str(judge.pk), "--format", "json", stdout=out)
    summary = json.loads(out.getvalue())
    assert (summary["n_changed"], summary["n_unscored"], summary["n_cut_off"]) == (0, 3, 1)
    assert summary["previous_versions"] == {str(PARSER_VERSION): 4}

    with pytest.raises(CommandError, match="no run"):
        call_command("reparse_scores", "--run", "999999")
    with pytest.raises(CommandError, match="not a pointwise judge run"):
        call_command("reparse_scores", "--run", str(explained.pk))


def test_it_reparses_from_the_run_page_and_the_human_report_follows(rated, researcher_client):
    judge = data.make_judge(rated, data.JUDGE)
    RunItem.objects.filter(run=judge).update(parser_version=1)
    first = judge.items.order_by("id").first()
    RunItem.objects.filter(pk=first.pk).update(response="1. Kim chỉ có đầu", score=1)
    before = human_report(run=rated)["judges"][str(judge.pk)]

    page = researcher_client.get(reverse("evaluation:run_detail", args=[judge.pk])).content.decode()
    assert 'data-testid="reparse-notice"' in page and "12 replies were read by an older score parser" in page
    response = researcher_client.post(reverse("evaluation:run_reparse", args=[judge.pk]), follow=True)

    html = response.content.decode()
    assert "12 replies read again with score parser" in html and "1 scores changed (1 now unscored" in html
    assert 'data-testid="reparse-notice"' not in html
    after = human_report(run=rated)["judges"][str(judge.pk)]
    assert after["n_unscored_items"] == before["n_unscored_items"] + 1


def test_it_reparses_the_weighted_score_from_the_cached_log_probabilities_without_a_request(
    eager, explained, judge_model, fake_openai, django_capture_on_commit_callbacks
):
    fake_openai.reply = lambda body: "Điểm: 4\nGiải thích: đúng ý chính."
    fake_openai.token_alternatives = score_alternatives
    run = start_judge(
        django_capture_on_commit_callbacks, model=judge_model, prompt_name="zero-shot", source_run=explained
    )
    sent = fake_openai.count
    # As the first parser left it: no weighted score, no finish_reason.
    RunItem.objects.filter(run=run).update(
        expected_score=None, score_probabilities=None, finish_reason="", parser_version=1
    )

    call_command("reparse_scores", "--run", str(run.pk), stdout=io.StringIO())

    assert fake_openai.count == sent
    assert {(round(i.expected_score, 6), i.finish_reason) for i in run.items.all()} == {(3.8, "stop")}


def test_it_refuses_to_reparse_a_running_run(explained):
    judge = make_judge_run(explained, 3, status="running")
    with pytest.raises(CommandError, match="still running"):
        call_command("reparse_scores", "--run", str(judge.pk))


def test_it_starts_a_judge_run_with_a_larger_limit_from_the_cli_and_the_api(explained, judge_model, researcher_client):
    out = io.StringIO()
    call_command(
        "run_judge",
        "--run",
        str(explained.pk),
        "--judge",
        judge_model.name,
        "--strategy",
        "aspect",
        "--max-tokens",
        "200",
        stdout=out,
        stderr=io.StringIO(),
    )
    run = Run.objects.get(pk=int(out.getvalue().split()[0]))
    assert run.params["max_tokens"] == 200 and run.params["top_logprobs"] == 20

    response = researcher_client.post(
        reverse("evaluation-api:run_list"),
        {"kind": "judge", "model": judge_model.name, "prompt": "cot", "source_run": explained.pk, "max_tokens": 900},
        content_type="application/json",
    )
    assert response.status_code == 201 and response.json()["params"]["max_tokens"] == 900
    with pytest.raises(CommandError, match="between 1 and 8192"):
        call_command(
            "run_judge",
            "--run",
            str(explained.pk),
            "--judge",
            judge_model.name,
            "--strategy",
            "aspect",
            "--max-tokens",
            "0",
        )


def test_it_sets_the_weighted_scores_agreement_with_people_beside_the_integer_scores(rated, researcher_client):
    judge = data.make_judge(rated, data.JUDGE)
    # A weighted score per judged item: the integer nudged by a pseudo-distribution, none for item 10.
    weighted = {index: score + (0.3 if index % 3 else -0.2) for index, score in data.JUDGE.items() if score is not None}
    weighted.pop(10)
    judge_items = {item.source_item_id: item for item in judge.items.all()}
    for index, item in enumerate(data.gen_items(rated)):
        if index in weighted:
            RunItem.objects.filter(pk=judge_items[item.pk].pk).update(expected_score=weighted[index])

    figures = human_report(run=rated)["judges"][str(judge.pk)]["expected"]

    # Every rating of an item with both scores, as scipy reads the same pairs.
    pairs = [
        (weighted[i], data.JUDGE[i], h)
        for i, scores in data.HUMAN.items()
        for h in scores
        if h is not None and i in weighted
    ]
    w, integer, human = zip(*pairs, strict=True)
    assert figures["n"] == len(pairs) and figures["n_items"] == len(weighted)
    assert figures["spearman_rho"] == pytest.approx(stats.spearmanr(w, human).statistic)
    assert figures["kendall_tau"] == pytest.approx(stats.kendalltau(w, human, variant="b").statistic)
    assert figures["integer_spearman_rho"] == pytest.approx(stats.spearmanr(integer, human).statistic)
    assert figures["integer_kendall_tau"] == pytest.approx(stats.kendalltau(integer, human, variant="b").statistic)

    html = researcher_client.get(reverse("evaluation:human_report", args=[rated.pk])).content.decode()
    assert f'data-expected="{judge.pk}"' in html and f"{figures['spearman_rho']:.3f}" in html
    assert f"{figures['integer_kendall_tau']:.3f}" in html
    csv_text = researcher_client.get(
        reverse("evaluation:human_report", args=[rated.pk]) + "?format=csv"
    ).content.decode()
    header, first = csv_text.splitlines()[:2]
    assert header.endswith("expected_n,expected_spearman_rho,expected_kendall_tau")
    assert first.split(",")[-3] == str(len(pairs))


def test_it_says_why_a_judge_without_log_probabilities_has_no_weighted_agreement(rated):
    judge = data.make_judge(rated, data.JUDGE)
    figures = human_report(run=rated)["judges"][str(judge.pk)]["expected"]
    assert figures["n"] == 0 and figures["spearman_rho"] is None
    assert "no log-probabilities" in figures["reasons"]["spearman_rho"]


def test_it_lets_only_researchers_rerun_or_reparse(explained, annotator_client, outsider_client, anonymous_client):
    judge = old_judge_run(explained)
    for name, data_ in (("evaluation:run_rerun", {"max_tokens": 64}), ("evaluation:run_reparse", {})):
        url = reverse(name, args=[judge.pk])
        for client in (annotator_client, outsider_client):
            assert client.post(url, data_).status_code == 403
        assert anonymous_client.post(url, data_).status_code == 302
    assert Run.objects.count() == 2 and judge.items.filter(parser_version=1).count() == 4


def test_it_keeps_the_local_models_log_probabilities_without_holding_every_steps_logits(smollm2):
    """The built-in model's reply log-probabilities, recorded step by step, are those of a forward pass
    over the prompt and the reply (the model's own distribution at each chosen token)."""
    import torch

    provider, _ = smollm2
    messages = [{"role": "user", "content": "Chấm điểm từ 0 đến 5. Chỉ trả lời một số."}]
    completion = provider.complete(messages, temperature=0, max_tokens=6, top_logprobs=5)

    loaded = provider.loaded
    prompt = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    encoded = loaded.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    width = encoded["input_ids"].shape[1]
    with torch.inference_mode():
        sequence = loaded.model.generate(
            **encoded,
            max_new_tokens=6,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            pad_token_id=loaded.tokenizer.pad_token_id,
        )
        log_probs = loaded.model(sequence).logits[0, width - 1 : -1].float().log_softmax(dim=-1)
    generated = sequence[0, width:]
    assert len(completion.logprobs) == completion.tokens_out
    for step, entry in enumerate(completion.logprobs):
        assert entry["logprob"] == pytest.approx(float(log_probs[step, generated[step]]), abs=1e-3)
        values, ids = log_probs[step].topk(5)
        assert [t["logprob"] for t in entry["top"]] == pytest.approx(values.tolist(), abs=1e-3)
        assert [t["token"] for t in entry["top"]] == [loaded.tokenizer.decode([i]) for i in ids.tolist()]
