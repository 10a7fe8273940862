"""A worker killed in the middle of a run: a fresh worker finishes it, one result per item, no request answered twice."""

import os
import signal
import time
import uuid

import pytest

from evaluation.models import ItemStatus, Run, RunItem, RunStatus
from evaluation.services import run_resume
from llm.selectors import batch_run_is_stalled
from llm.services import BatchRunError
from tests.conftest import celery_overrides, redis_test_url, skip_or_fail, start_worker, stop_worker, worker_log
from tests.evaluation.factories import make_model, make_run, numbered_dataset
from tests.evaluation.fake_openai import FakeOpenAI
from tests.waiting import wait_until

# Its own database: the worker's 3 s visibility timeout hands back any unacknowledged message in it.
REDIS_URL = redis_test_url("killed worker's broker")
N_ITEMS = 40

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@pytest.fixture
def redis_queue(settings):
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.exceptions.ConnectionError:
        skip_or_fail(f"Redis is not reachable at {REDIS_URL}")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    queue = f"kill-{uuid.uuid4().hex[:8]}"
    with celery_overrides(broker_url=REDIS_URL, task_default_queue=queue, task_always_eager=False):
        yield queue


def logs_of(*workers) -> str:
    return "\n\n".join(worker_log(w)[-3000:] for w in workers)


def test_it_finishes_a_run_after_its_worker_is_killed(redis_queue, settings):
    settings.EVAL_STALL_SECONDS = 3
    dataset = numbered_dataset(N_ITEMS, name="Kill corpus")
    worker_env = {"EVAL_CHUNK_SIZE": "4", "CELERY_VISIBILITY_TIMEOUT": "3"}
    with FakeOpenAI(latency_ms=100) as server:
        # The killed worker's slots stay taken for the model's timeout and a margin (llm.services.throttle):
        # the fresh worker waits that out, so the timeout is short, though 20 times the latency.
        model = make_model("slow", base_url=server.base_url, model_id="m", max_concurrency=2, timeout=2)
        first = start_worker(broker_url=REDIS_URL, queue=redis_queue, env=worker_env)
        try:
            run = make_run(dataset, model)
            done = lambda: RunItem.objects.filter(run=run, status=ItemStatus.DONE).count()  # noqa: E731
            wait_until(lambda: done() >= 6, timeout=60, explain=lambda: logs_of(first))
            os.kill(first.pid, signal.SIGKILL)  # no warm shutdown: tasks in flight are lost with it
            first.wait(timeout=10)
            time.sleep(0.5)  # let the server finish answering the dead worker's requests
            finished_before = list(
                RunItem.objects.filter(run=run, status=ItemStatus.DONE).values_list("messages", flat=True)
            )
            sent_before = server.count
            assert len(finished_before) < N_ITEMS, "the run finished before the kill; make items slower"
            second = start_worker(broker_url=REDIS_URL, queue=redis_queue, env=worker_env)
            try:
                # The broker would hand the lost chunk back after its visibility timeout;
                # a researcher's "resume" on the stalled run does not wait for that.
                with pytest.raises(BatchRunError):
                    run_resume(run=run)  # not stalled yet: a live run is never fanned out twice
                wait_until(
                    lambda: batch_run_is_stalled(run=Run.objects.get(pk=run.pk)),
                    timeout=30,
                    explain=lambda: logs_of(second),
                )
                run_resume(run=Run.objects.get(pk=run.pk))
                # Until the run itself is done: its last item and the run's own finish commit apart, and a
                # worker stopped between them (once no item was pending) left a finished run "running".
                wait_until(
                    lambda: Run.objects.get(pk=run.pk).status == RunStatus.DONE,
                    timeout=120,
                    explain=lambda: logs_of(first, second),
                )
            finally:
                stop_worker(second)
        finally:
            stop_worker(first)
        run.refresh_from_db()
        assert RunItem.objects.filter(run=run).count() == N_ITEMS
        assert RunItem.objects.filter(run=run, status=ItemStatus.DONE).count() == N_ITEMS
        assert run.status == RunStatus.DONE

        # Nothing finished before the kill was asked again; only what died in
        # flight with the worker (at most its concurrency) was sent twice.
        # A request cut off by the SIGKILL arrives with no body; it reached no model.
        def whole(requests):
            return [r for r in requests if "messages" in (r["body"] or {})]

        after_kill = [r["body"]["messages"] for r in whole(server.requests[sent_before:])]
        assert not [m for m in after_kill if m in finished_before]
        assert len(server.duplicates()) <= model.max_concurrency
        assert len({str(r["body"]["messages"]) for r in whole(server.requests)}) == N_ITEMS
