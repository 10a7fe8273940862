"""Import jobs: an upload previewed (a dry run) for a person to confirm, then imported by a worker.

The corpus import page goes through a job; the API and the CLI import at once.
"""

from django.db import transaction
from django.utils import timezone

from core.services.idempotency import idempotent_create
from core.tables import ImportValidationError

from ...models import Dataset, ImportJob, ImportJobStatus
from .expressions import expression_import

IMPORT_JOB_IDEMPOTENCY_SCOPE = "annotation.import_job"


class ImportJobStateError(Exception):
    """The job has moved on (confirmed, cancelled, failed) and cannot do what was asked."""


def import_job_create(
    *,
    dataset_name: str,
    filename: str,
    content: bytes,
    column_map: dict[str, str] | None = None,
    user=None,
    idempotency_key: str | None = None,
) -> ImportJob:
    """Store an upload and its dry-run report, for a person to review before confirming.

    A second request with the same ``idempotency_key`` (a double submit of the upload form)
    returns the job the first one stored, with ``job.idempotent_repeat`` set.
    """
    job = idempotent_create(
        scope=IMPORT_JOB_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=ImportJob,
        create=lambda: _import_job_create(
            dataset_name=dataset_name, filename=filename, content=content, column_map=column_map, user=user
        ),
    )
    return job


def _import_job_create(*, dataset_name, filename, content, column_map, user) -> ImportJob:
    try:
        report = expression_import(
            dataset_name=dataset_name,
            filename=filename,
            content=content,
            column_map=column_map,
            user=user,
            dry_run=True,
        )
    except ImportValidationError as exc:
        report = exc.report
    return ImportJob.objects.create(
        dataset_name=dataset_name.strip(),
        filename=filename,
        content=content,
        column_map=column_map or {},
        status=ImportJobStatus.PREVIEWED if report.ok else ImportJobStatus.FAILED,
        report=report.to_dict(),
        created_by=user,
        finished_at=None if report.ok else timezone.now(),
    )


def import_job_retarget(*, job: ImportJob, dataset_name: str, user=None) -> ImportJob:
    """Point a previewed import at another dataset (a near-match the preview offered) and preview it again."""
    dataset_name = (dataset_name or "").strip()
    try:
        report = expression_import(
            dataset_name=dataset_name,
            filename=job.filename,
            content=bytes(job.content),
            column_map=job.column_map,
            user=user,
            dry_run=True,
        )
    except ImportValidationError as exc:
        report = exc.report
    # Only while still previewed: a confirm in another tab must not import into a name nobody saw.
    changed = ImportJob.objects.filter(pk=job.pk, status=ImportJobStatus.PREVIEWED).update(
        dataset_name=dataset_name,
        report=report.to_dict(),
        status=ImportJobStatus.PREVIEWED if report.ok else ImportJobStatus.FAILED,
        finished_at=None if report.ok else timezone.now(),
    )
    job.refresh_from_db()
    if not changed:
        raise ImportJobStateError(
            f"This import is {job.get_status_display().lower()} and can no longer change its dataset."
        )
    return job


def import_job_confirm(*, job: ImportJob, user=None) -> ImportJob:
    """Queue a previewed import. Confirming twice (double submit, two tabs) queues it once."""
    from ...tasks import import_job_run_task

    claimed = ImportJob.objects.filter(pk=job.pk, status=ImportJobStatus.PREVIEWED).update(
        status=ImportJobStatus.QUEUED
    )
    job.refresh_from_db()
    if claimed:
        transaction.on_commit(lambda: import_job_run_task.delay(job.pk))
    elif job.status in (ImportJobStatus.FAILED, ImportJobStatus.CANCELLED):
        raise ImportJobStateError(
            f"This import is {job.get_status_display().lower()} and cannot be confirmed; upload the file again."
        )
    return job


def import_job_cancel(*, job: ImportJob) -> ImportJob:
    ImportJob.objects.filter(pk=job.pk, status=ImportJobStatus.PREVIEWED).update(
        status=ImportJobStatus.CANCELLED, finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def import_job_run(*, job_id: int) -> ImportJob:
    """Run a queued import. Only one worker gets to claim it."""
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportJobStatus.QUEUED).update(status=ImportJobStatus.RUNNING)
    job = ImportJob.objects.get(pk=job_id)
    if not claimed:
        return job
    try:
        report = expression_import(
            dataset_name=job.dataset_name,
            filename=job.filename,
            content=bytes(job.content),
            column_map=job.column_map,
            user=job.created_by,
        )
        job.status = ImportJobStatus.DONE
    except ImportValidationError as exc:
        report = exc.report
        job.status = ImportJobStatus.FAILED
    job.report = report.to_dict()
    job.dataset = Dataset.objects.filter(name=job.dataset_name).first()
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "report", "dataset", "finished_at"])
    return job
