"""Change stamps: a cached result is keyed by the stamp of what it was computed from.

A stamp is a random token kept in the shared cache (Redis where it runs, see CACHE_URL) under a
scope such as ``round:12``. A writer bumps the scope's stamp once its transaction commits; a
reader puts the current stamp into its cache key, so a result computed before the change is
never read again, in any process, and no reader counts rows to find out whether something
changed. A lost stamp (an evicted key, a restarted cache) is simply a new stamp: everything
keyed under the old one is computed afresh.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

PREFIX = "vivid:stamp:"


def stamp_get(*, scope: str) -> str:
    """The current stamp of ``scope`` (a new one when the cache holds none)."""
    key = PREFIX + scope
    stamp = cache.get(key)
    if stamp is None:
        cache.add(key, uuid.uuid4().hex, timeout=None)
        stamp = cache.get(key) or uuid.uuid4().hex
    return stamp


def stamp_bump(*, scope: str, then=None) -> None:
    """Give ``scope`` a new stamp now and again once the current transaction commits, then call
    ``then()`` (what else waits for the commit, in the same callback).

    The bump after the commit is the one that counts: a reader between the first bump and the
    commit may store the old data under the new stamp, and the second bump retires it. The first
    makes the change visible at once inside the writer's own transaction (a test's, say).
    """
    key = PREFIX + scope
    cache.set(key, uuid.uuid4().hex, timeout=None)

    def committed():
        cache.set(key, uuid.uuid4().hex, timeout=None)
        if then is not None:
            then()

    transaction.on_commit(committed, robust=True)


def forget(*, key: str) -> None:
    """Drop a cached value now and again once the current transaction commits (as ``stamp_bump``:
    a reader between the two may have stored the value of before the commit)."""
    cache.delete(key)
    transaction.on_commit(lambda: cache.delete(key), robust=True)


def cached(*, key: str, compute, timeout: int = 24 * 3600):
    """``compute()``'s value under ``key`` in the shared cache, computed on a miss."""
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, timeout=timeout)
    return value


@dataclass(frozen=True)
class Shown:
    """What a page shows of a computed value: the value, when it was computed, and whether the data
    changed since (the page says so, and a refresh is on its way)."""

    value: object
    computed_at: datetime
    refreshing: bool


def _computed(key: str, latest_key: str, compute, timeout: int) -> dict:
    entry = {"value": compute(), "computed_at": timezone.now()}
    cache.set_many({key: entry, latest_key: entry}, timeout=timeout)
    return entry


def cached_with_latest(*, key: str, latest_key: str, compute, timeout: int = 24 * 3600) -> object:
    """``cached``, also keeping the value as the latest one computed under ``latest_key`` (for ``shown``)."""
    entry = cache.get(key) or _computed(key, latest_key, compute, timeout)
    return entry["value"]


def shown(*, key: str, latest_key: str, compute, max_age: float, refresh=None, timeout: int = 24 * 3600) -> Shown:
    """The value under ``key`` when it is there; else the latest value computed under ``latest_key``
    when it is younger than ``max_age`` seconds (and ``refresh()`` is called to bring the current one);
    else ``compute()``'s, now.

    For pages that show figures over a whole round or study: the first visit after a change shows the
    figures of a moment ago, saying so, instead of making the visitor wait for a recomputation that
    a background task is doing anyway. Past ``max_age`` (no task ran: no worker) the page computes.
    """
    entry = cache.get(key)
    if entry is not None:
        return Shown(value=entry["value"], computed_at=entry["computed_at"], refreshing=False)
    latest = cache.get(latest_key)
    if latest is not None and (timezone.now() - latest["computed_at"]).total_seconds() <= max_age:
        if refresh is not None:
            refresh()
        return Shown(value=latest["value"], computed_at=latest["computed_at"], refreshing=True)
    entry = _computed(key, latest_key, compute, timeout)
    return Shown(value=entry["value"], computed_at=entry["computed_at"], refreshing=False)
