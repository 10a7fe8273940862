"""Pairwise judging with position swap through the run engine and a loopback OpenAI-compatible endpoint:
both orders are asked, a judge that always prefers position 1 is caught, run_pairwise prints the run id
first, and the judge_bias CLI gives the pairwise keys."""

import io
import json
import re

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.models import HumanRating, ItemStatus, RatingStatus, Run, RunItem
from evaluation.selectors import run_report
from evaluation.selectors.bias import judge_bias
from evaluation.selectors.report import human_report
from evaluation.services.bias import pairwise_run_start
from tests.conftest import make_user

from .factories import make_dataset, make_generation_run, make_judge_run, make_model, numbered_csv, stored_model

pytestmark = pytest.mark.django_db

N_ITEMS = 5


@pytest.fixture
def pair_corpus(db):
    return make_dataset(name="Pairwise corpus", csv=numbered_csv(N_ITEMS, explanation="Giải thích {n}"))


@pytest.fixture
def runs(pair_corpus):
    """Run A explains briefly ("ngắn"), run B at length ("dài"); B misses the last idiom."""
    a = make_generation_run(pair_corpus, model=stored_model(name="gen-a", model_id="a"), reply="ngắn {n}")
    b = make_generation_run(
        pair_corpus, model=stored_model(name="gen-b", model_id="b"), reply="dài dài dài dài dài dài {n}"
    )
    RunItem.objects.filter(run=b, pk=b.items.order_by("id").last().pk).update(status=ItemStatus.FAILED)
    return a, b


@pytest.fixture
def judge_model(fake_openai):
    # One slot: the chunk works in the test's own thread, where the test transaction's rows are visible.
    return make_model("pair-judge", base_url=fake_openai.base_url, model_id="pj", timeout=5)


def explanations(body: dict) -> tuple[str, str]:
    text = body["messages"][-1]["content"]
    first = re.search(r"Giải thích 1: (.*)", text).group(1)
    second = re.search(r"Giải thích 2: (.*)", text).group(1)
    return first, second


def run_pairwise(runs, judge_model, django_capture_on_commit_callbacks, **options):
    with django_capture_on_commit_callbacks(execute=True):
        run = pairwise_run_start(run_a=runs[0], run_b=runs[1], model=judge_model, **options)
    run.refresh_from_db()
    return run


def test_it_asks_each_idiom_in_both_orders_and_catches_a_first_position_judge(
    eager, runs, judge_model, fake_openai, django_capture_on_commit_callbacks
):
    fake_openai.reply = lambda body: "1"
    run = run_pairwise(runs, judge_model, django_capture_on_commit_callbacks)
    assert run.status == "done" and run.strategy == "pairwise" and run.source_run_b_id == runs[1].pk
    # Four idioms both runs explained, each asked twice; run A's explanation first, then run B's.
    assert fake_openai.count == 2 * (N_ITEMS - 1)
    orders = sorted(explanations(body) for body in fake_openai.bodies())
    assert sum(1 for first, _second in orders if first.startswith("ngắn")) == N_ITEMS - 1
    assert sum(1 for first, _second in orders if first.startswith("dài")) == N_ITEMS - 1
    items = list(run.items.order_by("expression_id", "swapped"))
    assert [(item.swapped, item.score, item.prediction) for item in items[:2]] == [(False, 1, "a"), (True, 1, "b")]
    assert run.params["temperature"] == 0.0

    pairwise = judge_bias(run=run)["pairwise"]
    assert (pairwise["n"], pairwise["first_position_rate"], pairwise["consistency"]) == (N_ITEMS - 1, 1.0, 0.0)
    assert pairwise["win_rate"]["inconsistent"]["rate"] == 1.0 and pairwise["win_rate"]["a"]["count"] == 0
    assert run_report(run=run)["pairwise"] == {"a": N_ITEMS - 1, "b": N_ITEMS - 1}


def test_it_finds_a_consistent_judge_and_its_taste_for_length(
    eager, runs, judge_model, fake_openai, django_capture_on_commit_callbacks
):
    # This judge always prefers the longer explanation, wherever it is shown.
    fake_openai.reply = lambda body: "1" if len(explanations(body)[0]) > len(explanations(body)[1]) else "2"
    run = run_pairwise(runs, judge_model, django_capture_on_commit_callbacks)
    report = judge_bias(run=run)
    pairwise = report["pairwise"]
    assert (pairwise["first_position_rate"], pairwise["consistency"]) == (0.5, 1.0)
    assert pairwise["win_rate"]["b"]["rate"] == 1.0
    assert pairwise["win_rate"]["b"]["ci"][0] < 1.0 == pairwise["win_rate"]["b"]["ci"][1]
    # Always run B (longer): no variation in the choice, so no rank correlation to speak of.
    assert report["verbosity"]["n"] == 2 * (N_ITEMS - 1) and report["verbosity"]["spearman"] is None


def test_it_compares_the_judge_with_peoples_choices(
    eager, runs, judge_model, fake_openai, django_capture_on_commit_callbacks
):
    fake_openai.reply = lambda body: "1" if explanations(body)[0].startswith("dài") else "2"  # always B
    a, b = runs
    rater = make_user("rater_p")
    a_items, b_items = list(a.items.order_by("id")), list(b.items.order_by("id"))
    # People prefer B on idioms 0 and 1, A on idiom 2, and rate idiom 3's two explanations the same.
    for index, (score_a, score_b) in enumerate([(2, 4), (1, 5), (5, 3), (3, 3)]):
        for run, items, score in ((a, a_items, score_a), (b, b_items, score_b)):
            HumanRating.objects.create(
                run=run, item=items[index], rater=rater, score=score, status=RatingStatus.SUBMITTED
            )
    run = run_pairwise(runs, judge_model, django_capture_on_commit_callbacks)
    agreement = judge_bias(run=run)["pairwise"]["human_agreement"]
    assert (agreement["count"], agreement["n"]) == (2, 3)


def test_it_reads_an_unreadable_verdict_as_none_and_leaves_the_idiom_out(
    eager, runs, judge_model, fake_openai, django_capture_on_commit_callbacks
):
    fake_openai.reply = lambda body: "Cả hai đều hay" if "Câu số 0" in body["messages"][-1]["content"] else "2"
    run = run_pairwise(runs, judge_model, django_capture_on_commit_callbacks)
    pairwise = judge_bias(run=run)["pairwise"]
    assert (pairwise["n"], pairwise["n_unreadable"]) == (N_ITEMS - 2, 2)
    assert run.items.filter(score__isnull=True).count() == 2


def test_it_refuses_pairs_that_cannot_be_compared(runs, judge_model, pair_corpus):
    a, b = runs
    with pytest.raises(ValidationError) as caught:
        pairwise_run_start(run_a=a, run_b=a, model=judge_model)
    assert "run_b" in caught.value.message_dict
    judge = make_judge_run(a, 3)
    with pytest.raises(ValidationError) as caught:
        pairwise_run_start(run_a=a, run_b=judge, model=judge_model)
    assert "run_b" in caught.value.message_dict
    other = make_generation_run(make_dataset(name="Other corpus", csv=numbered_csv(2, text="Khác {n}")))
    with pytest.raises(ValidationError, match="no idiom in common"):
        pairwise_run_start(run_a=a, run_b=other, model=judge_model)
    assert not Run.objects.filter(strategy="pairwise").exists()


def test_it_keeps_pairwise_runs_out_of_the_judge_versus_human_report(runs, judge_model):
    pairwise_run_start(run_a=runs[0], run_b=runs[1], model=judge_model)
    assert human_report(run=runs[0], use_cache=False)["judges"] == {}


def test_run_pairwise_prints_the_run_id_first_and_waits(eager, runs, judge_model, fake_openai, monkeypatch):
    from django.db import transaction

    monkeypatch.setattr(transaction, "on_commit", lambda func, using=None, robust=False: func())
    fake_openai.reply = lambda body: "2"
    out, err = io.StringIO(), io.StringIO()
    a, b = runs
    call_command(
        "run_pairwise", "--a", str(a.pk), "--b", str(b.pk), "--judge", "pair-judge", "--wait", stdout=out, stderr=err
    )
    lines = out.getvalue().splitlines()
    run = Run.objects.get(pk=int(lines[0]))
    assert run.status == "done" and "done" in lines[-1]

    bias_out = io.StringIO()
    call_command("judge_bias", "--run", str(run.pk), "--format", "json", stdout=bias_out)
    data = json.loads(bias_out.getvalue())
    assert set(data) == {"verbosity", "paraphrase", "self_preference", "pairwise"}
    assert set(data["pairwise"]) == {"first_position_rate", "consistency", "n"}
    assert data["pairwise"] == {"first_position_rate": 0.0, "consistency": 0.0, "n": N_ITEMS - 1}

    with pytest.raises(CommandError, match="no model named"):
        call_command("run_pairwise", "--a", str(a.pk), "--b", str(b.pk), "--judge", "nobody")
    with pytest.raises(CommandError, match="no run"):
        call_command("run_pairwise", "--a", "999999", "--b", str(b.pk), "--judge", "pair-judge")


def test_it_starts_a_pairwise_run_from_the_page(researcher_client, runs, judge_model):
    url = reverse("evaluation:pairwise_new")
    assert researcher_client.get(url, {"run_a": runs[0].pk}).status_code == 200
    data = {
        "run_a": runs[0].pk,
        "run_b": runs[1].pk,
        "model": judge_model.pk,
        "seed": 0,
        "idempotency_key": "pairwise-form-1",
    }
    response = researcher_client.post(url, data)
    run = Run.objects.get(strategy="pairwise")
    assert response.status_code == 302 and response.url == reverse("evaluation:run_detail", args=[run.pk])
    # The same form again lands on the same run.
    assert researcher_client.post(url, data).url == response.url
    assert Run.objects.filter(strategy="pairwise").count() == 1
    same = researcher_client.post(url, {**data, "run_b": runs[0].pk, "idempotency_key": "pairwise-form-2"})
    assert same.status_code == 400 and "two different" in same.content.decode()
    page = researcher_client.get(reverse("evaluation:run_bias", args=[run.pk])).content.decode()
    assert 'data-testid="bias-pairwise"' in page and 'data-testid="bias-paraphrase"' not in page
    detail = researcher_client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode()
    assert 'data-testid="pairwise-counts"' in detail
    item = run.items.get(swapped=True, expression_id=runs[0].items.order_by("id").first().expression_id)
    RunItem.objects.filter(pk=item.pk).update(status=ItemStatus.DONE, score=1, prediction="b")
    item_page = researcher_client.get(reverse("evaluation:item_detail", args=[run.pk, item.pk])).content.decode()
    assert "run B" in item_page and 'data-testid="choice"' in item_page


def test_it_refuses_the_pairwise_page_to_everyone_else(annotator_client, outsider_client, runs, judge_model):
    url = reverse("evaluation:pairwise_new")
    data = {"run_a": runs[0].pk, "run_b": runs[1].pk, "model": judge_model.pk, "seed": 0}
    for client in (annotator_client, outsider_client):
        assert client.get(url).status_code == 403
        assert client.post(url, data).status_code == 403
    assert not Run.objects.filter(strategy="pairwise").exists()


def test_it_asks_to_confirm_a_costly_pairwise_run_and_stores_nothing_without(runs, judge_model, settings):
    settings.EVAL_COST_CONFIRM_USD = 0.01
    judge_model.price_input = judge_model.price_output = 1_000_000.0  # a dollar a token
    judge_model.save()
    with pytest.raises(ValidationError) as caught:
        pairwise_run_start(run_a=runs[0], run_b=runs[1], model=judge_model)
    assert "confirm_cost" in caught.value.message_dict
    assert not Run.objects.filter(strategy="pairwise").exists() and not RunItem.objects.filter(swapped=True).exists()
    run = pairwise_run_start(run_a=runs[0], run_b=runs[1], model=judge_model, confirm_cost=True)
    assert run.estimate["confirmed"] is True and run.estimate["n_requests"] == 2 * (N_ITEMS - 1)
    with pytest.raises(CommandError, match="Confirm the cost"):
        call_command("run_pairwise", "--a", str(runs[0].pk), "--b", str(runs[1].pk), "--judge", "pair-judge")
