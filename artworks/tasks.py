"""Celery tasks of the artworks app: they take ids and call a service."""

from celery import shared_task

from .services.pipeline import artwork_run_dispatch, artwork_run_step


# A pipeline run is a chain of short tasks (a few items each, see ARTWORK_TASK_BUDGET_SECONDS),
# so none can outlive the Celery time limit; this one only claims the run and starts the chain.
@shared_task(name="artworks.pipeline")
def artwork_pipeline_task(run_id: int) -> None:
    artwork_run_dispatch(run_id=run_id)


@shared_task(name="artworks.pipeline_step")
def artwork_pipeline_step_task(run_id: int, token: str) -> None:
    artwork_run_step(run_id=run_id, token=token)


# The names these tasks had inside the evaluation app: messages queued before an upgrade still run.
@shared_task(name="evaluation.artwork_pipeline")
def artwork_pipeline_task_before_rename(run_id: int) -> None:
    artwork_run_dispatch(run_id=run_id)


@shared_task(name="evaluation.artwork_pipeline_step")
def artwork_pipeline_step_task_before_rename(run_id: int, token: str) -> None:
    artwork_run_step(run_id=run_id, token=token)
