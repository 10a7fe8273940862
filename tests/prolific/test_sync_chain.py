"""One Prolific sync chain per study across every process: the hold is a database row, not a cache key.

A start in the web process (publish) and one in a worker, or in two web processes, each with their
own cache (CACHE_URL=locmem://, or a file cache on another machine), still start one chain.
"""

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from prolific.models import ProlificStudy, ProlificStudyStatus, ProlificSyncChain
from prolific.services import prolific_study_create
from prolific.services.sync import sync_chain_claim
from prolific.tasks import prolific_sync_start, prolific_sync_task
from tests.conftest import ROOT, worker_database_url
from tests.prolific.conftest import SITE, light_study


def start_in_processes(study_id: int, n: int, go) -> list[str]:
    """``n`` processes on the test database, each with its own in-memory cache, start the chain at once."""
    env = {**os.environ, "DJANGO_ENV": "test", "DATABASE_URL": worker_database_url(), "CACHE_URL": "locmem://"}
    env.pop("VIVID_TEST_SQLITE", None)
    command = [sys.executable, "-m", "tests.prolific.sync_start_process", str(study_id), str(go)]
    processes = [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    try:
        for process in processes:
            line = process.stdout.readline().strip()
            assert line == "ready", process.stderr.read()
        go.touch()
        outputs = [process.communicate(timeout=120) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    assert all(process.returncode == 0 for process in processes), [err for _out, err in outputs]
    return sorted(out.strip() for out, _err in outputs)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_starts_one_chain_when_two_processes_start_it_at_once(tmp_path, settings):
    settings.PROLIFIC_SITE_URL = SITE
    study = light_study("two-processes")
    assert start_in_processes(study.pk, 2, tmp_path / "go") == ["refused", "started"]
    assert ProlificSyncChain.objects.filter(study=study).count() == 1
    # A third, later, process finds the hold too.
    assert start_in_processes(study.pk, 1, tmp_path / "go-again") == ["refused"]


@pytest.mark.django_db
def test_it_takes_over_an_expired_hold_and_stops_the_chain_that_lost_it(
    fake_prolific, study_for_prolific, monkeypatch, settings
):
    (row,) = prolific_study_create(study=study_for_prolific, group="american")
    fake_prolific.studies[row.prolific_id]["status"] = "ACTIVE"
    ProlificStudy.objects.filter(pk=row.pk).update(status=ProlificStudyStatus.ACTIVE)
    sent = []
    monkeypatch.setattr(prolific_sync_task, "apply_async", lambda args, countdown: sent.append(args))
    assert prolific_sync_start(study_for_prolific.pk) is True
    (old,) = sent
    # Its worker was down past the hold's expiry: a new start takes the chain over.
    ProlificSyncChain.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert prolific_sync_start(study_for_prolific.pk) is True
    new = sent[1]
    assert new[1] != old[1]
    prolific_sync_task(*old)  # the old chain's late task: it no longer holds the chain and stops
    assert len(sent) == 2
    prolific_sync_task(*new)  # the new one goes on
    assert sent[2] == new


@pytest.mark.django_db
def test_it_refuses_a_second_claim_while_the_hold_lasts(study_for_prolific):
    first = sync_chain_claim(study_id=study_for_prolific.pk, seconds=60)
    assert first and sync_chain_claim(study_id=study_for_prolific.pk, seconds=60) is None
