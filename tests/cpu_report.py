"""Where a pass's CPU goes: ``pytest -p tests.cpu_report`` prints the CPU (this process, its threads and
the subprocesses it has waited for: Celery workers, Playwright's driver and Chromium's browser
process, manage.py commands) and the wall time of each module, heaviest first, and of the session
outside any test (collection, the test database's creation). PostgreSQL's own processes are not
counted, nor are Chromium's renderers: their parent, Chromium's zygote, outlives the browser by a
moment and is reaped by init.

``VIVID_CPU_REPORT=prefix`` also writes each test's CPU and wall seconds as tab-separated values to
``<prefix>.<pid>.tsv`` (the two passes of ``make test`` are two processes).
"""

import os
import resource
import time
from collections import defaultdict

import pytest

_by_module: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
_rows: list[tuple] = []
_started: list[float] = []


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_sessionstart(session):
    _started[:] = [_cpu(), time.monotonic()]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu(), time.monotonic()
    try:
        return (yield)
    finally:
        spent_cpu, spent_wall = _cpu() - cpu, time.monotonic() - wall
        module = item.nodeid.split("::")[0]
        totals = _by_module[module]
        totals[0] += spent_cpu
        totals[1] += spent_wall
        totals[2] += 1
        _rows.append((item.nodeid, f"{spent_cpu:.3f}", f"{spent_wall:.3f}"))


def pytest_terminal_summary(terminalreporter):
    if not _started:
        return
    cpu, wall = _cpu() - _started[0], time.monotonic() - _started[1]
    in_tests_cpu = sum(totals[0] for totals in _by_module.values())
    in_tests_wall = sum(totals[1] for totals in _by_module.values())
    write = terminalreporter.write_line
    terminalreporter.section("CPU by module (tests.cpu_report)")
    write(
        f"session: {cpu:.0f} s CPU in {wall:.0f} s; outside the tests {cpu - in_tests_cpu:.0f} s CPU, "
        f"{wall - in_tests_wall:.0f} s wall"
    )
    write(f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  module")
    for module, (spent_cpu, spent_wall, count) in sorted(_by_module.items(), key=lambda entry: -entry[1][0])[:60]:
        write(f"{spent_cpu:8.1f} {spent_wall:8.1f} {count:6d}  {module}")
    if prefix := os.environ.get("VIVID_CPU_REPORT"):
        with open(f"{prefix}.{os.getpid()}.tsv", "w") as report:
            report.writelines("\t".join(row) + "\n" for row in _rows)
