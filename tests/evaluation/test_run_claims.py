"""Chunks claim their items: a redelivered fan-out sends nothing a live chunk works on, a dead
chunk's claims expire, a failing chunk frees its claims, and fingerprints are recorded atomically."""

import collections
import threading
from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.urls import reverse
from django.utils import timezone

from evaluation.models import ItemStatus, Run, RunItem, RunStatus
from evaluation.services import run_chunk, run_execute, run_resume
from evaluation.services.runs import execution as runs_execution
from evaluation.services.runs import lifecycle as runs_lifecycle
from evaluation.services.runs import run_fingerprint_record, run_items_claim_more
from llm.models import ModelConfig
from llm.services import SlotLease

from .factories import make_model, make_run, numbered_dataset

pytestmark = pytest.mark.django_db

N_ITEMS = 6


@pytest.fixture
def claims_dataset(db):
    """``N_ITEMS`` numbered expressions: one item each, so requests and items can be counted against each other."""
    return numbered_dataset(N_ITEMS, name="Claims corpus")


@pytest.fixture
def run(claims_dataset, fake_openai):
    # One request at a time (make_model's one slot): worker threads cannot see a test transaction's rows.
    model = make_model("claims", base_url=fake_openai.base_url, model_id="m", timeout=5)
    # The enqueue waits for a commit that a test transaction never makes: the test fans out itself.
    run = make_run(claims_dataset, model)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    return run


def hook_first_request(monkeypatch, action):
    """Call ``action`` once, from inside the first request a chunk sends (the chunk holds its claims then)."""
    real_provider_for = runs_execution.provider_for
    fired = []

    def provider_for(model):
        provider = real_provider_for(model)
        complete = provider.complete

        def hooked(*args, **kwargs):
            if not fired:
                fired.append(True)
                action()
            return complete(*args, **kwargs)

        provider.complete = hooked
        return provider

    monkeypatch.setattr(runs_execution, "provider_for", provider_for)
    return fired


def test_it_sends_nothing_twice_when_the_fan_out_is_redelivered_while_a_chunk_works(
    eager, run, fake_openai, monkeypatch
):
    ids = list(run.items.order_by("id").values_list("id", flat=True))
    # Eagerly, the redelivered fan-out runs inside the live chunk's request, so it can only take the model's one
    # slot once the live chunk's lease lapses (its timeout plus a margin): a second, not the fixture's ten.
    ModelConfig.objects.filter(pk=run.model_id).update(timeout=1)
    run.model.refresh_from_db()
    monkeypatch.setattr(SlotLease, "MARGIN_SECONDS", 0)
    fired = hook_first_request(monkeypatch, lambda: run_execute(run_id=run.pk))
    run_chunk(run_id=run.pk, item_ids=ids[:2])  # a live chunk; the redelivered fan-out runs inside it
    assert fired
    assert fake_openai.count == N_ITEMS
    assert fake_openai.duplicates() == []
    assert run.items.filter(status=ItemStatus.DONE).count() == N_ITEMS
    run.refresh_from_db()
    assert run.status == RunStatus.DONE


def test_it_leaves_a_live_claim_alone_and_takes_over_an_expired_one(eager, run, fake_openai, settings):
    settings.EVAL_STALL_SECONDS = 60
    items = list(run.items.order_by("id"))
    now = timezone.now()
    RunItem.objects.filter(pk=items[0].pk).update(claim_token="live", claimed_at=now)
    RunItem.objects.filter(pk__in=[i.pk for i in items[1:3]]).update(
        claim_token="dead", claimed_at=now - timedelta(seconds=61)
    )
    run_execute(run_id=run.pk)
    assert fake_openai.count == N_ITEMS - 1
    assert list(run.items.filter(status=ItemStatus.PENDING).values_list("pk", "claim_token")) == [(items[0].pk, "live")]
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING  # the live chunk finishes the run


def test_it_runs_only_the_items_a_chunk_claimed(eager, run, fake_openai):
    ids = list(run.items.order_by("id").values_list("id", flat=True))
    RunItem.objects.filter(pk=ids[0]).update(claim_token="other", claimed_at=timezone.now())
    run_chunk(run_id=run.pk, item_ids=ids)  # a redelivered chunk
    assert fake_openai.count == N_ITEMS - 1
    assert RunItem.objects.get(pk=ids[0]).status == ItemStatus.PENDING


@pytest.mark.parametrize("error", [RuntimeError("boom"), SoftTimeLimitExceeded()], ids=["error", "time-limit"])
def test_it_releases_its_claims_when_a_chunk_dies_of_an_exception(eager, run, fake_openai, monkeypatch, error):
    ids = list(run.items.order_by("id").values_list("id", flat=True))

    def fail():
        raise error

    hook_first_request(monkeypatch, fail)
    with pytest.raises(type(error)):
        run_chunk(run_id=run.pk, item_ids=ids)
    assert not run.items.exclude(claim_token="").exists()
    assert fake_openai.count == 0
    run_execute(run_id=run.pk)  # a resume needs no wait for the claims to expire
    assert fake_openai.count == N_ITEMS
    assert run.items.filter(status=ItemStatus.DONE).count() == N_ITEMS


def test_it_frees_a_dead_chunks_claims_when_a_stalled_run_is_resumed(
    eager, run, fake_openai, settings, django_capture_on_commit_callbacks
):
    settings.EVAL_STALL_SECONDS = 60
    old = timezone.now() - timedelta(seconds=120)
    Run.objects.filter(pk=run.pk).update(started_at=old, heartbeat_at=old)
    run.items.update(claim_token="dead", claimed_at=old)
    with django_capture_on_commit_callbacks(execute=True):
        run_resume(run=Run.objects.get(pk=run.pk))
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert fake_openai.count == N_ITEMS


def test_it_records_a_fingerprint_without_losing_one_written_meanwhile(eager, run, fake_openai, monkeypatch):
    def other_worker():
        # Another chunk records its fingerprint between this chunk's reading and its writing.
        facts = Run.objects.get(pk=run.pk).reproducibility
        Run.objects.filter(pk=run.pk).update(reproducibility={**facts, "fingerprints": ["fp_other"]})

    real_provider_for = runs_execution.provider_for

    def provider_for(model):
        provider = real_provider_for(model)
        describe = provider.describe

        def hooked():
            other_worker()
            return describe()

        provider.describe = hooked
        return provider

    monkeypatch.setattr(runs_execution, "provider_for", provider_for)
    run_execute(run_id=run.pk)
    facts = Run.objects.get(pk=run.pk).reproducibility
    assert sorted(facts["fingerprints"]) == ["fp_fake_0001", "fp_other"]
    assert facts["provider_facts"]["provider"] == "openai"
    assert facts["prompt_hash"] == run.reproducibility["prompt_hash"]


def test_it_records_each_fingerprint_once(run):
    assert run_fingerprint_record(run_id=run.pk, fingerprint="fp_a", provider_facts={"provider": "x"})
    assert not run_fingerprint_record(run_id=run.pk, fingerprint="fp_a", provider_facts={"provider": "y"})
    assert run_fingerprint_record(run_id=run.pk, fingerprint="fp_b", provider_facts={"provider": "y"})
    facts = Run.objects.get(pk=run.pk).reproducibility
    assert facts["fingerprints"] == ["fp_a", "fp_b"]
    assert facts["provider_facts"] == {"provider": "x"}


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_keeps_every_fingerprint_recorded_by_concurrent_chunks(claims_dataset, fake_openai, monkeypatch):
    monkeypatch.setattr(runs_lifecycle, "run_execute_enqueue", lambda run_id: None)
    model = make_model("concurrent", base_url=fake_openai.base_url, model_id="m", max_concurrency=4)
    run = make_run(claims_dataset, model)
    n = 8
    barrier = threading.Barrier(n)
    errors = []

    def record(k):
        from django.db import connection

        try:
            barrier.wait()
            run_fingerprint_record(run_id=run.pk, fingerprint=f"fp_{k}", provider_facts={"k": k})
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=record, args=(k,)) for k in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(Run.objects.get(pk=run.pk).reproducibility["fingerprints"]) == sorted(f"fp_{k}" for k in range(n))


def test_it_shows_a_stalled_run_with_resume_on_its_page(run, researcher_client, settings):
    settings.EVAL_STALL_SECONDS = 60
    url = reverse("evaluation:run_detail", args=[run.pk])
    assert 'data-testid="stalled"' not in researcher_client.get(url).content.decode()
    Run.objects.filter(pk=run.pk).update(
        started_at=timezone.now() - timedelta(seconds=61), heartbeat_at=timezone.now() - timedelta(seconds=61)
    )
    page = researcher_client.get(url).content.decode()
    assert 'data-testid="stalled"' in page
    assert reverse("evaluation:run_resume", args=[run.pk]) in page


def test_it_claims_more_of_the_run_when_its_own_items_run_out(eager, run, fake_openai):
    ids = list(run.items.order_by("id").values_list("id", flat=True))
    run_chunk(run_id=run.pk, item_ids=ids[:2])
    assert fake_openai.count == N_ITEMS
    assert fake_openai.duplicates() == []
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    run_chunk(run_id=run.pk, item_ids=ids[2:])  # the fan-out's later chunk finds its items done
    assert fake_openai.count == N_ITEMS


def test_it_stops_claiming_more_once_a_quarter_of_the_task_time_limit_has_passed(eager, run, fake_openai, settings):
    settings.CELERY_TASK_SOFT_TIME_LIMIT = 0
    ids = list(run.items.order_by("id").values_list("id", flat=True))
    run_chunk(run_id=run.pk, item_ids=ids[:2])
    assert fake_openai.count == 2
    assert run.items.filter(status=ItemStatus.PENDING, claim_token="").count() == N_ITEMS - 2


def test_it_leaves_the_other_chunks_their_part_of_the_runs_last_items(run):
    """Once fewer than a claim's worth are left, a chunk takes its part of them (its share of the
    model's slots, at least one): a chunk that took them all would work its last rounds alone
    while the others' slots sat idle."""
    ids = list(run.items.order_by("id").values_list("id", flat=True))

    def claim(token, *, limit=64, share=0.5):
        return [item.pk for item in run_items_claim_more(run_id=run.pk, token=token, limit=limit, share=share)]

    assert claim("a") == ids[:3]
    assert claim("b") == ids[3:5]
    assert claim("a", share=0.01) == ids[5:]
    assert claim("b") == []


def test_it_claims_a_whole_claim_while_more_than_that_is_left(run):
    ids = list(run.items.order_by("id").values_list("id", flat=True))
    assert [item.pk for item in run_items_claim_more(run_id=run.pk, token="a", limit=4, share=0.25)] == ids[:4]


def test_it_tops_a_chunks_queue_up_only_once_it_holds_less_than_half_a_round(run, monkeypatch):
    """A chunk holding rounds of queued items at the end of a run keeps them from the slots of the
    chunks that have run out: it claims more only once its queue is below half its slots."""
    ModelConfig.objects.filter(pk=run.model_id).update(max_concurrency=32)
    run.refresh_from_db()
    context = runs_execution._RunContext(run, claim_token="a")
    for _ in range(16):
        context.lease_add(SlotLease(run.model))
    calls = []
    monkeypatch.setattr(runs_execution, "run_items_claim_more", lambda **kwargs: calls.append(kwargs) or [])
    assert context.claim_more(collections.deque(range(8)), wait=False)
    assert calls == []
    assert context.claim_more(collections.deque(range(7)), wait=False)
    assert [(call["limit"], call["share"]) for call in calls] == [(64, 0.5)]


def claim_at_the_same_instant(claims_dataset, monkeypatch, *, limit: int) -> tuple[Run, dict]:
    """Chunks "a" and "b" read the same claimable items; then "a" claims and loads them before "b" claims."""
    monkeypatch.setattr(runs_lifecycle, "run_execute_enqueue", lambda run_id: None)
    run = make_run(claims_dataset, make_model("split", base_url="http://127.0.0.1:9/v1", model_id="m"))
    both_read, a_has_them = threading.Barrier(2), threading.Event()
    read, load = runs_execution._claimable_ids, runs_execution._claimed_items
    reads = {"a": 0, "b": 0}

    def read_together(run_id, limit):
        ids = read(run_id, limit)
        reads[threading.current_thread().name] += 1
        if reads[threading.current_thread().name] == 1:  # only the first pick is a race
            both_read.wait(10)
            if threading.current_thread().name == "b":
                a_has_them.wait(10)
        return ids

    def load_then_let_b_go(token, ids=None):
        items = load(token, ids)
        if token == "a":
            a_has_them.set()
        return items

    monkeypatch.setattr(runs_execution, "_claimable_ids", read_together)
    monkeypatch.setattr(runs_execution, "_claimed_items", load_then_let_b_go)
    claimed = {}

    def claim(token):
        from django.db import connection

        try:
            claimed[token] = [item.pk for item in run_items_claim_more(run_id=run.pk, token=token, limit=limit)]
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(token,), name=token) for token in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return run, claimed


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_never_gives_two_chunks_claiming_at_the_same_instant_the_same_item(claims_dataset, monkeypatch):
    run, claimed = claim_at_the_same_instant(claims_dataset, monkeypatch, limit=N_ITEMS)
    assert sorted(claimed["a"]) == sorted(run.items.values_list("pk", flat=True))
    assert claimed["b"] == []


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_claims_the_next_items_when_another_chunk_took_the_ones_it_picked(claims_dataset, monkeypatch):
    """Losing a pick is not the end of the run: a chunk told "nothing" stops claiming and ends with
    the rest of the run waiting for the fan-out's later chunks (a dip in the middle of a run)."""
    run, claimed = claim_at_the_same_instant(claims_dataset, monkeypatch, limit=N_ITEMS // 2)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    assert sorted(claimed["a"]) == ids[: N_ITEMS // 2]
    assert sorted(claimed["b"]) == ids[N_ITEMS // 2 :]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_splits_the_run_between_chunks_claiming_at_the_same_instant(db, fake_openai, monkeypatch):
    monkeypatch.setattr(runs_lifecycle, "run_execute_enqueue", lambda run_id: None)
    model = make_model("split", base_url=fake_openai.base_url, model_id="m", max_concurrency=2)
    run = make_run(numbered_dataset(40, name="Split corpus"), model)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    ids = list(run.items.order_by("id").values_list("id", flat=True))
    barrier = threading.Barrier(4)
    errors = []

    def chunk(part):
        from django.db import connection

        try:
            barrier.wait()
            run_chunk(run_id=run.pk, item_ids=part)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=chunk, args=(ids[k : k + 2],)) for k in range(0, 8, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert fake_openai.duplicates() == []
    assert fake_openai.count == 40
    assert run.items.filter(status=ItemStatus.DONE).count() == 40
