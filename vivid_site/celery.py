import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vivid_site.settings")

app = Celery("vivid_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def pool_forks(worker) -> bool:
    """At worker_init the pool is still what was given (``--pool``, ``worker_pool``): an alias, a
    ``module:Class`` path or a class, which Celery resolves as it will right after."""
    from celery.concurrency import get_implementation
    from celery.concurrency.prefork import TaskPool as PreforkPool

    return issubclass(get_implementation(getattr(worker, "pool_cls", "prefork")), PreforkPool)


@worker_init.connect
def _import_before_fork(sender=None, **_):
    """Imported once in the worker's parent process, before the pool forks: each prefork child
    would otherwise import the openai client on its first chunk (~0.6 s before its first request),
    and the statistics libraries on its first round summary or report (about a second). A pool that
    does not fork (solo, threads: the tests' workers) runs its tasks in this process, which imports
    each on first use at the same cost, and not at all for tasks that never use it."""
    if sender is not None and not pool_forks(sender):
        return
    import llm.providers.openai_provider  # noqa: F401
    from core.warmup import libraries_import

    libraries_import()


@worker_init.connect
def _lower_priority(**_):
    """WORKER_NICENESS (settings): in the parent before the pool forks, so every child inherits it."""
    from django.conf import settings

    from core.priority import worker_priority_lower

    worker_priority_lower(niceness=settings.WORKER_NICENESS)
