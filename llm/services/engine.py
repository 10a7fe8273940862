"""The batch-run engine: one life cycle for every kind of run on it (llm.kinds).

A run is claimed by one worker token (QUEUED to RUNNING), shows it is alive by its heartbeat,
finishes once nothing is pending, and can be cancelled, failed or resumed; every transition is a
``filter(status=...).update(...)`` whose row count says whether it happened, so two workers, a
redelivered task or a double click never move a run twice. What an item does is the kind's.
"""

import time
import uuid
from collections.abc import Callable

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from ..kinds import work_kind_enqueue, work_kind_of
from ..models import ItemStatus, RunStatus
from ..selectors.runs import batch_run_is_stalled


class BatchRunError(Exception):
    """A run asked for what its status does not allow (cancel a finished run, resume a live one)."""


def batch_run_claim(*, run_model: type, run_id: int) -> str | None:
    """Take a queued run for a new worker token; None when it is not queued (a redelivery, a second worker)."""
    token = uuid.uuid4().hex
    now = timezone.now()
    claimed = run_model.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, worker_token=token, heartbeat_at=now
    )
    if not claimed:
        return None
    run_model.objects.filter(pk=run_id, started_at=None).update(started_at=now)
    return token


def batch_run_heartbeat(*, run_model: type, run_id: int, token: str) -> bool:
    """Say the run's worker is alive; False when the run is no longer running or no longer this
    token's (cancelled, or resumed by another worker after it looked stalled): the worker stops."""
    return bool(
        run_model.objects.filter(pk=run_id, status=RunStatus.RUNNING, worker_token=token).update(
            heartbeat_at=timezone.now()
        )
    )


def batch_run_finish(*, run_model: type, run_id: int) -> bool:
    """Finish a running run once nothing is pending: its usage summed over its items, done unless
    its kind says why it failed. False while items are pending (or the run is not running)."""
    kind = work_kind_of(run_model)
    items = kind.item_model.objects.filter(run_id=run_id)
    if items.filter(status=ItemStatus.PENDING).exists():
        return False
    totals = items.aggregate(tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
    error = kind.finish_error(run_id)
    return bool(
        run_model.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED if error else RunStatus.DONE,
            error=error,
            finished_at=timezone.now(),
            tokens_in=totals["tokens_in"] or 0,
            tokens_out=totals["tokens_out"] or 0,
        )
    )


def batch_run_fail(*, run_model: type, run_id: int, error: str, token: str | None = None) -> bool:
    """Fail a running run (only the token's, when one is given): a worker that cannot go on."""
    running = run_model.objects.filter(pk=run_id, status=RunStatus.RUNNING)
    if token is not None:
        running = running.filter(worker_token=token)
    return bool(running.update(status=RunStatus.FAILED, error=error[:4000], finished_at=timezone.now()))


def batch_run_cancel(*, run, user=None):
    """Stop a queued or running run; items already written stay."""
    changed = (
        type(run)
        .objects.filter(pk=run.pk, status__in=[RunStatus.QUEUED, RunStatus.RUNNING])
        .update(status=RunStatus.CANCELLED, finished_at=timezone.now())
    )
    run.refresh_from_db()
    if not changed:
        raise BatchRunError(
            _("the run is %(status)s and cannot be cancelled") % {"status": run.get_status_display().lower()}
        )
    return run


def batch_run_resume(*, run, user=None, retry_failed: bool = False, reset: dict | None = None, before_enqueue=None):
    """Queue a run again: only its pending items (and with ``retry_failed`` its failed ones) are
    done; every request answered before comes from the response cache.

    A cancelled or failed run resumes at once; a running run only when it has stalled (nothing
    finished and no heartbeat for EVAL_STALL_SECONDS: what a killed worker leaves), so a live run
    is never worked twice; a done run only with ``retry_failed`` and failed items. ``reset`` are
    the kind's own fields to clear; ``before_enqueue(run)`` runs in the same transaction.
    """
    model = type(run)
    kind = work_kind_of(model)
    queued = {"status": RunStatus.QUEUED, "queued_at": timezone.now(), "worker_token": "", **(reset or {})}
    with transaction.atomic():
        changed = model.objects.filter(pk=run.pk, status__in=[RunStatus.CANCELLED, RunStatus.FAILED]).update(
            finished_at=None, error="", **queued
        )
        if not changed and batch_run_is_stalled(run=run):
            changed = model.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(**queued)
        if not changed and retry_failed and run.items.filter(status=ItemStatus.FAILED).exists():
            changed = model.objects.filter(pk=run.pk, status=RunStatus.DONE).update(
                finished_at=None, error="", **queued
            )
        run.refresh_from_db()
        if not changed:
            raise BatchRunError(
                _("the run is %(status)s and cannot be resumed") % {"status": run.get_status_display().lower()}
            )
        if retry_failed:
            run.items.filter(status=ItemStatus.FAILED).update(status=ItemStatus.PENDING, error="")
        if before_enqueue is not None:
            before_enqueue(run)
        transaction.on_commit(lambda: work_kind_enqueue(kind, run.pk))
    return run


def batch_run_work(
    *,
    run_model: type,
    run_id: int,
    token: str,
    next_item: Callable[[int], object | None],
    process: Callable[[object], None],
    budget: float | None,
    time_limit_error: Callable[[object], str],
    progress: Callable[[object], None] | None = None,
) -> bool:
    """Work a claimed run's items one after the other until none is left or ``budget`` seconds are
    spent; True when more remain (the caller queues the next short task).

    Before each item the heartbeat is written, which also checks the run is still running and still
    this token's: a cancel, or a resume that handed the run to another worker, stops this one.
    """
    started = time.monotonic()
    while True:
        if not batch_run_heartbeat(run_model=run_model, run_id=run_id, token=token):
            return False
        item = next_item(run_id)
        if item is None:
            batch_run_finish(run_model=run_model, run_id=run_id)
            return False
        try:
            process(item)
        except SoftTimeLimitExceeded:
            # The item stays pending; the run fails at once (rather than waiting to look stalled),
            # so Resume is offered and tries the item again.
            batch_run_fail(run_model=run_model, run_id=run_id, error=time_limit_error(item), token=token)
            raise
        if progress is not None:
            progress(item)
        if budget is not None and time.monotonic() - started >= budget:
            return True


def package_versions() -> dict:
    """The versions of what a run's replies depend on, kept with the run to reproduce it."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in ("django", "celery", "openai", "transformers", "torch"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            continue
    return versions
