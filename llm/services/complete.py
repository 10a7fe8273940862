"""One chat completion outside a run, for other apps (the study's term finder).

It goes through the same machinery as a run's requests: the persistent response cache, the
model's concurrency lease and requests-per-minute pacing shared with every worker, and
retries with exponential backoff and full jitter that honour Retry-After.
"""

import contextlib
import contextvars
import hashlib
import math

from django.db import IntegrityError

from ..guard import model_refusal
from ..models import ModelConfig, ResponseCache
from ..providers import ClientError, Completion, provider_for
from .cache import cache_key, response_cache_store
from .throttle import SlotLease, request_with_retries

# The tokens the requests sent inside ``usage_metered`` used, as their providers reported them
# (a reply from the cache used none): how the artwork pipeline learns what each item cost.
_meter: contextvars.ContextVar[dict | None] = contextvars.ContextVar("usage_meter", default=None)


@contextlib.contextmanager
def usage_metered():
    """``with usage_metered() as used:`` sums ``used["tokens_in"]``, ``used["tokens_out"]`` and
    ``used["requests"]`` over the requests made inside it (cached replies count none)."""
    used = {"tokens_in": 0, "tokens_out": 0, "requests": 0}
    token = _meter.set(used)
    try:
        yield used
    finally:
        _meter.reset(token)


def _metered(tokens_in: int, tokens_out: int) -> None:
    used = _meter.get()
    if used is not None:
        used["tokens_in"] += int(tokens_in or 0)
        used["tokens_out"] += int(tokens_out or 0)
        used["requests"] += 1


def model_complete(
    *,
    model: ModelConfig,
    messages: list[dict],
    temperature: float = 0.0,
    max_tokens: int = 256,
    seed: int | None = None,
) -> str:
    """The model's reply text to ``messages``; a cached reply when the same request was answered before.

    Raises ClientError for a request the server refuses, and RetryableError once
    EVAL_MAX_ATTEMPTS attempts have failed.
    """
    return model_completion(model=model, messages=messages, temperature=temperature, max_tokens=max_tokens, seed=seed)[
        0
    ].text


def model_completion(
    *,
    model: ModelConfig,
    messages: list[dict],
    temperature: float = 0.0,
    max_tokens: int = 256,
    seed: int | None = None,
    top_logprobs: int | None = None,
) -> tuple[Completion, bool]:
    """Like model_complete, with the whole Completion (token log-probabilities when
    ``top_logprobs`` is not None) and whether it came from the cache."""
    _refuse_forbidden(model)
    params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "top_logprobs": top_logprobs}
    key = cache_key(model, messages, params)
    cached = ResponseCache.objects.filter(key=key).values_list("response", flat=True).first()
    if cached is not None:
        return Completion(**cached), True
    completion = _request(model, messages, params)
    _metered(completion.tokens_in, completion.tokens_out)
    response_cache_store(key, completion)
    return completion, False


def model_choice_logprobs(*, model: ModelConfig, messages: list[dict], choices: list[str]) -> dict[str, float]:
    """The log-probability of each choice as the first token of the model's reply (see
    Provider.choice_logprobs), through the same cache, lease, pacing and retries."""
    _refuse_forbidden(model)
    params = {"temperature": 0.0, "max_tokens": 1, "seed": None, "top_logprobs": 20}
    key = hashlib.sha256(
        ("choices\x00" + cache_key(model, messages, params) + "\x00" + "\x00".join(choices)).encode()
    ).hexdigest()
    cached = ResponseCache.objects.filter(key=key).values_list("response", flat=True).first()
    if cached is not None:
        return {c: (-math.inf if v is None else v) for c, v in cached["choices"].items()}
    found, tokens_in, tokens_out = _request(model, messages, params, choices=choices)
    _metered(tokens_in, tokens_out)
    # JSON (and PostgreSQL's jsonb) has no -Infinity: an unseen choice is stored as null.
    stored = {c: (None if v == -math.inf else v) for c, v in found.items()}
    with contextlib.suppress(IntegrityError):  # another worker asked the same first
        ResponseCache.objects.create(key=key, response={"choices": stored})
    return found


def _refuse_forbidden(model: ModelConfig) -> None:
    """A model stored before its key variable or address was checked answers nothing, not even from the cache."""
    refusal = model_refusal(model)
    if refusal:
        raise ClientError(refusal)


def _request(model: ModelConfig, messages: list[dict], params: dict, *, choices: list[str] | None = None):
    provider = provider_for(model)
    lease = SlotLease(model)
    try:
        if choices is not None:
            found, _attempt = request_with_retries(
                model=model, lease=lease, send=lambda: provider.choice_logprobs_usage(messages, choices)
            )
        else:
            found, _attempt = request_with_retries(
                model=model, lease=lease, send=lambda: provider.complete(messages, **params)
            )
        return found
    finally:
        lease.release()
