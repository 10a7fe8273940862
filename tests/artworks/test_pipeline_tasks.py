"""The artwork pipeline as a chain of short Celery tasks: each bounded, a time limit never
swallowed (tests/site/test_soft_time_limit.py scans every app for that), a run whose worker died
shown as stalled with Resume, and resumed to the end."""

from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from artworks.models import ArtworkPipelineRun, PipelineItem, PipelineStep
from artworks.services.pipeline import artwork_run_start, artwork_run_step, lifecycle, steps
from evaluation.models import ItemStatus, RunStatus
from llm.services import batch_run_resume
from tests.artworks.test_pipeline import collection, listener, media, server, speaker  # noqa: F401

pytestmark = pytest.mark.django_db


class Broker:
    """Stands in for Celery: records what the services enqueue, and runs it one task at a time."""

    def __init__(self, monkeypatch):
        self.queue: list[tuple[int, str]] = []
        self.tasks: list[list[int]] = []  # the items each step task processed
        monkeypatch.setattr(
            lifecycle, "artwork_run_enqueue", lambda run_id: lifecycle.artwork_run_dispatch(run_id=run_id)
        )
        monkeypatch.setattr(lifecycle, "_enqueue_step", lambda run_id, token: self.queue.append((run_id, token)))
        real_process = lifecycle._process

        def process(run, item):
            self.tasks[-1].append(item.pk)
            real_process(run, item)

        monkeypatch.setattr(lifecycle, "_process", process)

    def run_one(self) -> None:
        run_id, token = self.queue.pop(0)
        self.tasks.append([])
        artwork_run_step(run_id=run_id, token=token)

    def drain(self) -> None:
        while self.queue:
            self.run_one()


@pytest.fixture
def broker(monkeypatch):
    return Broker(monkeypatch)


@pytest.fixture
def start(collection, speaker, listener, django_capture_on_commit_callbacks):  # noqa: F811
    def start_run(**kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return artwork_run_start(
                collection=collection, speaker=speaker, listener=listener, **{"samples": 2, **kwargs}
            )

    return start_run


def test_it_runs_a_pipeline_as_many_short_tasks(broker, start, settings, server):  # noqa: F811
    settings.ARTWORK_TASK_BUDGET_SECONDS = 0  # one item per task
    run = start()
    n_items = run.items.count()
    assert len(broker.queue) == 1  # the run task only claimed the run and queued the first step
    broker.drain()
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert len(broker.tasks) == n_items + 1  # the last one finds nothing left and finishes the run
    assert all(len(items) <= 1 for items in broker.tasks)
    assert sorted(pk for items in broker.tasks for pk in items) == sorted(run.items.values_list("pk", flat=True))
    assert server.duplicates() == []


def test_it_bounds_a_task_by_the_soft_time_limit_too(broker, start, settings):
    settings.ARTWORK_TASK_BUDGET_SECONDS = 3600
    settings.CELERY_TASK_SOFT_TIME_LIMIT = 0  # a quarter of it is the real budget
    run = start()
    broker.drain()
    assert ArtworkPipelineRun.objects.get(pk=run.pk).status == RunStatus.DONE
    assert all(len(items) <= 1 for items in broker.tasks)


def test_it_lets_a_soft_time_limit_in_a_step_propagate_and_resumes_the_item(
    broker,
    start,
    monkeypatch,
    server,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    real = steps.STEPS[PipelineStep.BACKGROUND]
    calls = []

    def out_of_time(run, item):
        calls.append(item.pk)
        if len(calls) == 1:
            raise SoftTimeLimitExceeded()
        return real(run, item)

    monkeypatch.setitem(steps.STEPS, PipelineStep.BACKGROUND, out_of_time)
    run = start()
    with pytest.raises(SoftTimeLimitExceeded):
        broker.drain()
    run.refresh_from_db()
    item = run.items.get(step=PipelineStep.BACKGROUND)
    assert item.status == ItemStatus.PENDING  # not failed, not done: the time limit is not the item's fault
    assert run.status == RunStatus.FAILED and "time limit" in run.error
    broker.queue.clear()  # Celery does not retry a task that ended in an exception
    with django_capture_on_commit_callbacks(execute=True):
        batch_run_resume(run=run)
    broker.drain()
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert calls == [item.pk, item.pk]
    assert server.duplicates() == []


def _age(run, seconds):
    old = timezone.now() - timedelta(seconds=seconds)
    ArtworkPipelineRun.objects.filter(pk=run.pk).update(heartbeat_at=old, started_at=old, created_at=old)
    PipelineItem.objects.filter(run=run).exclude(finished_at=None).update(finished_at=old)


def test_it_shows_a_run_whose_worker_died_as_stalled_with_resume(
    broker,
    start,
    settings,
    researcher,
    researcher_client,
    server,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    settings.ARTWORK_TASK_BUDGET_SECONDS = 0
    settings.EVAL_STALL_SECONDS = 60
    run = start()
    broker.run_one()
    broker.run_one()
    old_token = ArtworkPipelineRun.objects.get(pk=run.pk).worker_token
    broker.queue.clear()  # the worker dies: its next task is lost with it
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    detail_url = reverse("artworks:run_detail", args=[run.pk])
    api_url = reverse("artworks-api:run_detail", args=[run.pk])
    resume_url = reverse("artworks-api:run_resume", args=[run.pk])

    # A live run (heartbeat fresh) is not stalled, and is not resumed.
    assert api.get(api_url).json()["stalled"] is False
    assert 'data-testid="stalled"' not in researcher_client.get(detail_url).content.decode()
    assert api.post(resume_url, {}, format="json").status_code == 400

    _age(run, 61)
    assert api.get(api_url).json()["stalled"] is True
    listed = api.get(reverse("artworks-api:run_list")).json()["results"]
    assert [row["stalled"] for row in listed] == [True]
    page = researcher_client.get(detail_url).content.decode()
    assert 'data-testid="stalled"' in page and 'value="resume"' in page

    sent = server.count
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(detail_url, {"action": "resume"})
    assert response.status_code == 302
    broker.drain()
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert not run.items.filter(status=ItemStatus.PENDING).exists()
    assert server.count > sent and server.duplicates() == []
    # The dead chain's task, delivered again late, finds another chain owns the run.
    sent = server.count
    broker.tasks.append([])
    artwork_run_step(run_id=run.pk, token=old_token)
    assert broker.tasks[-1] == [] and server.count == sent


def test_it_keeps_the_cli_wait_path_in_process(collection, speaker, listener):  # noqa: F811
    from django.core.management import call_command

    call_command(
        "run_artwork_pipeline",
        "--collection",
        "demo",
        "--speaker",
        "speaker",
        "--listener",
        "listener",
        "--samples",
        "1",
        "--wait",
    )
    run = ArtworkPipelineRun.objects.get()
    assert run.status == RunStatus.DONE and run.worker_token and run.heartbeat_at
