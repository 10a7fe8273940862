"""One chat completion outside a run, for other apps (the study's term finder).

It goes through the same machinery as a run's requests: the persistent response cache, the
model's concurrency lease and requests-per-minute pacing shared with every worker, and
retries with exponential backoff and full jitter that honour Retry-After.
"""

import time

from django.conf import settings

from ..models import ModelConfig, ResponseCache
from ..providers import Completion, RetryableError, provider_for
from .runs import SlotLease, _cache_store, backoff_delay, cache_key, model_throttle_wait


def model_complete(
    *, model: ModelConfig, messages: list[dict], temperature: float = 0.0, max_tokens: int = 256, seed: int | None = None
) -> str:
    """The model's reply text to ``messages``; a cached reply when the same request was answered before.

    Raises ClientError for a request the server refuses, and RetryableError once
    EVAL_MAX_ATTEMPTS attempts have failed.
    """
    params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
    key = cache_key(model, messages, params)
    cached = ResponseCache.objects.filter(key=key).values_list("response", flat=True).first()
    if cached is not None:
        return Completion(**cached).text
    completion = _request(model, messages, params)
    _cache_store(key, completion)
    return completion.text


def _request(model: ModelConfig, messages: list[dict], params: dict) -> Completion:
    provider = provider_for(model)
    lease = SlotLease(model)
    last_error: RetryableError | None = None
    try:
        for attempt in range(1, settings.EVAL_MAX_ATTEMPTS + 1):
            lease.ensure()
            model_throttle_wait(model)
            try:
                return provider.complete(messages, **params)
            except RetryableError as exc:
                last_error = exc
            if attempt == settings.EVAL_MAX_ATTEMPTS:
                break
            lease.release()  # a backoff must not hold capacity that a run could use
            time.sleep(backoff_delay(last_error, attempt))
    finally:
        lease.release()
    raise last_error
