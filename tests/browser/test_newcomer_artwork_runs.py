"""Issue 12, item 1: the artwork pipeline run page a newcomer watches, in a real browser.

A queued run nobody picks up says so with the command that starts a worker; once a worker
runs it, each poll moves the counts per step, the failed items and the times without a
reload, and polling stops when the run ends, with no reload link left to click.
"""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from artworks.models import ArtworkPipelineRun
from artworks.services.pipeline import artwork_run_start
from evaluation.models import ItemStatus, RunStatus
from llm.models import ModelConfig, Provider
from llm.selectors.runs import WORKER_COMMAND
from tests.artworks.test_pipeline import collection, media  # noqa: F401 - fixtures
from tests.browser.conftest import assert_polling_stopped, poll_now

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_it_moves_every_part_of_the_artwork_run_page_and_stops_polling_when_the_run_ends(
    context_for,
    live_server,
    researcher,
    collection,  # noqa: F811 - the fixture imported above
    settings,
):
    settings.EVAL_NO_WORKER_SECONDS = 1
    # Nothing answers at this address: the test plays the worker by writing what it would.
    model = ModelConfig.objects.create(
        name="fake-vlm", provider=Provider.OPENAI, base_url="http://127.0.0.1:9/v1", model_id="fake-vlm"
    )
    run = artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)
    page = context_for(researcher)
    page.clock.install()
    polls = []
    page.on("request", lambda request: polls.append(request.url) if request.headers.get("hx-request") else None)
    page.goto(f"{live_server.url}/artworks/runs/{run.pk}/")

    hint = page.get_by_test_id("no-worker")
    expect(hint).to_contain_text("No worker has picked this run up after 1 seconds")
    expect(hint.locator("code")).to_have_text(WORKER_COMMAND)
    expect(page.get_by_test_id("started")).to_have_text("—")
    expect(page.locator("#artwork-run-failed details")).to_have_count(0)

    # A worker picks the run up and its first item fails.
    ArtworkPipelineRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, started_at=timezone.now())
    first = run.items.order_by("id").first()
    run.items.filter(pk=first.pk).update(
        status=ItemStatus.FAILED,
        error="no valid JSON in the reply",
        response="not json at all",
        finished_at=timezone.now(),
    )
    poll_now(page)
    expect(hint).to_have_count(0)
    failed = page.locator(f'#artwork-run-failed details[data-item="{first.pk}"]')
    expect(failed).to_contain_text("no valid JSON in the reply")
    expect(page.locator(f'tr[data-step="{first.step}"] td.eval-bad')).to_have_text("1")
    expect(page.get_by_test_id("started")).not_to_have_text("—")
    failed.locator("summary").click()
    expect(failed.locator("pre")).to_have_text("not json at all")

    # It finishes the rest.
    run.items.exclude(pk=first.pk).update(status=ItemStatus.DONE, finished_at=timezone.now())
    ArtworkPipelineRun.objects.filter(pk=run.pk).update(status=RunStatus.DONE, finished_at=timezone.now())
    poll_now(page)
    progress = page.locator("#artwork-run-progress")
    expect(progress).to_contain_text("The run has finished.")
    expect(progress).to_contain_text("100%")
    expect(progress.locator("a")).to_have_count(0)
    expect(page.get_by_test_id("finished")).to_have_text(re.compile(r"\d\d:\d\d"))
    expect(page.locator("#artwork-run-progress[hx-trigger]")).to_have_count(0)
    expect(page.get_by_role("button", name="Retry the failed items")).to_be_visible()

    assert_polling_stopped(page, polls)
