"""Celery tasks of the evaluation app: they take ids and call a service."""

from celery import shared_task

from .services import run_chunk, run_execute


@shared_task(name="evaluation.run_execute")
def run_execute_task(run_id: int) -> None:
    run_execute(run_id=run_id)


# acks_late with reject-on-worker-lost (settings) puts a chunk back on the queue
# when its worker dies; items already written are skipped by their status.
@shared_task(name="evaluation.run_chunk")
def run_chunk_task(run_id: int, item_ids: list[int]) -> None:
    run_chunk(run_id=run_id, item_ids=item_ids)
