"""A real Celery worker, over Redis and over the embedded broker, runs an import queued from the web flow."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from annotation.models import Expression, ImportJob, ImportJobStatus
from annotation.services import import_job_confirm, import_job_create
from tests.conftest import celery_overrides, skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def _worker_database_url() -> str:
    """The test database as a URL the worker process can open."""
    conf = connection.settings_dict
    if connection.vendor == "postgresql":
        host = conf["HOST"] or "127.0.0.1"
        user = conf["USER"] or "postgres"
        return f"postgres://{user}@{host}:{conf['PORT'] or 5432}/{conf['NAME']}"
    name = str(conf["NAME"])
    if "memory" in name or not name:
        skip_or_fail("the SQLite test database is in memory; set VIVID_TEST_SQLITE so a worker can share it")
    return f"sqlite:///{name}"


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
    env = {
        **os.environ,
        "DJANGO_ENV": "test",
        "DATABASE_URL": _worker_database_url(),
        "CELERY_BROKER_URL": url,
        "CELERY_QUEUE": queue,
    }
    env.pop("VIVID_TEST_SQLITE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "vivid_site", "worker", "--pool=solo", "--loglevel=info",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"{queue}@localhost"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    yield process
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def test_it_runs_a_confirmed_import_in_a_real_worker(worker, researcher):
    content = "expression,explanation,traits\nNước chảy đá mòn,Kiên trì thì việc khó cũng xong,\nĂn cháo đá bát,Vô ơn,pragmatic\n"
    job = import_job_create(dataset_name="Worker corpus", filename="w.csv", content=content.encode(), user=researcher)
    assert job.status == ImportJobStatus.PREVIEWED
    import_job_confirm(job=job, user=researcher)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in (ImportJobStatus.DONE, ImportJobStatus.FAILED):
            break
        if worker.poll() is not None:
            pytest.fail(f"worker exited early:\n{worker.stdout.read()}")
        time.sleep(0.3)
    else:
        worker.terminate()
        pytest.fail(f"the worker did not finish the import in time:\n{worker.communicate(timeout=20)[0]}")
    assert job.status == ImportJobStatus.DONE, job.report
    assert job.report["summary"] == "created 2, skipped_duplicates 0"
    assert Expression.objects.filter(dataset__name="Worker corpus").count() == 2
    assert ImportJob.objects.get(pk=job.pk).dataset.name == "Worker corpus"
