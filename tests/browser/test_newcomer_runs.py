"""Issue 12, items 1 and 2: the run page a newcomer watches, in a real browser.

The live page moves every part of itself on each poll (progress, report, times and the
items table) and stops polling once the run ends; a queued run nobody picks up says so
with the command that starts a worker; a loading local model says so; a long reply and
long prompt messages wrap and scroll inside their boxes instead of running off the edge.
"""

import re

import pytest
from playwright.sync_api import expect

from evaluation.models import ItemStatus, Run, RunItem, RunPhase, RunStatus
from evaluation.services import run_execute
from evaluation.services.runs import lifecycle as runs_lifecycle
from llm.selectors.runs import WORKER_COMMAND
from tests.browser.conftest import assert_polling_stopped, poll_now
from tests.evaluation.factories import NOWHERE, make_model, make_run
from tests.evaluation.fake_openai import FakeOpenAI

# In the PostgreSQL pass of `make test` (pg_pass), so that the two passes take about as long.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.pg_pass,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


@pytest.fixture
def no_worker(monkeypatch):
    """Runs start queued and stay so: nothing is sent to a broker, as when no worker listens."""
    monkeypatch.setattr(runs_lifecycle, "run_execute_enqueue", lambda run_id: None)


def _queued_run(dataset, base_url: str) -> Run:
    return make_run(dataset, make_model("fake-gpt", base_url=base_url, model_id="fake-model"))


def test_it_updates_every_part_of_the_run_page_and_stops_polling_when_the_run_ends(
    context_for, live_server, researcher, dataset, no_worker, eager
):
    with FakeOpenAI(latency_ms=20) as server:
        run = _queued_run(dataset, server.base_url)
        page = context_for(researcher)
        page.clock.install()
        polls = []
        page.on("request", lambda request: polls.append(request.url) if "/progress/" in request.url else None)
        page.goto(f"{live_server.url}/evaluation/runs/{run.pk}/")
        rows = page.locator("#run-items tbody tr")
        expect(rows).to_have_count(3)
        for row in rows.all():
            expect(row).to_contain_text("Pending")
        expect(page.get_by_test_id("started")).to_have_text("—")
        with page.expect_request(re.compile(r"/progress/")):
            poll_now(page)  # the page polls while the run is queued

        # The worker's work, done in this thread while the page keeps polling.
        run_execute(run_id=run.pk)
        run.refresh_from_db()
        assert run.status == RunStatus.DONE and server.count == 3

    poll_now(page)
    expect(page.locator("#run-progress")).to_contain_text("The run has finished.")
    expect(page.locator("#run-progress")).to_contain_text("100%")
    for item in run.items.all():
        row = page.locator(f'#run-items tr[data-item="{item.pk}"]')
        expect(row).to_contain_text("Done")
        expect(row).to_contain_text(f"{item.tokens_in} / {item.tokens_out}")
        assert item.tokens_in and item.tokens_out
        expect(row).to_contain_text(item.response[:20])
    expect(page.get_by_test_id("started")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$"))
    expect(page.get_by_test_id("finished")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$"))
    expect(page.locator("#run-report")).to_contain_text("A generation run has no score of its own")
    expect(page.locator("#run-progress[hx-trigger]")).to_have_count(0)

    assert_polling_stopped(page, polls)


def test_it_says_no_worker_has_picked_a_queued_run_up_and_when_the_model_loads(
    context_for, live_server, researcher, dataset, no_worker, settings
):
    settings.EVAL_NO_WORKER_SECONDS = 1
    run = _queued_run(dataset, NOWHERE)
    page = context_for(researcher)
    page.clock.install()
    page.goto(f"{live_server.url}/evaluation/runs/{run.pk}/")
    hint = page.get_by_test_id("no-worker")
    # Shown by a poll, without a reload, once the run has waited longer than the setting.
    expect(hint).to_contain_text("No worker has picked this run up after 1 seconds")
    expect(hint.locator("code")).to_have_text(WORKER_COMMAND)

    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, phase=RunPhase.LOADING_MODEL)
    poll_now(page)
    expect(page.get_by_test_id("run-phase")).to_contain_text("Loading the model: the first time it is converted, ~20 s")
    expect(hint).to_have_count(0)
    Run.objects.filter(pk=run.pk).update(phase=RunPhase.NONE)
    poll_now(page)
    expect(page.get_by_test_id("run-phase")).to_contain_text("Waiting for the first replies.")


def test_it_wraps_a_long_reply_and_long_messages_inside_their_boxes(
    context_for, live_server, researcher, dataset, no_worker
):
    run = _queued_run(dataset, NOWHERE)
    item = run.items.order_by("id").first()
    unbroken = "https://example.org/" + "dài" * 400
    reply = "\n".join([unbroken, "Giải thích " * 300] * 6)
    RunItem.objects.filter(pk=item.pk).update(
        status=ItemStatus.DONE,
        response=reply,
        messages=[{"role": "system", "content": unbroken}, {"role": "user", "content": "Câu hỏi " + unbroken}],
    )
    page = context_for(researcher)
    page.set_viewport_size({"width": 900, "height": 800})
    page.goto(f"{live_server.url}/evaluation/runs/{run.pk}/items/{item.pk}/")
    main = page.locator("main").bounding_box()
    boxes = [page.get_by_test_id("raw-reply"), *page.locator(".eval-messages pre").all()]
    assert len(boxes) == 3
    for box in boxes:
        expect(box).to_be_visible()
        sizes = box.evaluate("e => [e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight]")
        scroll_width, client_width, _, _ = sizes
        assert scroll_width <= client_width, sizes  # wrapped: nothing runs past the right edge
        bound = box.bounding_box()
        assert bound["x"] + bound["width"] <= main["x"] + main["width"] + 1, (bound, main)
    reply_sizes = boxes[0].evaluate("e => [e.scrollHeight, e.clientHeight, getComputedStyle(e).overflowY]")
    assert reply_sizes[0] > reply_sizes[1] and reply_sizes[2] == "auto", reply_sizes  # a long reply scrolls in its box

    # The items table shows the start of the same reply: its column wraps rather than pushing
    # the table past the right edge of its scrolling box.
    page.goto(f"{live_server.url}/evaluation/runs/{run.pk}/")
    table_box = page.locator("#run-items .table-scroll")
    expect(table_box.locator(f'tr[data-item="{item.pk}"]')).to_contain_text("https://example.org/")
    sizes = table_box.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert sizes[0] <= sizes[1], sizes
