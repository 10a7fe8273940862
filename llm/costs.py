"""Token counts and prices: what a run is estimated to cost before it starts and what it cost.

Prices are US dollars per million tokens on the model (``price_input``, ``price_output``). A run
keeps the prices its estimate used, so its cost does not change when the model's price does.

A request's input tokens are counted, in this order of preference:

1. **tokenizer**: with the model's own tokenizer and chat template, as the server counts the
   prompt (the built-in SmolLM2 from its GGUF, every local transformers model, and an
   OpenAI-compatible model whose tokenizer is installed: tiktoken for an OpenAI model name, or a
   Hugging Face tokenizer named by the model id or by the ``root`` its endpoint's model card
   declares, found in a local directory or the local Hugging Face cache);
2. **calibrated**: the byte estimate times the ratio of the tokens the provider reported to the
   byte estimate of the same messages, over the model's latest replies (its runs' items keep
   both), preferring replies of the same kind of run;
3. **bytes**: a token per ``BYTES_PER_TOKEN`` bytes of UTF-8 and ``MESSAGE_OVERHEAD`` per message,
   before the model has replied to anything.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded

logger = logging.getLogger(__name__)

BYTES_PER_TOKEN = 3
# The chat format's own tokens: role and separators per message, and the reply's priming.
MESSAGE_OVERHEAD = 4
REPLY_OVERHEAD = 3
ESTIMATE_METHOD = f"estimate: UTF-8 bytes / {BYTES_PER_TOKEN}"
# What a counter is: the estimate's ``count_method``.
COUNT_TOKENIZER = "tokenizer"
COUNT_CALIBRATED = "calibrated"
COUNT_BYTES = "bytes"


def cost_of(tokens_in: int, tokens_out: int, *, price_input: float | None, price_output: float | None) -> float | None:
    """US dollars; None when a price is unknown (never 0, which would read as free)."""
    if price_input is None or price_output is None:
        return None
    return (tokens_in * float(price_input) + tokens_out * float(price_output)) / 1_000_000


def run_prices(run) -> tuple[float | None, float | None]:
    """The prices the run's estimate used, else the model's current ones (a run started before prices existed)."""
    estimate = run.estimate or {}
    if "price_input" in estimate or "price_output" in estimate:
        return estimate.get("price_input"), estimate.get("price_output")
    return run.model.price_input, run.model.price_output


def usage(run, *, tokens_in: int | None = None, tokens_out: int | None = None) -> dict:
    """The tokens a run's requests used (as the provider reported them, cached replies counting 0) and their cost."""
    tokens_in = run.tokens_in if tokens_in is None else tokens_in
    tokens_out = run.tokens_out if tokens_out is None else tokens_out
    price_input, price_output = run_prices(run)
    return {
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "cost": cost_of(tokens_in, tokens_out, price_input=price_input, price_output=price_output),
    }


def message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def has_image(messages: list[dict]) -> bool:
    """Whether a request carries a content part that is not text (its tokens are not counted here)."""
    return any(
        isinstance(part, dict) and part.get("type") not in (None, "text")
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
    )


def bytes_estimate(messages: list[dict]) -> int:
    """The documented estimate of one request's input tokens, from its text alone."""
    return (
        sum(math.ceil(len(message_text(m).encode("utf-8")) / BYTES_PER_TOKEN) + MESSAGE_OVERHEAD for m in messages)
        + REPLY_OVERHEAD
    )


@dataclass(frozen=True)
class PromptCounter:
    """How a model's input tokens are counted: ``count_all`` gives each request's tokens (in one
    call, so a tokenizer encodes them as a batch), ``method`` says how, for the pages."""

    count_all: Callable[[list[list[dict]]], list[int]]
    method: str
    kind: str
    calibration: dict | None = field(default=None)

    def count(self, messages: list[dict]) -> int:
        return self.count_all([messages])[0]

    def details(self) -> dict:
        """What an estimate keeps of its counter."""
        found = {"method": self.method, "count_method": self.kind}
        if self.calibration is not None:
            found["calibration"] = self.calibration
        return found


def _tokenizer_counter(tokenizer) -> Callable[[list[list[dict]]], list[int]]:
    """Chat template, then the tokenizer, exactly as the transformers provider sends a prompt."""
    from .providers.transformers_provider import chat_prompts

    def count_all(conversations):
        texts = [[{"role": m.get("role", "user"), "content": message_text(m)} for m in c] for c in conversations]
        if getattr(tokenizer, "chat_template", None):
            prompts = chat_prompts(tokenizer, texts)
            return [len(ids) for ids in tokenizer(prompts, add_special_tokens=False)["input_ids"]]
        # A tokenizer without a chat template: its tokens for the text, the format's estimated.
        return [
            sum(len(tokenizer.encode(m["content"], add_special_tokens=False)) + MESSAGE_OVERHEAD for m in c)
            + REPLY_OVERHEAD
            for c in texts
        ]

    return count_all


def _tiktoken_counter(model_id: str):
    """OpenAI's own count for a model tiktoken knows by name (3 tokens per message and 3 for the
    reply's priming, as OpenAI documents); None when tiktoken is not installed or the name unknown."""
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        encoding = tiktoken.encoding_for_model(model_id)
    except (KeyError, ValueError):
        return None

    def count_all(conversations):
        return [
            sum(
                3
                + len(encoding.encode(message_text(m), disallowed_special=()))
                + len(encoding.encode(str(m.get("role", "user"))))
                for m in c
            )
            + 3
            for c in conversations
        ]

    return count_all, f"tiktoken: {encoding.name}"


def _hf_tokenizer(name: str):
    """A Hugging Face tokenizer by local directory or hub id, from the disk only (nothing is downloaded).

    transformers is imported only once there is a tokenizer to load: it brings torch with it, 3-4 s
    of CPU in a web process or a ``run_generation`` before its run starts, only to find nothing."""
    path = Path(name).expanduser()
    if path.is_dir():
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    if name.startswith(("/", ".", "~")) or name.count("/") != 1:
        return None  # neither a directory here nor a hub id ("org/name")
    if not _in_hub_cache(name):
        return None
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name, local_files_only=True)


def _in_hub_cache(repo_id: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return any(
        isinstance(try_to_load_from_cache(repo_id, filename), str)
        for filename in ("tokenizer_config.json", "tokenizer.json")
    )


@functools.lru_cache(maxsize=32)
def _installed_tokenizer(provider: str, model_id: str, declared: str) -> tuple[Callable, str] | None:
    """(count_all, method) with the model's own tokenizer, or None when the app does not have it."""
    if provider == "transformers":
        try:
            from .providers.transformers_provider import load_tokenizer

            return _tokenizer_counter(load_tokenizer(model_id)), f"tokenizer: {model_id}"
        except SoftTimeLimitExceeded:
            raise
        except Exception:  # noqa: BLE001 - no tokenizer here: the model's replies will calibrate the estimate
            logger.info("no local tokenizer for %s; tokens are estimated", model_id, exc_info=True)
            return None
    found = _tiktoken_counter(model_id)
    if found is not None:
        return found
    for name in dict.fromkeys(n for n in (declared, model_id) if n):
        try:
            tokenizer = _hf_tokenizer(name)
        except SoftTimeLimitExceeded:
            raise
        except Exception:  # noqa: BLE001 - not in the local cache; the next name, then calibration
            logger.debug("no local tokenizer named %s", name, exc_info=True)
            continue
        if tokenizer is not None:
            return _tokenizer_counter(tokenizer), f"tokenizer: {name}"
    return None


def declared_tokenizer(model) -> str:
    """The tokenizer an OpenAI-compatible endpoint declares for the model (vLLM's model card names the
    checkpoint it serves as ``root``), as ``probe_model`` recorded it."""
    found = ((model.probe or {}).get("tokenizer") or {}).get("result")
    return found if isinstance(found, str) else ""


def prompt_counter(model, *, run_kind: str = "") -> PromptCounter:
    """How to count ``model``'s input tokens now: its tokenizer, else the byte estimate calibrated on
    its replies (those of ``run_kind`` first), else the byte estimate alone."""
    installed = _installed_tokenizer(model.provider, model.model_id, declared_tokenizer(model))
    if installed is not None:
        count_all, method = installed
        return PromptCounter(count_all=count_all, method=method, kind=COUNT_TOKENIZER)
    from .selectors.usage import model_token_calibration

    calibration = model_token_calibration(model=model, run_kind=run_kind)
    if calibration is None:
        return PromptCounter(
            count_all=lambda conversations: [bytes_estimate(c) for c in conversations],
            method=ESTIMATE_METHOD,
            kind=COUNT_BYTES,
        )
    ratio = calibration["ratio"]
    return PromptCounter(
        count_all=lambda conversations: [math.ceil(bytes_estimate(c) * ratio) for c in conversations],
        method=(
            f"calibrated: UTF-8 bytes / {BYTES_PER_TOKEN} × {ratio:.2f}, the ratio of reported to estimated input "
            f"tokens over this model's last {calibration['replies']} replies"
        ),
        kind=COUNT_CALIBRATED,
        calibration=calibration,
    )
