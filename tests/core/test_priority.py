"""The Celery worker's CPU priority (core/priority.py, WORKER_NICENESS)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Run in a process of its own: niceness only ever goes up, and the test runner must keep its own.
PROBE = """
import os, sys
from core.priority import worker_priority_lower
value = worker_priority_lower(niceness=int(sys.argv[1]))
autogroup = open("/proc/self/autogroup").read().split() if os.path.exists("/proc/self/autogroup") else []
print(value, os.nice(0), autogroup[-1] if autogroup else "none")
"""


def _probe(niceness: int, *, own_session: bool) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(niceness)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        start_new_session=own_session,
    )
    return result.stdout.split()


def test_it_raises_the_process_niceness_by_the_setting():
    start = os.nice(0)
    value, now, *_ = _probe(7, own_session=False)
    assert int(value) == int(now) == min(start + 7, 19)


def test_it_leaves_the_priority_alone_at_zero():
    value, now, *_ = _probe(0, own_session=True)
    assert int(value) == int(now) == os.nice(0)


def _autogroup_niceness() -> str | None:
    """This session's group niceness ("/autogroup-123 nice 7"), or None where the kernel schedules no groups.

    A kernel booted with ``noautogroup`` (CI's) still has the file, empty.
    """
    try:
        fields = Path("/proc/self/autogroup").read_text().split()
    except OSError:
        return None
    return fields[-1] if fields else None


@pytest.mark.skipif(_autogroup_niceness() is None, reason="the kernel schedules no autogroups")
def test_it_lowers_its_own_sessions_group_but_never_a_shared_one():
    # The group of a session the worker leads takes its niceness...
    *_, own = _probe(7, own_session=True)
    assert own == str(min(os.nice(0) + 7, 19))
    # ...while a worker started inside another session (a shell's) leaves that session's group as it was.
    before = _autogroup_niceness()
    *_, shared = _probe(7, own_session=False)
    assert shared == before
