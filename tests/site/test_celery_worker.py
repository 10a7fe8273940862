"""A real Celery worker, over Redis and over the embedded broker, runs an import queued from the web flow."""

import os
import uuid
from pathlib import Path

import pytest

from annotation.models import Expression, ImportJob, ImportJobStatus
from annotation.services import import_job_confirm, import_job_create
from tests.conftest import celery_overrides, redis_test_url, skip_or_fail, start_worker, stop_worker, worker_log
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = redis_test_url("broker")

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@pytest.fixture(params=["redis", "embedded"])
def broker(request, tmp_path):
    """Redis (the scale-out path) and the embedded SQLite broker that `make demo` uses."""
    if request.param == "redis":
        import redis

        url = REDIS_URL
        try:
            redis.Redis.from_url(url, socket_connect_timeout=2).ping()
        except redis.exceptions.ConnectionError:
            skip_or_fail(f"Redis is not reachable at {url}")
    else:
        url = f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}"
    queue = f"test-{uuid.uuid4().hex[:8]}"
    with celery_overrides(broker_url=url, task_default_queue=queue, task_always_eager=False):
        yield url, queue


@pytest.fixture
def worker(broker, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    url, queue = broker
    process = start_worker(broker_url=url, queue=queue)
    yield process
    stop_worker(process)


def test_it_runs_a_confirmed_import_in_a_real_worker(worker, researcher):
    content = "expression,explanation,traits\nNước chảy đá mòn,Kiên trì thì việc khó cũng xong,\nĂn cháo đá bát,Vô ơn,pragmatic\n"
    job = import_job_create(dataset_name="Worker corpus", filename="w.csv", content=content.encode(), user=researcher)
    assert job.status == ImportJobStatus.PREVIEWED
    import_job_confirm(job=job, user=researcher)
    wait_until(
        lambda: ImportJob.objects.get(pk=job.pk).status in (ImportJobStatus.DONE, ImportJobStatus.FAILED),
        timeout=90,
        stopped=lambda: worker.poll() is not None,
        explain=lambda: f"the worker did not finish the import:\n{worker_log(worker)}",
    )
    job.refresh_from_db()
    assert job.status == ImportJobStatus.DONE, job.report
    assert job.report["summary"] == "created 2, skipped_duplicates 0"
    assert Expression.objects.filter(dataset__name="Worker corpus").count() == 2
    assert ImportJob.objects.get(pk=job.pk).dataset.name == "Worker corpus"


def test_it_starts_the_worker_at_the_niceness_of_worker_niceness(tmp_path, researcher, settings):
    """WORKER_NICENESS=5: the worker runs the web flow's import at a lower priority than the web server."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    url, queue = f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}", f"test-{uuid.uuid4().hex[:8]}"
    with celery_overrides(broker_url=url, task_default_queue=queue, task_always_eager=False):
        process = start_worker(broker_url=url, queue=queue, env={"WORKER_NICENESS": "5"})
        try:
            job = import_job_create(
                dataset_name="Niced", filename="n.csv", content=b"expression,explanation\nA,B\n", user=researcher
            )
            import_job_confirm(job=job, user=researcher)
            wait_until(
                lambda: ImportJob.objects.get(pk=job.pk).status == ImportJobStatus.DONE,
                timeout=90,
                stopped=lambda: process.poll() is not None,
                explain=lambda: worker_log(process),
            )
            job.refresh_from_db()
            assert job.status == ImportJobStatus.DONE, worker_log(process)
            assert os.getpriority(os.PRIO_PROCESS, process.pid) == min(os.nice(0) + 5, 19)
        finally:
            stop_worker(process)
