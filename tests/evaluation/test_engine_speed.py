"""The engine's speed-ups change nothing a run stores: one transaction per item stores every
item once with its own reply and cache row, threads started only for slots held (one slot
poller per process) still keep the model's cap between chunks, and the fake endpoint's hard
cap (which the benchmark relies on) refuses or queues."""

import json
import threading
import time
import urllib.error
import urllib.request

import pytest

from evaluation.models import ItemStatus, Run, RunItem, RunStatus
from evaluation.services import run_chunk, run_execute
from evaluation.services.runs.execution import SLOT_WAIT_MAX_SECONDS, SLOT_WAIT_SECONDS, _process_share
from llm.models import ModelSlot, ResponseCache
from llm.services import SlotLease
from tests.conftest import celery_overrides

from .factories import make_model, make_run, numbered_dataset
from .fake_openai import FakeOpenAI, default_reply

# Chunk threads use their own connections: they must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def running_run(n_items: int, *, cap: int, server: FakeOpenAI) -> Run:
    dataset = numbered_dataset(n_items, name=f"Speed {n_items}")
    model = make_model("speed", base_url=server.base_url, model_id="m", max_concurrency=cap, timeout=10)
    run = make_run(dataset, model)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    return run


def assert_each_item_stored_once_with_its_reply(run: Run, server: FakeOpenAI) -> None:
    server.wait_idle()
    items = list(RunItem.objects.filter(run=run))
    assert {item.status for item in items} == {ItemStatus.DONE}
    for item in items:
        assert item.response == default_reply({"messages": item.messages})
        assert item.tokens_out > 0 and not item.cached
    assert server.count == len(items)
    assert server.duplicates() == []
    assert ResponseCache.objects.count() == len(items)


def test_one_transaction_per_item_stores_each_item_and_its_cache_row_once():
    with FakeOpenAI(latency_ms=20, max_concurrent=8) as server:
        run = running_run(60, cap=8, server=server)
        run_chunk(run_id=run.pk, item_ids=list(run.items.values_list("id", flat=True)))
        assert_each_item_stored_once_with_its_reply(run, server)
        assert server.refused == 0 and server.max_in_flight <= 8
        assert Run.objects.get(pk=run.pk).status == RunStatus.DONE


def test_a_cached_rerun_stores_the_same_replies_without_a_request_or_a_slot():
    with FakeOpenAI(latency_ms=5, max_concurrent=4) as server:
        first = running_run(30, cap=4, server=server)
        run_chunk(run_id=first.pk, item_ids=list(first.items.values_list("id", flat=True)))
        sent = server.count
        rerun = make_run(first.dataset, first.model)
        Run.objects.filter(pk=rerun.pk).update(status=RunStatus.RUNNING)
        run_chunk(run_id=rerun.pk, item_ids=list(rerun.items.values_list("id", flat=True)))
        assert server.count == sent == 30
    replies = dict(first.items.values_list("expression_id", "response"))
    again = list(rerun.items.values_list("expression_id", "response", "status", "cached", "tokens_in", "attempts"))
    assert {e: r for e, r, *_ in again} == replies
    assert {(status, cached, tokens, attempts) for _, _, status, cached, tokens, attempts in again} == {
        (ItemStatus.DONE, True, 0, 0)
    }
    assert Run.objects.get(pk=rerun.pk).status == RunStatus.DONE
    assert not ModelSlot.objects.filter(model=first.model).exclude(holder="").exists()


def test_two_chunks_at_once_keep_the_models_cap_with_one_poller_per_process():
    # Two chunks, each wanting the whole cap: the second waits on the first's slots.
    with FakeOpenAI(latency_ms=30, max_concurrent=3) as server:
        run = running_run(40, cap=3, server=server)
        ids = list(run.items.order_by("id").values_list("id", flat=True))
        chunks = [
            threading.Thread(target=run_chunk, kwargs={"run_id": run.pk, "item_ids": part})
            for part in (ids[:20], ids[20:])
        ]
        for chunk in chunks:
            chunk.start()
        for chunk in chunks:
            chunk.join()
        assert_each_item_stored_once_with_its_reply(run, server)
        assert server.refused == 0 and server.max_in_flight <= 3


def test_a_chunk_looks_for_a_slot_held_elsewhere_less_and_less_often(monkeypatch):
    # Another worker holds one of the model's two slots for the whole chunk: each look for it is
    # a query, and at the first pause's pace a chunk would send fifty a second for nothing.
    with FakeOpenAI(latency_ms=50, max_concurrent=2) as server:
        run = running_run(12, cap=2, server=server)
        elsewhere = SlotLease(run.model)
        elsewhere.slots_ensure()
        assert elsewhere.try_acquire()
        looks = []
        look = SlotLease.try_acquire

        def counted(lease):
            looks.append(time.monotonic())
            return look(lease)

        monkeypatch.setattr(SlotLease, "try_acquire", counted)
        started = time.monotonic()
        run_chunk(run_id=run.pk, item_ids=list(run.items.values_list("id", flat=True)))
        elapsed = time.monotonic() - started
        elsewhere.release()
        assert_each_item_stored_once_with_its_reply(run, server)
    # 12 requests of 50 ms in one slot: 0.6 s or more, with looks 20, 40, 80 ms apart, then 160 ms.
    assert elapsed >= 0.6
    assert len(looks) <= 4 + elapsed / SLOT_WAIT_MAX_SECONDS < elapsed / SLOT_WAIT_SECONDS
    assert max(b - a for a, b in zip(looks, looks[1:], strict=False)) >= SLOT_WAIT_MAX_SECONDS


def post_chat(server: FakeOpenAI, results: list, n: int) -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"Câu {n}"}]}).encode()
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            results.append(response.status)
    except urllib.error.HTTPError as exc:
        results.append(exc.code)


@pytest.mark.parametrize("over_cap", ["refuse", "queue"])
def test_the_fake_endpoint_refuses_or_queues_beyond_its_hard_cap(over_cap):
    with FakeOpenAI(latency_ms=150, max_concurrent=2, over_cap=over_cap) as server:
        results: list = []
        threads = [threading.Thread(target=post_chat, args=(server, results, n)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        server.wait_idle()
    if over_cap == "refuse":
        assert sorted(results).count(429) == server.refused >= 1
        assert results.count(200) == 6 - server.refused
    else:
        assert results == [200] * 6 and server.queued >= 1


def test_a_chunk_takes_its_processs_share_at_once_and_the_whole_cap_alone():
    # In a worker of two pool processes a chunk starts half the cap's threads at once
    # (the rest after a pause, if no other process took those slots) ...
    with celery_overrides(task_always_eager=False, worker_concurrency=2):
        assert _process_share(32) == 16
        assert _process_share(3) == 2
    # ... and all of them where it is the only process (--inline, eager tests).
    with celery_overrides(task_always_eager=True, worker_concurrency=2):
        assert _process_share(32) == 32


@pytest.mark.parametrize(("cap", "sizes"), [(8, [200, 200, 50]), (32, [400, 50])])
def test_the_fan_out_sizes_chunks_to_the_models_cap_and_sends_each_item_once(cap, sizes, monkeypatch, settings):
    settings.EVAL_CHUNK_SIZE = 200
    with FakeOpenAI() as server:
        dataset = numbered_dataset(450, name=f"Fan-out {cap}")
        model = make_model("fan-out", base_url=server.base_url, model_id="m", max_concurrency=cap)
    run = make_run(dataset, model)
    sent = []
    monkeypatch.setattr("evaluation.tasks.run_chunk_task.delay", lambda run_id, ids: sent.append(ids))
    run_execute(run_id=run.pk)
    assert [len(ids) for ids in sent] == sizes
    assert sorted(i for ids in sent for i in ids) == sorted(run.items.values_list("id", flat=True))


def test_a_reply_being_stored_leaves_its_slot_to_the_next_request(monkeypatch):
    # While a thread stores its reply, the chunk's spare thread sends the next request in that
    # slot: the endpoint sees the whole cap at once during a store (a thread that kept its slot
    # through the store would leave at most cap - 1), and never more than the cap.
    from evaluation.services.runs.execution import SLOTS_PER_SPARE_THREAD, _RunContext

    cap = SLOTS_PER_SPARE_THREAD
    write = _RunContext._write
    in_flight_during_stores = []

    with FakeOpenAI(latency_ms=200, max_concurrent=cap) as server:

        def slow_write(self, *args, **kwargs):
            time.sleep(0.1)
            in_flight_during_stores.append(server.in_flight)
            return write(self, *args, **kwargs)

        monkeypatch.setattr(_RunContext, "_write", slow_write)
        run = running_run(24, cap=cap, server=server)
        run_chunk(run_id=run.pk, item_ids=list(run.items.values_list("id", flat=True)))
        assert_each_item_stored_once_with_its_reply(run, server)
        assert server.refused == 0 and server.max_in_flight == cap
    assert max(in_flight_during_stores) == cap
    assert not ModelSlot.objects.filter(model=run.model).exclude(holder="").exists()
