"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server, gateways) through the official client.

The client never retries (``max_retries=0``): retries, backoff, pacing and
concurrency belong to the engine, which must see every failure to count it and
honour Retry-After across workers.
"""

from __future__ import annotations

import email.utils
import hashlib
import math
import os
import threading
import time

import httpx2
import openai
from django.conf import settings

from ..guard import EndpointRefused, clean_error_text, guarded_http_client, model_refusal
from .base import ClientError, Completion, Provider, RetryableError

# One client (and so one connection pool) per endpoint and key per process: building
# one per request would open a new TCP connection each time. The key itself is not
# part of the cache key, only its digest.
_CLIENTS: dict[tuple, openai.OpenAI] = {}
_CLIENTS_LOCK = threading.Lock()
PLACEHOLDER_KEY = "not-needed"


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date (RFC 9110 10.2.3)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def _retry_after_of(response) -> float | None:
    """The server's Retry-After, capped at EVAL_RETRY_AFTER_CAP_S."""
    seconds = _raw_retry_after_of(response)
    return None if seconds is None else min(seconds, float(settings.EVAL_RETRY_AFTER_CAP_S))


def _raw_retry_after_of(response) -> float | None:
    if response is None:
        return None
    headers = response.headers
    # OpenAI also sends the millisecond form; it is more precise when present.
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def _server_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str) and inner:
            return inner
        if body.get("detail"):
            return str(body["detail"])
    if isinstance(body, str) and body.strip():
        return body.strip()
    return error.message


def _refusal_in(error: BaseException) -> EndpointRefused | None:
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, EndpointRefused):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _logprobs_of(choice: dict) -> list | None:
    content = _field(choice.get("logprobs"), "content")
    if not isinstance(content, list):
        return None
    return [
        {
            "token": entry.get("token"),
            "logprob": entry.get("logprob"),
            "top": [
                {"token": top.get("token"), "logprob": top.get("logprob")}
                for top in _list(entry.get("top_logprobs"))
                if isinstance(top, dict)
            ],
        }
        for entry in content
        if isinstance(entry, dict)
    ]


def _field(value, name: str):
    """``value[name]`` when the reply put an object there, else None: a server may send anything."""
    return value.get(name) if isinstance(value, dict) else None


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _count(value) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _reply_data(response: httpx2.Response):
    """The reply's JSON, read as the SDK reads it for a typed call: a body labelled JSON must be
    JSON (a ValueError otherwise); any other body is JSON if it parses, else its text."""
    try:
        return response.json()
    except ValueError:
        if response.headers.get("content-type", "").split(";")[0].strip().endswith("json"):
            raise
        return response.text


def choice_logprobs_of(completion: Completion, choices: list[str], *, model: str = "") -> dict[str, float]:
    """The first reply token's top log-probabilities of each choice (see OpenAIProvider.choice_logprobs)."""
    if not completion.logprobs:
        raise ClientError(
            f"The model {model} returned no log-probabilities, which P(Correct) needs: use an endpoint that "
            "supports logprobs and top_logprobs (OpenAI, vLLM, llama.cpp server) or a local transformers model."
        )
    first = completion.logprobs[0]
    candidates = [*(first.get("top") or []), {"token": first.get("token", ""), "logprob": first.get("logprob")}]
    found = dict.fromkeys(choices, -math.inf)
    for entry in candidates:
        token = (entry.get("token") or "").strip()
        logprob = entry.get("logprob")
        if token in found and logprob is not None:
            found[token] = max(found[token], float(logprob))
    return found


# Where OpenAI-compatible servers put a model's context window in its model card.
_CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "context_window", "n_ctx", "n_ctx_train")


def context_length_of(card: dict) -> int | None:
    for source in (card, card.get("meta") or {}, card.get("top_provider") or {}):
        if not isinstance(source, dict):
            continue
        for key in _CONTEXT_KEYS:
            value = source.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


class OpenAIProvider(Provider):
    def __init__(self, *, client: openai.OpenAI, model_id: str, base_url: str):
        self.client = client
        self.model_id = model_id
        self.base_url = base_url

    def _clean(self, text: str) -> str:
        """Error text fit to store on an item: trimmed, with the key and any credential header redacted
        (some servers and proxies echo the request, headers included, in their error bodies)."""
        key = self.client.api_key
        return clean_error_text(text, secrets=(key,) if key and key != PLACEHOLDER_KEY else ())

    @classmethod
    def for_config(cls, model_config) -> OpenAIProvider:
        # The last line of defence: whatever path led here, a forbidden variable is never
        # read, a key never goes to a host it is not bound to (MODEL_KEY_HOSTS; the client checks
        # each request again) and a forbidden address never gets a request.
        refusal = model_refusal(model_config)
        if refusal:
            raise ClientError(refusal)
        env_name = (model_config.api_key_env or "").strip()
        api_key = None
        if env_name:
            api_key = os.environ.get(env_name)
            if not api_key:
                raise ClientError(
                    f"The environment variable {env_name} that should hold the API key of "
                    f"model {model_config.name or model_config.model_id} is not set."
                )
        # Local servers (vLLM, Ollama, llama.cpp) accept any key, and the client insists on one.
        api_key = api_key or PLACEHOLDER_KEY
        base_url = model_config.base_url or None
        timeout = float(model_config.timeout)
        # The variable is part of the key: the client's request hook holds the hosts it is bound to.
        cache_key = (base_url, env_name, hashlib.sha256(api_key.encode()).hexdigest(), timeout)
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(cache_key)
            if client is None:
                client = openai.OpenAI(
                    base_url=base_url,
                    api_key=api_key,
                    timeout=timeout,
                    max_retries=0,
                    http_client=guarded_http_client(timeout=timeout, api_key_env=env_name, api_key=api_key),
                )
                _CLIENTS[cache_key] = client
        return cls(client=client, model_id=model_config.model_id, base_url=str(client.base_url))

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float,
        max_tokens: int,
        seed: int | None = None,
        top_logprobs: int | None = None,
    ) -> Completion:
        kwargs: dict = {
            "model": self.model_id,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if seed is not None:
            kwargs["seed"] = seed
        if top_logprobs is not None:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = top_logprobs
        try:
            # The raw reply, not the SDK's typed one: building and dumping its pydantic models cost
            # about as much CPU as the rest of a request (issue 25), and the engine keeps the JSON.
            # Errors are the SDK's as for a typed call (the README's "undocumented endpoints").
            response = self.client.post("/chat/completions", body=kwargs, cast_to=httpx2.Response)
            data = _reply_data(response)
        except openai.APITimeoutError as error:
            raise RetryableError(self._clean(f"Timed out after {self.client.timeout} s: {error.message}")) from error
        except openai.APIConnectionError as error:
            refused = _refusal_in(error)
            if refused is not None:
                # The address is refused, not unreachable: asking again cannot help.
                raise ClientError(self._clean(str(refused))) from error
            cause = error.__cause__ or error.__context__
            detail = f" ({type(cause).__name__}: {cause})" if cause else ""
            raise RetryableError(self._clean(f"Connection failed: {error.message}{detail}")) from error
        except openai.APIStatusError as error:
            status = error.status_code
            message = self._clean(_server_message(error))
            # Any other 4xx (400, 401, 403, 404, 422 ...) will be answered the same way however often we ask.
            if status in (408, 429) or status >= 500:
                raise RetryableError(
                    f"HTTP {status}: {message}", retry_after=_retry_after_of(error.response), status=status
                ) from error
            raise ClientError(message, status=status) from error
        except ValueError as error:
            # The body claimed to be JSON and was not: a proxy hiccup or a truncated reply.
            raise RetryableError(self._clean(f"Reply is not valid JSON: {error}")) from error
        return self._completion_of(data)

    def choice_logprobs(self, messages: list[dict], choices: list[str]) -> dict[str, float]:
        """One greedy token with its top 20 alternatives; a choice matches a token equal to
        it after stripping spaces (" Correct" and "Correct"), case-sensitively, taking the
        best variant. A choice outside the top 20 gets -inf."""
        completion = self.complete(messages, temperature=0.0, max_tokens=1, top_logprobs=20)
        return choice_logprobs_of(completion, choices, model=self.model_id)

    def choice_logprobs_usage(self, messages: list[dict], choices: list[str]) -> tuple[dict[str, float], int, int]:
        completion = self.complete(messages, temperature=0.0, max_tokens=1, top_logprobs=20)
        return choice_logprobs_of(completion, choices, model=self.model_id), completion.tokens_in, completion.tokens_out

    def context_length(self) -> int | None:
        """From the endpoint's model card (GET /models/{id}): the OpenAI API says nothing, but vLLM
        (max_model_len), llama.cpp (meta.n_ctx_train), LM Studio, OpenRouter and gateways do."""
        try:
            card = self.client.models.retrieve(self.model_id).model_dump(mode="json")
        except (openai.OpenAIError, ValueError):
            return None
        return context_length_of(card)

    def declared_tokenizer(self) -> str | None:
        """The checkpoint the endpoint says it serves: vLLM's model card names it ``root`` (a hub id or
        the path it was loaded from); the OpenAI API and most others say nothing."""
        try:
            card = self.client.models.retrieve(self.model_id).model_dump(mode="json")
        except (openai.OpenAIError, ValueError):
            return None
        root = card.get("root")
        return root.strip() if isinstance(root, str) and root.strip() else None

    def _completion_of(self, data) -> Completion:
        # Nothing is validated: a server may send a plain string, or an object without choices.
        choices = _field(data, "choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise RetryableError(self._clean(f"Reply has no choices: {str(data)[:200]}"))
        choice = choices[0]
        message = _field(choice, "message")
        text = _field(message, "content")
        usage = _field(data, "usage")
        refusal = _field(message, "refusal")
        return Completion(
            text=text if isinstance(text, str) else "",
            tokens_in=_count(_field(usage, "prompt_tokens")),
            tokens_out=_count(_field(usage, "completion_tokens")),
            fingerprint=str(data.get("system_fingerprint") or ""),
            logprobs=_logprobs_of(choice),
            raw=data,
            finish_reason=str(choice.get("finish_reason") or "")[:32],
            refusal=refusal if isinstance(refusal, str) else "",
        )

    def describe(self) -> dict:
        return {
            "provider": "openai",
            "model_id": self.model_id,
            "base_url": self.base_url,
            "openai_version": openai.__version__,
        }
