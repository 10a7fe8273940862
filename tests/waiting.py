"""Waiting in a test for what another thread or process does, and saying what it did when it does not."""

import time

import pytest


def wait_until(condition, *, timeout: float, explain=lambda: "", stopped=lambda: False, interval: float = 0.1) -> None:
    """Until ``condition()`` holds. Fails after ``timeout`` seconds, or at once when ``stopped()`` says
    that what would make it hold has ended (a worker thread that died), with ``explain()``."""
    deadline = time.monotonic() + timeout
    while not condition():
        ended, late = stopped(), time.monotonic() > deadline
        if ended or late:
            # What was awaited may have happened between the two looks, as the worker's last act before it
            # ended (a run of `make test` on 7 December: "5 of 5 replies stored, the engine alive: False").
            if condition():
                return
            pytest.fail(f"{'stopped' if ended else f'timed out after {timeout} s'}\n{explain()}")
        time.sleep(interval)
