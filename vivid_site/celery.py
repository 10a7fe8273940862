import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vivid_site.settings")

app = Celery("vivid_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _import_before_fork(**_):
    """Imported once in the worker's parent process, before the pool forks: each prefork child
    would otherwise import the openai client on its first chunk (~0.6 s before its first request),
    and the statistics libraries on its first round summary or report (about a second)."""
    import llm.providers.openai_provider  # noqa: F401
    from core.warmup import libraries_import

    libraries_import()


@worker_init.connect
def _lower_priority(**_):
    """WORKER_NICENESS (settings): in the parent before the pool forks, so every child inherits it."""
    from django.conf import settings

    from core.priority import worker_priority_lower

    worker_priority_lower(niceness=settings.WORKER_NICENESS)
