"""The run engine with an in-process provider: results, cache, retries, failures, cancel, resume, CLI."""

import io
import json
import threading
import time
import types

import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from evaluation.models import ItemStatus, Run, RunStatus
from evaluation.selectors import run_progress, run_report
from evaluation.selectors.results import results_table
from evaluation.services import run_chunk, run_resume, run_start
from evaluation.services.runs import execution as runs_execution
from llm.models import ModelConfig, ResponseCache
from llm.providers import ClientError, Completion, RetryableError
from llm.services import batch_run_cancel

from .factories import labelled_csv, make_dataset, make_model

pytestmark = pytest.mark.django_db

REAL_SLEEP = time.sleep  # the engine's sleeps are patched out; the provider's latency is real


class FakeProvider:
    """Answers by a function of the last user message; counts calls and concurrency."""

    def __init__(self, answer=lambda text: "Một lời giải thích.", delay=0.0, failures=None):
        self.answer = answer
        self.delay = delay
        self.failures = list(failures or [])
        self.calls = []
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()

    def complete(self, messages, *, temperature, max_tokens, seed=None, top_logprobs=None):
        with self.lock:
            self.calls.append(
                {"messages": messages, "temperature": temperature, "max_tokens": max_tokens, "seed": seed}
            )
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            failure = self.failures.pop(0) if self.failures else None
        try:
            if self.delay:
                REAL_SLEEP(self.delay)
            if failure is not None:
                raise failure
            return Completion(
                text=self.answer(messages[-1]["content"]), tokens_in=10, tokens_out=5, fingerprint="fp_test"
            )
        finally:
            with self.lock:
                self.active -= 1

    def describe(self):
        return {"provider": "fake"}


@pytest.fixture(autouse=True)
def on_commit_runs(request, monkeypatch):
    """A test transaction never commits: run the enqueue callbacks as soon as they are registered
    (transactional tests commit for real and keep Django's on_commit)."""
    from django.db import transaction

    marker = request.node.get_closest_marker("django_db")
    if marker and marker.kwargs.get("transaction"):
        return
    monkeypatch.setattr(transaction, "on_commit", lambda func, using=None, robust=False: func())


@pytest.fixture
def eval_corpus(db):
    """The five labelled expressions, "Nhất tự vi sư" (virtues) after the shared ``dataset``'s four,
    in the dataset "Eval corpus" (the CLI tests name it)."""
    return make_dataset(name="Eval corpus", csv=labelled_csv())


@pytest.fixture
def provider(monkeypatch):
    fake = FakeProvider()
    monkeypatch.setattr(runs_execution, "provider_for", lambda model: fake)
    monkeypatch.setattr(
        time, "sleep", lambda seconds: fake.calls.append({"slept": seconds}) if seconds >= 0.05 else None
    )
    return fake


def requests_sent(fake):
    return [c for c in fake.calls if "messages" in c]


def test_it_generates_an_explanation_per_item_with_the_paper_defaults(eager, eval_corpus, provider, model):
    run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert run.params == {"temperature": 0.7, "max_tokens": 150, "seed": 0}
    assert run.items.filter(status=ItemStatus.DONE).count() == 5
    assert {c["temperature"] for c in requests_sent(provider)} == {0.7}
    item = run.items.select_related("expression").first()
    assert item.expression.text in json.dumps(item.messages, ensure_ascii=False)
    assert run.tokens_in == 50 and run.tokens_out == 25
    assert run.reproducibility["prompt_hash"] == run.prompt.content_hash
    assert run.reproducibility["fingerprints"] == ["fp_test"]
    assert "django" in run.reproducibility["packages"]


def test_it_sends_no_request_twice_when_a_run_is_repeated(eager, eval_corpus, provider, model):
    run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    assert len(requests_sent(provider)) == 5
    again = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    assert len(requests_sent(provider)) == 5
    assert run_progress(run=again)["n_cached"] == 5
    assert ResponseCache.objects.count() == 5


def test_it_scores_a_generation_run_and_counts_unscored_replies(eager, eval_corpus, provider, model):
    generation = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    replies = iter(["4", "Độ tương đồng tổng thể: 3/5", "không rõ", "5", "2/5"])
    provider.answer = lambda text: next(replies)
    judge = run_start(kind="judge", model=model, prompt_name="aspect", source_run=generation)
    judge.refresh_from_db()
    assert judge.params["temperature"] == 0.0
    report = run_report(run=judge)
    assert report["run"]["n_done"] == 5 and report["run"]["n_unscored"] == 1
    scores = sorted(s for s in judge.items.values_list("score", flat=True) if s is not None)
    assert scores == [2, 3, 4, 5]
    assert report["average"] == 3.5
    assert set(report["by_theme"]) == {
        "love",
        "virtues",
        "criticism",
        "work_nature",
        "social_relationships",
        "life_lessons",
        "other",
    }
    assert set(report["by_trait"]) == {
        "literal",
        "sino_vietnamese",
        "uncommon_vocabulary",
        "folk_knowledge",
        "pragmatic",
    }


def test_it_reports_full_precision_and_leaves_rounding_to_the_pages(eager, eval_corpus, provider, model):
    generation = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    replies = iter(["4", "4", "3", "không rõ", "không rõ"])
    provider.answer = lambda text: next(replies)
    judge = run_start(kind="judge", model=model, prompt_name="aspect", source_run=generation)
    assert run_report(run=judge)["average"] == 11 / 3  # not 3.6667
    assert results_table(table="theme")["rows"][0]["average"] == 11 / 3
    out = io.StringIO()
    call_command("run_report", str(judge.pk), "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["average"] == 11 / 3
    out = io.StringIO()
    call_command("run_report", str(judge.pk), "--format", "csv", stdout=out)
    frame = pd.read_csv(io.StringIO(out.getvalue())).set_index("key")
    assert float(frame.loc["average", "value"]) == 11 / 3


def test_it_classifies_with_exact_match(eager, eval_corpus, provider, model):
    def answer(text):
        return "3" if "Ăn cháo đá bát" in text else "1"

    provider.answer = answer
    run = run_start(kind="classification", model=model, prompt_name="topic", dataset=eval_corpus)
    report = run_report(run=run)
    assert report["accuracy"] == pytest.approx(2 / 5)  # criticism is 3, love is 1
    correct = run.items.get(expression__text="Ăn cháo đá bát")
    assert correct.prediction == "3" and correct.gold == "3" and correct.correct is True


def test_it_retries_429_honouring_retry_after_and_fails_client_errors(eager, eval_corpus, provider, model):
    provider.failures = [
        RetryableError("rate limited", retry_after=2.0, status=429),
        ClientError("bad request: too long", status=400),
    ]
    run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    assert {"slept": 2.0} in provider.calls
    progress = run_progress(run=run)
    assert progress["n_done"] == 4 and progress["n_failed"] == 1
    failed = run.items.get(status=ItemStatus.FAILED)
    assert failed.error == "bad request: too long" and failed.messages


def test_it_gives_up_after_the_configured_attempts(eager, eval_corpus, provider, model, settings):
    settings.EVAL_MAX_ATTEMPTS = 3
    provider.failures = [RetryableError("server error", status=500)] * 3
    run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus, limit=1)
    item = run.items.get()
    assert item.status == ItemStatus.FAILED and item.attempts == 3 and "server error" in item.error


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_keeps_concurrency_under_the_model_cap(eager, eval_corpus, provider):
    from django.db import connection

    if "memory" in str(connection.settings_dict["NAME"]):
        pytest.skip("threads need a database file (make test sets VIVID_TEST_SQLITE)")
    capped = make_model("capped", model_id="c", max_concurrency=3)
    provider.delay = 0.05
    run = run_start(kind="generation", model=capped, prompt_name="zero-shot", dataset=eval_corpus)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert 1 < provider.max_active <= capped.max_concurrency


def test_it_writes_each_item_once_when_a_chunk_runs_twice(eval_corpus, provider, model):
    run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    ids = list(run.items.values_list("id", flat=True))
    run_chunk(run_id=run.pk, item_ids=ids)
    run_chunk(run_id=run.pk, item_ids=ids)
    assert len(requests_sent(provider)) == 5
    assert run.items.filter(status=ItemStatus.DONE).count() == 5


def test_it_cancels_and_resumes_with_only_the_pending_items(eval_corpus, provider, model, eager):
    from tests.conftest import celery_overrides

    with celery_overrides(task_always_eager=False):
        run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    first = list(run.items.order_by("id").values_list("id", flat=True)[:2])
    # Another chunk holds the rest, so this one cannot claim more of them when its own run out.
    run.items.exclude(pk__in=first).update(claim_token="other", claimed_at=timezone.now())
    run_chunk(run_id=run.pk, item_ids=first)
    run.items.filter(claim_token="other").update(claim_token="", claimed_at=None)
    batch_run_cancel(run=run)
    run_chunk(run_id=run.pk, item_ids=list(run.items.values_list("id", flat=True)))
    assert len(requests_sent(provider)) == 2
    run_resume(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and len(requests_sent(provider)) == 5


def test_it_prints_the_run_id_first_and_waits_for_the_end(eager, eval_corpus, provider, model):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "run_generation",
        "--dataset",
        "Eval corpus",
        "--model",
        "fake-llm",
        "--prompt",
        "zero-shot",
        "--limit",
        "3",
        "--wait",
        stdout=out,
        stderr=err,
    )
    lines = out.getvalue().splitlines()
    run = Run.objects.get(pk=int(lines[0]))
    assert run.items.count() == 3 and run.status == RunStatus.DONE
    assert "done: 3 done" in lines[-1]
    out = io.StringIO()
    call_command(
        "run_judge",
        "--run",
        str(run.pk),
        "--judge",
        "fake-llm",
        "--strategy",
        "aspect",
        "--wait",
        stdout=out,
        stderr=io.StringIO(),
    )
    judge_id = int(out.getvalue().splitlines()[0])
    out = io.StringIO()
    call_command("run_report", str(judge_id), "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    assert set(report["run"]) >= {
        "id",
        "kind",
        "model",
        "status",
        "n_items",
        "n_done",
        "n_failed",
        "n_unscored",
        "n_cached",
    }
    assert {"average", "by_theme", "by_trait"} <= set(report)
    out = io.StringIO()
    call_command("run_report", str(judge_id), "--format", "csv", stdout=out)
    frame = pd.read_csv(io.StringIO(out.getvalue()))
    assert "by_theme.love" in set(frame["key"])


def test_it_exits_non_zero_when_a_waited_run_fails(eager, eval_corpus, provider, model):
    provider.failures = [ClientError("nope", status=400)]
    out = io.StringIO()
    call_command(
        "run_classification",
        "--dataset",
        "Eval corpus",
        "--model",
        "fake-llm",
        "--task",
        "traits",
        "--wait",
        stdout=out,
        stderr=io.StringIO(),
    )
    run = Run.objects.get(pk=int(out.getvalue().splitlines()[0]))
    assert run.status == RunStatus.DONE and run_progress(run=run)["n_failed"] == 1
    run_cancel_target = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    Run.objects.filter(pk=run_cancel_target.pk).update(status=RunStatus.CANCELLED)
    from evaluation.management.commands._runs import wait_for

    class Cmd:
        stdout = io.StringIO()
        stderr = type("E", (), {"_out": io.StringIO()})()

    with pytest.raises(CommandError, match="cancelled"):
        wait_for(Cmd(), run_cancel_target)


def test_it_registers_a_model_from_the_cli_and_refuses_bad_values():
    call_command(
        "add_model",
        "vllm",
        "--provider",
        "openai",
        "--base-url",
        "http://127.0.0.1:8000/v1",
        "--model-id",
        "Qwen/Qwen3-14B",
        "--api-key-env",
        "VIVID_MODEL_KEY_VLLM",
        "--max-concurrency",
        "8",
        "--rpm",
        "600",
        "--timeout",
        "30",
        stdout=io.StringIO(),
    )
    model = ModelConfig.objects.get(name="vllm")
    assert (model.max_concurrency, model.requests_per_minute, model.timeout, model.api_key_env) == (
        8,
        600,
        30.0,
        "VIVID_MODEL_KEY_VLLM",
    )
    assert model.slots.count() == 8
    with pytest.raises(CommandError, match="base_url"):
        call_command("add_model", "nourl", "--provider", "openai", "--model-id", "x", stdout=io.StringIO())
    with pytest.raises(CommandError, match="api_key_env"):
        call_command(
            "add_model",
            "leaky",
            "--provider",
            "openai",
            "--base-url",
            "http://x",
            "--model-id",
            "x",
            "--api-key-env",
            "sk-abc123/secret",
            stdout=io.StringIO(),
        )


def test_it_fails_the_run_when_the_model_cannot_be_reached(eager, eval_corpus, monkeypatch):
    monkeypatch.delenv("VIVID_MODEL_KEY_TEST_MISSING", raising=False)
    model = make_model("keyless", model_id="m", api_key_env="VIVID_MODEL_KEY_TEST_MISSING")
    run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "VIVID_MODEL_KEY_TEST_MISSING" in run.error


def test_it_batches_a_local_model(eager, eval_corpus, provider, model, settings):
    settings.EVAL_LOCAL_BATCH = 4
    batches = []

    def complete_batch(conversations, **params):
        batches.append(len(conversations))
        return [Completion(text="Lời giải thích theo lô.", tokens_in=7, tokens_out=3) for _ in conversations]

    provider.complete_batch = complete_batch
    run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    run.refresh_from_db()
    # The first item alone (through complete()), then batches doubling up to EVAL_LOCAL_BATCH.
    assert run.status == RunStatus.DONE and batches == [2, 2]
    assert len(requests_sent(provider)) == 1
    assert run.items.filter(response="Lời giải thích theo lô.").count() == 4
    again = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    assert batches == [2, 2] and run_progress(run=again)["n_cached"] == 5


def test_it_stores_each_item_of_a_batch_as_its_reply_ends_with_its_own_latency(
    eager, eval_corpus, provider, model, settings, monkeypatch
):
    """A local batch's items are written one by one as the provider reports them, each with the
    time from the batch's start to the end of its own reply (not the batch's, for every item)."""
    settings.EVAL_LOCAL_BATCH = 4
    clock = {"now": 0.0}
    monkeypatch.setattr(runs_execution, "time", types.SimpleNamespace(monotonic=lambda: clock["now"], sleep=REAL_SLEEP))
    seen = []

    def complete_batch(conversations, *, on_done=None, **params):
        replies = []
        for index, _ in enumerate(conversations):
            clock["now"] += 1.5 * (index + 1)
            replies.append(Completion(text=f"Câu trả lời {index}.", tokens_in=7, tokens_out=3 + index))
            # Everything reported before is already stored when the next reply ends.
            seen.append(Run.objects.get().items.filter(status=ItemStatus.DONE).count())
            on_done(index, replies[-1])
        return replies

    provider.complete_batch = complete_batch
    run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and seen == [1, 2, 3, 4]
    # Batches of 2 and 2 after the first item: 1.5 s and 1.5 + 3 s from each batch's start.
    latencies = list(run.items.exclude(response__startswith="Một").order_by("id").values_list("latency_ms", flat=True))
    assert latencies == [1500, 4500, 1500, 4500]


def test_it_numbers_each_runs_items_from_one(eager, eval_corpus, provider, model):
    generation = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=eval_corpus)
    judge = run_start(kind="judge", model=model, prompt_name="zero-shot", source_run=generation)
    for run in (generation, judge):
        assert list(run.items.order_by("id").values_list("number", flat=True)) == [1, 2, 3, 4, 5]
    assert judge.items.order_by("id").first().pk > 5
