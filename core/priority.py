"""The Celery worker's CPU priority beside the web server on the same cores.

A background job (a round's summary refresh, a judge run's bookkeeping) that takes a core for a
second while annotators save answers shows in their save latency: on the 2-core machine the review
benchmark's open loop had its p95 at 50-70 ms in every 5 s but the one in which the worker refreshed
the round (350 ms). A worker with a higher niceness still gets every idle cycle, and yields the
cores to the web server when both want them.
"""

import contextlib
import os
from pathlib import Path

AUTOGROUP = Path("/proc/self/autogroup")


def worker_priority_lower(*, niceness: int) -> int:
    """Raise this process's niceness by ``niceness`` (children forked later inherit it); returns the new value.

    Linux schedules each session as one group (autogroup) before the processes inside it, so a
    worker started in a session of its own (``setsid``, a supervisor) would still compete with the
    web server's session at equal weight: that group's niceness is raised too, but only when this
    process leads the session, so a worker started from a shell never lowers the shell and its
    other children.
    """
    if niceness <= 0:
        return os.nice(0)
    value = os.nice(niceness)
    if os.getsid(0) == os.getpid() and AUTOGROUP.exists():
        # A kernel that refuses leaves the process's own niceness, which still orders it within its session.
        with contextlib.suppress(OSError):
            AUTOGROUP.write_text(str(value))
    return value
