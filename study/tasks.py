"""Celery tasks of the study app: they take ids and call a service.

Time limits, acks_late and reject-on-worker-lost come from the CELERY_* settings: a worker
killed mid-preparation hands the task to another, and the service starts the work over.
"""

from celery import shared_task

from .services.prep import study_prepare_queued


@shared_task(name="study.prepare")
def study_prepare_task(study_id: int, term_model_id: int | None = None) -> None:
    study_prepare_queued(study_id=study_id, term_model_id=term_model_id)
