"""Change stamps: a cached result is keyed by the stamp of what it was computed from.

A stamp is a random token kept in the shared cache (Redis where it runs, see CACHE_URL) under a
scope such as ``round:12``. A writer bumps the scope's stamp once its transaction commits; a
reader puts the current stamp into its cache key, so a result computed before the change is
never read again, in any process, and no reader counts rows to find out whether something
changed. A lost stamp (an evicted key, a restarted cache) is simply a new stamp: everything
keyed under the old one is computed afresh.
"""

import uuid

from django.core.cache import cache
from django.db import transaction

PREFIX = "vivid:stamp:"


def stamp_get(*, scope: str) -> str:
    """The current stamp of ``scope`` (a new one when the cache holds none)."""
    key = PREFIX + scope
    stamp = cache.get(key)
    if stamp is None:
        cache.add(key, uuid.uuid4().hex, timeout=None)
        stamp = cache.get(key) or uuid.uuid4().hex
    return stamp


def stamp_bump(*, scope: str) -> None:
    """Give ``scope`` a new stamp now and again once the current transaction commits.

    The bump after the commit is the one that counts: a reader between the first bump and the
    commit may store the old data under the new stamp, and the second bump retires it. The first
    makes the change visible at once inside the writer's own transaction (a test's, say).
    """
    key = PREFIX + scope
    cache.set(key, uuid.uuid4().hex, timeout=None)
    transaction.on_commit(lambda: cache.set(key, uuid.uuid4().hex, timeout=None), robust=True)


def cached(*, key: str, compute, timeout: int = 24 * 3600):
    """``compute()``'s value under ``key`` in the shared cache, computed on a miss."""
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, timeout=timeout)
    return value
