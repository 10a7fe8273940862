"""The live run page (issue 12, item 1): what each poll carries, the no-worker hint and the model-loading phase."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluation.models import ItemStatus, Run, RunItem, RunPhase, RunStatus
from evaluation.services import run_resume
from evaluation.services.runs import execution as runs_execution
from evaluation.services.runs import lifecycle as runs_lifecycle
from llm.providers import Completion
from llm.selectors import batch_run_waiting_for_worker
from llm.services import batch_run_cancel

from .factories import labelled_csv, make_dataset, make_run


@pytest.fixture
def two_item_dataset(db):
    """Two expressions: a run of it has a first and a second item to finish one at a time."""
    return make_dataset(name="Live page", csv=labelled_csv(2))


@pytest.fixture
def queued_run(two_item_dataset, model):
    return make_run(two_item_dataset, model)


def poll(client, run, query=""):
    url = reverse("evaluation:run_progress", args=[run.pk]) + query
    return client.get(url, headers={"HX-Request": "true"}).content.decode()


def test_it_sends_the_items_times_and_report_out_of_band_with_each_poll(researcher_client, queued_run):
    first, second = queued_run.items.order_by("id")
    started = timezone.now() - timedelta(seconds=5)
    Run.objects.filter(pk=queued_run.pk).update(status=RunStatus.RUNNING, started_at=started)
    RunItem.objects.filter(pk=first.pk).update(
        status=ItemStatus.DONE, response="Giải thích một", tokens_in=11, tokens_out=7
    )
    html = poll(researcher_client, queued_run)
    assert html.lstrip().startswith('<section id="run-progress"') and 'hx-trigger="every 1s"' in html
    assert '<section id="run-items" aria-labelledby="items-heading" hx-swap-oob="true">' in html
    assert '<section id="run-report" aria-labelledby="report-heading" hx-swap-oob="true">' in html
    assert '<div id="run-times" hx-swap-oob="true">' in html
    row = re.search(rf'<tr data-item="{first.pk}">.*?</tr>', html, re.S).group(0)
    assert "Done" in row and "11 / 7" in row and "Giải thích một" in row
    assert timezone.localtime(started).strftime("%Y-%m-%d %H:%M UTC") in html

    RunItem.objects.filter(pk=second.pk).update(status=ItemStatus.DONE, response="Hai")
    Run.objects.filter(pk=queued_run.pk).update(status=RunStatus.DONE, finished_at=timezone.now())
    done = poll(researcher_client, queued_run)
    assert "hx-trigger" not in done and "The run has finished." in done
    assert re.search(rf'<tr data-item="{second.pk}">.*?Done', done, re.S)
    assert '<dd data-testid="finished">—</dd>' not in done
    page = researcher_client.get(reverse("evaluation:run_detail", args=[queued_run.pk])).content.decode()
    assert "hx-swap-oob" not in page  # the page itself renders the same parts in place


def test_it_polls_the_filter_and_page_the_person_is_looking_at(researcher_client, queued_run):
    url = reverse("evaluation:run_progress", args=[queued_run.pk])
    page = researcher_client.get(
        reverse("evaluation:run_detail", args=[queued_run.pk]) + "?items=failed&page=1"
    ).content.decode()
    assert f'hx-get="{url}?items=failed&amp;page=1"' in page
    RunItem.objects.filter(pk=queued_run.items.first().pk).update(status=ItemStatus.FAILED, error="400")
    html = poll(researcher_client, queued_run, "?items=failed")
    assert len(re.findall(r"<tr data-item=", html)) == 1


def test_it_says_no_worker_has_picked_the_run_up_only_after_the_setting(researcher_client, queued_run, settings):
    settings.EVAL_NO_WORKER_SECONDS = 15
    assert not batch_run_waiting_for_worker(run=queued_run)
    assert 'data-testid="no-worker"' not in poll(researcher_client, queued_run)
    Run.objects.filter(pk=queued_run.pk).update(queued_at=timezone.now() - timedelta(seconds=16))
    queued_run.refresh_from_db()
    assert batch_run_waiting_for_worker(run=queued_run)
    html = poll(researcher_client, queued_run)
    assert "No worker has picked this run up after 15 seconds" in html
    assert "<code>.venv/bin/celery -A vivid_site worker -l info</code>" in html


def test_it_counts_the_wait_for_a_worker_from_a_resume_not_from_the_runs_creation(queued_run, settings, monkeypatch):
    monkeypatch.setattr(runs_lifecycle, "run_execute_enqueue", lambda run_id: None)
    Run.objects.filter(pk=queued_run.pk).update(created_at=timezone.now() - timedelta(hours=1))
    batch_run_cancel(run=queued_run)
    run = run_resume(run=queued_run)
    assert run.status == RunStatus.QUEUED and not batch_run_waiting_for_worker(run=run)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    run.refresh_from_db()
    assert not batch_run_waiting_for_worker(run=run)  # a worker has it


class LoadingProvider:
    """A local model that loads on its first use; it notes the run's phase while loading."""

    def __init__(self, run_id):
        self.run_id = run_id
        self.loaded = False
        self.phase_while_loading = None

    def needs_warm_up(self):
        return not self.loaded

    def warm_up(self):
        self.phase_while_loading = Run.objects.get(pk=self.run_id).phase
        self.loaded = True

    def complete(self, messages, **params):
        assert self.loaded
        return Completion(text="Giải thích", tokens_in=3, tokens_out=2)

    def describe(self):
        return {"provider": "fake-local"}


def test_it_records_the_model_loading_phase_on_the_run_while_the_worker_loads(
    queued_run, monkeypatch, researcher_client
):
    provider = LoadingProvider(queued_run.pk)
    monkeypatch.setattr(runs_execution, "provider_for", lambda model: provider)
    Run.objects.filter(pk=queued_run.pk).update(status=RunStatus.RUNNING)
    runs_execution.run_chunk(run_id=queued_run.pk, item_ids=list(queued_run.items.values_list("id", flat=True)))
    queued_run.refresh_from_db()
    assert provider.phase_while_loading == RunPhase.LOADING_MODEL
    assert queued_run.phase == RunPhase.NONE and queued_run.status == RunStatus.DONE

    Run.objects.filter(pk=queued_run.pk).update(status=RunStatus.RUNNING, phase=RunPhase.LOADING_MODEL)
    assert "Loading the model: the first time it is converted, ~20 s" in poll(researcher_client, queued_run)
