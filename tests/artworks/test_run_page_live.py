"""The live artwork pipeline run page (issue 12, item 1): what each poll carries, no trigger
once the run ends, and the no-worker hint for a queued run nobody picks up."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from artworks.models import ArtworkPipelineRun
from artworks.services.pipeline import artwork_run_start
from evaluation.models import ItemStatus, RunStatus
from llm.selectors import batch_run_waiting_for_worker
from llm.selectors.runs import WORKER_COMMAND
from llm.services import batch_run_cancel, batch_run_resume
from tests.artworks.test_pipeline import collection, media  # noqa: F401 - fixtures
from tests.evaluation.factories import stored_model


@pytest.fixture
def queued_run(collection):  # noqa: F811
    # Nothing answers at its address: no test here sends a request.
    model = stored_model(name="fake-vlm", model_id="fake-vlm")
    return artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)


def poll(client, run):
    url = reverse("artworks:run_detail", args=[run.pk])
    return client.get(url, headers={"HX-Request": "true"}).content.decode()


def test_it_sends_the_failed_items_and_times_out_of_band_with_each_poll(researcher_client, queued_run):
    started = timezone.now() - timedelta(seconds=5)
    ArtworkPipelineRun.objects.filter(pk=queued_run.pk).update(status=RunStatus.RUNNING, started_at=started)
    html = poll(researcher_client, queued_run)
    assert html.lstrip().startswith('<section id="artwork-run-progress"') and 'hx-trigger="every 1s"' in html
    assert '<dl id="artwork-run-times" hx-swap-oob="true">' in html
    assert '<section id="artwork-run-failed" hx-swap-oob="true">' in html
    assert "Failed items" not in html
    started_text = re.search(r'data-testid="started">([^<]*)<', html).group(1)
    assert started_text != "—" and re.search(r"\d\d:\d\d", started_text)
    assert re.search(r'data-testid="finished">—<', html)

    item = queued_run.items.order_by("id").first()
    queued_run.items.filter(pk=item.pk).update(
        status=ItemStatus.FAILED, error="no valid JSON in the reply", response="not json at all"
    )
    html = poll(researcher_client, queued_run)
    failed = re.search(r'<section id="artwork-run-failed".*?</section>', html, re.S).group(0)
    assert f'data-item="{item.pk}"' in failed and "not json at all" in failed and "no valid JSON" in failed
    row = re.search(rf'<tr data-step="{item.step}">(.*?)</tr>', html, re.S).group(1)
    assert 'class="eval-bad">1<' in row


def test_it_stops_polling_once_the_run_ends_without_a_reload_link(researcher_client, queued_run):
    ArtworkPipelineRun.objects.filter(pk=queued_run.pk).update(
        status=RunStatus.DONE, started_at=timezone.now(), finished_at=timezone.now()
    )
    queued_run.items.update(status=ItemStatus.DONE)
    html = poll(researcher_client, queued_run)
    progress = re.search(r'<section id="artwork-run-progress".*?</section>', html, re.S).group(0)
    assert "hx-trigger" not in html and "The run has finished." in progress and "100%" in progress
    assert "<a " not in progress  # nothing to reload: the poll brought every part
    assert not re.search(r'data-testid="finished">—<', html)

    page = researcher_client.get(reverse("artworks:run_detail", args=[queued_run.pk])).content.decode()
    assert "hx-trigger" not in page and "The run has finished." not in page
    assert 'id="artwork-run-times"' in page and 'id="artwork-run-failed"' in page and "hx-swap-oob" not in page


def test_it_says_no_worker_has_picked_a_queued_run_up_after_the_setting(researcher_client, queued_run, settings):
    settings.EVAL_NO_WORKER_SECONDS = 30
    assert 'data-testid="no-worker"' not in poll(researcher_client, queued_run)
    ArtworkPipelineRun.objects.filter(pk=queued_run.pk).update(queued_at=timezone.now() - timedelta(seconds=31))
    html = poll(researcher_client, queued_run)
    assert "No worker has picked this run up after 30 seconds" in html and f"<code>{WORKER_COMMAND}</code>" in html
    page = researcher_client.get(reverse("artworks:run_detail", args=[queued_run.pk])).content.decode()
    assert 'data-testid="no-worker"' in page

    # Picked up: running, the hint goes.
    ArtworkPipelineRun.objects.filter(pk=queued_run.pk).update(status=RunStatus.RUNNING, started_at=timezone.now())
    assert 'data-testid="no-worker"' not in poll(researcher_client, queued_run)


def test_it_counts_the_no_worker_wait_from_the_last_time_the_run_was_queued(queued_run, settings):
    settings.EVAL_NO_WORKER_SECONDS = 30
    assert queued_run.queued_at is not None
    long_ago = timezone.now() - timedelta(hours=1)
    ArtworkPipelineRun.objects.filter(pk=queued_run.pk).update(queued_at=long_ago, created_at=long_ago)
    queued_run.refresh_from_db()
    assert batch_run_waiting_for_worker(run=queued_run)
    batch_run_cancel(run=queued_run)
    assert not batch_run_waiting_for_worker(run=queued_run)
    run = batch_run_resume(run=queued_run)
    assert run.status == RunStatus.QUEUED and run.queued_at > long_ago
    assert not batch_run_waiting_for_worker(run=run)
