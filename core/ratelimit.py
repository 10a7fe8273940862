"""Requests per client address, counted in the shared cache: anonymous pages a script could flood.

A rate is a setting such as ``20/m`` (``off``: no limit). Each address gets a counter per window
of that length (a fixed window: at most twice the rate across a window's edge), kept in the cache
every process shares (CACHE_URL): Redis counts atomically across machines; a file cache, one
machine's processes, may let a few requests more through when two count at the same instant.
The address is the one sign-in throttling reads (django-axes, AXES_IPWARE_*), so one proxy
setting serves both.
"""

import re
import time
from dataclasses import dataclass
from functools import lru_cache

from axes.helpers import get_client_ip_address
from django.core.cache import cache

PREFIX = "vivid:rate:"
RATE = re.compile(r"^([1-9][0-9]*)/([smh])$")
SECONDS = {"s": 1, "m": 60, "h": 3600}


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int


@lru_cache(maxsize=32)
def rate_parse(text: str) -> Rate | None:
    """``20/m`` as Rate(20, 60); None for ``off``. Settings refuse anything else at start-up."""
    text = (text or "").strip().lower()
    if text == "off":
        return None
    match = RATE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a rate (use e.g. 20/m, 5/s, 100/h, or off)")
    return Rate(int(match.group(1)), SECONDS[match.group(2)])


def client_address(request) -> str:
    return get_client_ip_address(request) or request.META.get("REMOTE_ADDR", "") or "unknown"


def rate_limit_hit(*, scope: str, request, rate: str) -> int | None:
    """Count one request of this client in ``scope``; the seconds until it may try again when it is
    over the rate (answer 429 with them as Retry-After), None when it may go on."""
    limit = rate_parse(rate)
    if limit is None:
        return None
    now = time.time()
    window = int(now // limit.seconds)
    key = f"{PREFIX}{scope}:{client_address(request)}:{window}"
    # The counter outlives its window a little, so an increment at the window's edge finds it.
    cache.add(key, 0, timeout=limit.seconds + 5)
    try:
        count = cache.incr(key)
    except ValueError:
        # Evicted between the two calls: this request starts the count again.
        cache.set(key, 1, timeout=limit.seconds + 5)
        count = 1
    if count <= limit.count:
        return None
    return max(1, int((window + 1) * limit.seconds - now + 0.999))
