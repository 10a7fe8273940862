"""Celery tasks of the study app: they take ids and call a service.

Time limits, acks_late and reject-on-worker-lost come from the CELERY_* settings: a worker
killed mid-preparation hands the task to another, and the service starts the work over.
"""

from celery import shared_task
from django.utils.translation import gettext as _

from .models import PrepStatus, Study
from .services.prep import study_highlights_compute, study_prepare


@shared_task(name="study.prepare")
def study_prepare_task(study_id: int, term_model_id: int | None = None) -> None:
    from evaluation.models import ModelConfig

    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return  # deleted while queued
    term_model = None
    if term_model_id is not None:
        term_model = ModelConfig.objects.filter(pk=term_model_id).first()
        if term_model is None:
            # The terms must not end "ready" without the search the researcher asked for.
            study_highlights_compute(study=study)
            Study.objects.filter(pk=study_id).update(
                terms_status=PrepStatus.FAILED, terms_error=_("the model chosen to find terms no longer exists")
            )
            return
    study_prepare(study=study, term_model=term_model)
