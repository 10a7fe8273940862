"""Celery tasks of the llm app: they take ids and call a service."""

from celery import shared_task

from .services.capabilities import model_probe_queued


@shared_task(name="llm.model_probe")
def model_probe_task(model_id: int) -> None:
    model_probe_queued(model_id=model_id)


# The name the task had in the evaluation app: a probe queued before an upgrade still runs.
@shared_task(name="evaluation.model_probe")
def model_probe_task_before_llm(model_id: int) -> None:
    model_probe_queued(model_id=model_id)
