"""The persistent response cache: a request already answered is never sent again, by any run or worker."""

import contextlib
import hashlib
import json

from django.db import IntegrityError

from ..models import ModelConfig, ResponseCache
from ..providers import Completion


def cache_key(model: ModelConfig, messages: list[dict], params: dict) -> str:
    """Identifies a request: the model config that answers it, the messages and the sampling parameters."""
    payload = {
        "provider": model.provider,
        "model_id": model.model_id,
        "base_url": model.base_url,
        "messages": messages,
        "temperature": params.get("temperature"),
        "max_tokens": params.get("max_tokens"),
        "seed": params.get("seed"),
        "top_logprobs": params.get("top_logprobs"),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def response_cache_lookup(keys: list[str]) -> dict[str, dict]:
    """The cached responses among ``keys``, in one query."""
    return dict(ResponseCache.objects.filter(key__in=keys).values_list("key", "response"))


def response_cache_store(key: str, completion: Completion) -> None:
    # Another worker may have cached the same request first.
    with contextlib.suppress(IntegrityError):
        ResponseCache.objects.create(key=key, response=_completion_json(completion))


def response_cache_store_many(entries: list[tuple[str, Completion]]) -> None:
    """Store several responses in one statement; a key another worker cached first is left as it is."""
    ResponseCache.objects.bulk_create(
        [ResponseCache(key=key, response=_completion_json(completion)) for key, completion in entries],
        ignore_conflicts=True,
    )


def _completion_json(completion: Completion) -> dict:
    return {
        "text": completion.text,
        "tokens_in": completion.tokens_in,
        "tokens_out": completion.tokens_out,
        "fingerprint": completion.fingerprint,
        "logprobs": completion.logprobs,
        "finish_reason": completion.finish_reason,
        "refusal": completion.refusal,
    }
