"""The Redis cache backend reuses one client per pool and behaves as Django's (services marker: a real Redis)."""

import pytest

from core.cache import RedisCache
from tests.conftest import redis_test_url, skip_or_fail

REDIS_URL = redis_test_url("cache")

pytestmark = pytest.mark.services


@pytest.fixture
def redis_cache():
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).flushdb()
    except redis.exceptions.ConnectionError:
        skip_or_fail(f"Redis is not reachable at {REDIS_URL}")
    backend = RedisCache(REDIS_URL, {"KEY_PREFIX": "test-cache"})
    yield backend
    backend.clear()


def test_it_stores_reads_adds_and_deletes_as_djangos_backend(redis_cache):
    redis_cache.set("stamp", "a1", timeout=None)
    assert redis_cache.get("stamp") == "a1"
    assert redis_cache.add("flag", 1, timeout=30) is True
    assert redis_cache.add("flag", 2, timeout=30) is False
    assert redis_cache.get_many(["stamp", "flag", "missing"]) == {"stamp": "a1", "flag": 1}
    redis_cache.set_many({"x": {"value": [1, 2]}, "y": 3})
    assert redis_cache.get("x") == {"value": [1, 2]}
    redis_cache.delete("stamp")
    assert redis_cache.get("stamp") is None


def test_it_makes_one_client_and_reuses_it(redis_cache):
    redis_cache.set("a", 1)
    client = redis_cache._cache.get_client(write=True)
    redis_cache.get("a")
    redis_cache.set("b", 2)
    assert redis_cache._cache.get_client(write=True) is client
