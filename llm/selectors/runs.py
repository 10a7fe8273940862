"""Reads about runs of any kind on the engine: whether one waits for a worker or has stalled."""

from django.conf import settings
from django.utils import timezone

from ..models import ItemStatus, RunStatus

WORKER_COMMAND = ".venv/bin/celery -A vivid_site worker -l info"


def worker_hint_context() -> dict:
    """What the no-worker notice (evaluation/_no_worker.html) of every run page of any kind shows."""
    return {"no_worker_seconds": settings.EVAL_NO_WORKER_SECONDS, "worker_command": WORKER_COMMAND}


def batch_run_waiting_for_worker(*, run) -> bool:
    """A queued run no worker has picked up for EVAL_NO_WORKER_SECONDS (none is listening, most likely)."""
    if run.status != RunStatus.QUEUED:
        return False
    since = run.queued_at or run.created_at
    return (timezone.now() - since).total_seconds() > settings.EVAL_NO_WORKER_SECONDS


def batch_run_is_stalled(*, run, last_finished=None, has_pending: bool | None = None) -> bool:
    """A running run with pending items and no item finished, no heartbeat and no start for
    EVAL_STALL_SECONDS: what a worker killed mid-run looks like. A page that counted its items
    already passes what it read (``last_finished``, ``has_pending``)."""
    if run.status != RunStatus.RUNNING:
        return False
    if has_pending is None:
        has_pending = run.items.filter(status=ItemStatus.PENDING).exists()
    if not has_pending:
        return False
    if last_finished is None:
        last_finished = (
            run.items.exclude(finished_at=None).order_by("-finished_at").values_list("finished_at", flat=True).first()
        )
    since = max((t for t in (last_finished, run.heartbeat_at) if t), default=None) or run.started_at or run.created_at
    return (timezone.now() - since).total_seconds() > settings.EVAL_STALL_SECONDS
