"""A real Celery worker over Redis prepares an imported study: the import's on-commit task, end to end."""

import uuid

import pytest

from study.models import DescriptionPair, PrepStatus, Study
from study.services.imports import study_import
from tests.conftest import celery_overrides, redis_test_url, skip_or_fail, start_worker, stop_worker, worker_log
from tests.waiting import wait_until

from .factories import package_dict, write_package

REDIS_URL = redis_test_url("broker")

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@pytest.fixture
def redis_worker(settings, tmp_path):
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.exceptions.ConnectionError:
        skip_or_fail(f"Redis is not reachable at {REDIS_URL}")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.MEDIA_ROOT = tmp_path / "media"
    queue = f"test-study-{uuid.uuid4().hex[:8]}"
    with celery_overrides(broker_url=REDIS_URL, task_default_queue=queue, task_always_eager=False):
        process = start_worker(broker_url=REDIS_URL, queue=queue, env={"VIVID_VAR_DIR": str(tmp_path / "var")})
        yield process
        stop_worker(process)


def test_it_prepares_an_imported_study_in_a_real_worker(redis_worker, researcher, tmp_path):
    folder = write_package(tmp_path / "package", package_dict(n_american=2, n_chinese=2, n_qc=2))
    study = study_import(source=folder, user=researcher)

    def prepared() -> bool:
        study.refresh_from_db()
        return PrepStatus.RUNNING not in (study.highlight_status, study.terms_status)

    wait_until(
        prepared,
        timeout=180,
        stopped=lambda: redis_worker.poll() is not None,
        explain=lambda: f"the worker did not prepare the study:\n{worker_log(redis_worker)}",
    )
    assert study.highlight_status == PrepStatus.READY, study.highlight_error
    assert study.terms_status == PrepStatus.READY, study.terms_error
    pairs = DescriptionPair.objects.filter(artwork__study=study)
    assert pairs.count() == 8 and all(pair.computed_at for pair in pairs)
    # The identical second sentences of each pair match with cosine 1.
    assert all([1, 1] in [match[:2] for match in pair.matches] for pair in pairs)
    assert Study.objects.get(pk=study.pk).highlight_model
