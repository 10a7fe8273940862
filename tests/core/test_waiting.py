"""tests.waiting.wait_until: a wait that fails only when what it waits for has not happened."""

import pytest

from tests.waiting import wait_until


def test_it_passes_when_the_worker_ends_right_after_doing_what_was_awaited():
    # The condition is false at the first look; the worker then does its last act and ends before
    # the wait asks whether it has stopped.
    done = {"stored": False}

    def condition():
        return done["stored"]

    def stopped():
        done["stored"] = True
        return True

    wait_until(condition, timeout=5, stopped=stopped, interval=0.01)


def test_it_fails_at_once_when_the_worker_ends_without_doing_it():
    with pytest.raises(pytest.fail.Exception, match="stopped\nnothing stored"):
        wait_until(lambda: False, timeout=60, stopped=lambda: True, explain=lambda: "nothing stored")


def test_it_fails_after_the_timeout_naming_it():
    with pytest.raises(pytest.fail.Exception, match="timed out after 0.05 s"):
        wait_until(lambda: False, timeout=0.05, interval=0.01)
