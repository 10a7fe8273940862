"""What a newcomer trips over (#23 item 6): a run on a local model that batches its generations.

The run page counts each item as its reply ends, also inside a batch; each item shows its own
latency (the time until its own reply ended), not the batch's for every item; and a run's items
are numbered 1..n within the run, not by their id across every run.
"""

import queue
import re
import threading
import types

import pytest
from django.db import connections
from playwright.sync_api import expect

from evaluation.models import ItemStatus, RunItem, RunStatus
from evaluation.services import run_execute, run_start
from evaluation.services.runs import execution as runs_execution
from evaluation.services.runs import lifecycle as runs_lifecycle
from llm.providers import Completion
from tests.browser.conftest import poll_now
from tests.evaluation.factories import labelled_csv, make_dataset, make_generation_run, make_model
from tests.waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


class LocalBatches:
    """Stands in for the built-in local model: it generates in batches and hands each reply over
    as it ends, when the test lets it. Row k of a batch ends k + 1 seconds after the row before
    it, on a clock the engine reads."""

    def __init__(self):
        self.release = queue.Queue()
        self.now = 0.0
        self.batches = []

    def complete(self, messages, *, temperature, max_tokens, seed=None, top_logprobs=None):
        return self.complete_batch([messages], temperature=temperature, max_tokens=max_tokens)[0]

    def complete_batch(self, conversations, *, temperature, max_tokens, seed=None, top_logprobs=None, on_done=None):
        self.batches.append(len(conversations))
        replies = []
        for index, _ in enumerate(conversations):
            self.release.get(timeout=60)
            self.now += index + 1
            replies.append(Completion(text="Điểm: 4", tokens_in=30, tokens_out=4, finish_reason="stop"))
            if on_done is not None:
                on_done(index, replies[-1])
        return replies

    def describe(self):
        return {"provider": "local-batches"}


def _wait_until_stored(run, finished: int, worker: threading.Thread) -> None:
    """Until the engine (in ``worker``) has stored ``finished`` replies: the page's next poll shows them."""

    def stored() -> int:
        return RunItem.objects.filter(run=run, status=ItemStatus.DONE).count()

    wait_until(
        lambda: stored() >= finished,
        timeout=30,
        interval=0.02,
        stopped=lambda: not worker.is_alive(),
        explain=lambda: (
            f"{stored()} of {finished} replies stored, the engine alive: {worker.is_alive()}; "
            f"{list(RunItem.objects.filter(run=run).values_list('status', 'error'))}"
        ),
    )


def test_it_counts_each_reply_of_a_batch_with_its_own_latency_and_numbers_items_from_one(
    context_for, live_server, researcher, eager, monkeypatch, settings
):
    settings.EVAL_LOCAL_BATCH = 4
    local = LocalBatches()
    monkeypatch.setattr(runs_execution, "provider_for", lambda model: local)
    monkeypatch.setattr(
        runs_execution, "time", types.SimpleNamespace(monotonic=lambda: local.now, sleep=lambda s: None)
    )
    monkeypatch.setattr(runs_lifecycle, "run_execute_enqueue", lambda run_id: None)
    source = make_generation_run(make_dataset(name="Năm câu", csv=labelled_csv(5)))
    judge = run_start(kind="judge", model=make_model("local-judge"), prompt_name="zero-shot", source_run=source)
    items = list(judge.items.order_by("id"))
    assert [item.pk for item in items] != [1, 2, 3, 4, 5]

    page = context_for(researcher)
    page.clock.install()
    page.goto(f"{live_server.url}/evaluation/runs/{judge.pk}/")
    numbers = page.locator("#run-items tbody td[data-number]")
    expect(numbers).to_have_text(["1", "2", "3", "4", "5"])

    def work():
        try:
            run_execute(run_id=judge.pk)
        finally:
            connections.close_all()

    worker = threading.Thread(target=work)
    worker.start()
    status = page.locator("#run-progress .eval-progress-status")
    try:
        expect(page.get_by_test_id("run-phase")).to_have_text("Waiting for the first replies.")
        for finished in range(1, 6):
            local.release.put(True)
            _wait_until_stored(judge, finished, worker)
            poll_now(page)
            expect(status).to_contain_text(f"{finished} of 5 items finished")
            row = page.locator(f'#run-items tr[data-item="{items[finished - 1].pk}"]')
            expect(row).to_contain_text("Done")
            if finished < 5:
                expect(page.locator(f'#run-items tr[data-item="{items[finished].pk}"]')).to_contain_text("Pending")
    finally:
        for _ in range(5):
            local.release.put(True)
        worker.join(timeout=60)
    judge.refresh_from_db()
    assert judge.status == RunStatus.DONE and local.batches == [1, 2, 2]

    # The first item alone; then in each batch of two, 1 s and 1 + 2 s after the batch's start.
    latencies = page.locator("#run-items tbody td.numeric:last-child")
    expect(latencies).to_have_text(["1000 ms", "1000 ms", "3000 ms", "1000 ms", "3000 ms"])
    page.locator("#run-items tbody tr").nth(2).get_by_role("link", name="3", exact=True).click()
    expect(page.locator('.breadcrumb [aria-current="page"]')).to_have_text("Item 3")
    expect(page).to_have_title(re.compile(rf"^Item 3 of run #{judge.pk} "))
