"""The Redis cache backend, with one client per connection pool.

Django's ``RedisCacheClient`` builds a new ``redis.Redis`` for every operation, and with it the
table of the protocol's response callbacks: about as much Python as the operation itself. The
review page does a few cache operations per answer (the round's change stamp, the queued refresh,
the recalibration state), so the client is made once per pool and reused; a ``redis.Redis`` is
safe to share, and its pool starts afresh in a forked process.
"""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class ReusedRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            if index not in self._pools:
                self._pools[index] = self._pool_class.from_url(self._servers[index], **self._pool_options)
            client = self._clients[index] = self._client(connection_pool=self._pools[index])
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedRedisCacheClient
