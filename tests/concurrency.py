"""Calls made at the same instant, each on its own database connection, as two requests are."""

import threading

from django.db import connection


def at_the_same_instant(*calls):
    """Run every call at once on its own thread; (their results, the exceptions they raised as repr)."""
    barrier = threading.Barrier(len(calls))
    results, errors = [], []

    def run(call):
        try:
            barrier.wait()
            results.append(call())
        except Exception as exc:  # noqa: BLE001 - the caller asserts there were none
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, errors
