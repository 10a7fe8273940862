from celery import shared_task

from .services import import_job_run, round_summary_refresh


@shared_task(name="annotation.import_job_run")
def import_job_run_task(job_id: int) -> str:
    return import_job_run(job_id=job_id).status


@shared_task(name="annotation.round_summary_refresh")
def round_summary_refresh_task(round_id: int) -> bool:
    return round_summary_refresh(round_id=round_id) is not None
