"""The engine's speed-ups change nothing a run stores: group-committed writes store every item
once with its own reply, one slot poller per process still keeps the model's cap between
chunks, and the fake endpoint's hard cap (which the benchmark relies on) refuses or queues."""

import json
import threading
import urllib.error
import urllib.request

import pytest

from evaluation.models import ItemStatus, ResponseCache, Run, RunItem, RunStatus
from evaluation.services import run_chunk
from evaluation.services.runs.execution import _GroupWriter

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


def test_group_committed_writes_store_each_item_once_with_its_reply():
    with FakeOpenAI(latency_ms=20, max_concurrent=8) as server:
        run = running_run(60, cap=8, server=server)
        run_chunk(run_id=run.pk, item_ids=list(run.items.values_list("id", flat=True)))
        assert_each_item_stored_once_with_its_reply(run, server)
        assert server.refused == 0 and server.max_in_flight <= 8
        assert Run.objects.get(pk=run.pk).status == RunStatus.DONE


def test_group_writer_writes_an_item_only_while_it_is_pending():
    with FakeOpenAI() as server:
        run = running_run(12, cap=1, server=server)
    ids = list(run.items.values_list("id", flat=True))
    writer = _GroupWriter()
    results = {}

    def write(item_id):
        results[item_id] = writer.write(item_id, {"status": ItemStatus.DONE, "response": f"r{item_id}"}, None)

    threads = [threading.Thread(target=write, args=(i,)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == dict.fromkeys(ids, True)
    assert dict(run.items.values_list("id", "response")) == {i: f"r{i}" for i in ids}
    # A second result for a done item (a redelivered chunk) is not stored over the first.
    assert writer.write(ids[0], {"status": ItemStatus.DONE, "response": "again"}, None) is False
    assert RunItem.objects.get(pk=ids[0]).response == f"r{ids[0]}"


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
