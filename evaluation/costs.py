"""Token counts and prices: what a run is estimated to cost before it starts and what it cost.

Prices are US dollars per million tokens on the model (``price_input``, ``price_output``). A run
keeps the prices its estimate used, so its cost does not change when the model's price does.
Tokens are counted with the model's own tokenizer where one is installed (a local transformers
model directory, or tiktoken for an OpenAI model when the package is there); otherwise with the
documented estimate: a token per ``BYTES_PER_TOKEN`` bytes of UTF-8, which over-counts English
(about 4 bytes a token) and is close for Vietnamese, whose accented letters take 2-3 bytes.
"""

from __future__ import annotations

import functools
import logging
import math

from celery.exceptions import SoftTimeLimitExceeded

logger = logging.getLogger(__name__)

BYTES_PER_TOKEN = 3
# The chat format's own tokens: role and separators per message, and the reply's priming.
MESSAGE_OVERHEAD = 4
REPLY_OVERHEAD = 3
ESTIMATE_METHOD = f"estimate: UTF-8 bytes / {BYTES_PER_TOKEN}"


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


def _estimate(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


@functools.lru_cache(maxsize=16)
def _tokenizer(provider: str, model_id: str):
    """(count(text) -> int, method) with an installed tokenizer, or None."""
    if provider == "transformers":
        try:
            from pathlib import Path

            if (Path(model_id).expanduser() / "tokenizer_config.json").exists():
                from transformers import AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(str(Path(model_id).expanduser()), local_files_only=True)
                return (lambda text: len(tokenizer.encode(text, add_special_tokens=False))), f"tokenizer: {model_id}"
        except SoftTimeLimitExceeded:
            raise
        except Exception:  # noqa: BLE001 - any failure falls back to the estimate
            logger.info("no local tokenizer for %s; tokens are estimated", model_id, exc_info=True)
        return None
    try:
        import tiktoken

        try:
            encoding = tiktoken.encoding_for_model(model_id)
        except KeyError:
            encoding = tiktoken.get_encoding("o200k_base")
        return (lambda text: len(encoding.encode(text, disallowed_special=()))), f"tiktoken: {encoding.name}"
    except SoftTimeLimitExceeded:
        raise
    except Exception:  # noqa: BLE001 - not installed, or its vocabulary cannot be fetched offline
        return None


def token_counter(model):
    """(count(text) -> int, method) for a model."""
    found = _tokenizer(model.provider, model.model_id)
    return found if found is not None else (_estimate, ESTIMATE_METHOD)


def message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def prompt_tokens(messages: list[dict], count) -> int:
    return sum(count(message_text(m)) + MESSAGE_OVERHEAD for m in messages) + REPLY_OVERHEAD
