"""What every provider returns and raises, so the engine treats them alike."""

import math
from dataclasses import dataclass, field


@dataclass
class Completion:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    # OpenAI's system_fingerprint, or the local model's content hash.
    fingerprint: str = ""
    # [{"token": str, "logprob": float, "top": [{"token": str, "logprob": float}, ...]}, ...] when asked for.
    logprobs: list | None = None
    raw: dict = field(default_factory=dict)
    # Why the reply ended as the provider says: "stop", "length" (cut off by max_tokens),
    # "content_filter" ...; "" when it does not say (and for replies cached before it was kept).
    finish_reason: str = ""
    # The provider's refusal message where it gives one apart from the reply (OpenAI's message.refusal).
    refusal: str = ""


class ProviderError(Exception):
    """Base class of provider failures."""


class RetryableError(ProviderError):
    """429, 5xx, a timeout or a dropped connection: worth another try.

    ``retry_after`` carries the server's Retry-After in seconds when it sent one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class ClientError(ProviderError):
    """A request the server will never accept (400 and the like): the item fails with this message."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status


class Provider:
    """One configured model. ``complete`` sends one chat request and does not retry:
    retries, backoff, pacing and concurrency belong to the engine."""

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float,
        max_tokens: int,
        seed: int | None = None,
        top_logprobs: int | None = None,
    ) -> Completion:
        raise NotImplementedError

    def choice_logprobs(self, messages: list[dict], choices: list[str]) -> dict[str, float]:
        """The log-probability of each choice as the FIRST token of the reply (-inf when the
        provider cannot see it). Raises ClientError when the model gives no log-probabilities."""
        raise ClientError(f"{type(self).__name__} cannot report log-probabilities of answer choices.")

    def choice_logprobs_usage(self, messages: list[dict], choices: list[str]) -> tuple[dict[str, float], int, int]:
        """``choice_logprobs`` with the tokens the request used (in, out) as the provider reported
        them; 0 where it reports none (a local model)."""
        return self.choice_logprobs(messages, choices), 0, 0

    def declared_tokenizer(self) -> str | None:
        """The checkpoint whose tokenizer counts this model's tokens, as the provider names it; None when it does not."""
        return None

    def context_length(self) -> int | None:
        """The model's context window in tokens as the provider reports it, None when it does not say."""
        return None

    def needs_warm_up(self) -> bool:
        """Whether the first request would first spend long loading something (a local model)."""
        return False

    def warm_up(self) -> None:
        """Do that loading now, so the caller can tell people what the wait is."""

    def describe(self) -> dict:
        """Reproducibility facts: model id, base URL or local path and hash, package versions."""
        raise NotImplementedError


def p_correct(logprobs: dict[str, float], *, correct: str = "Correct", incorrect: str = "Incorrect") -> float:
    """P(Correct) normalised over the Correct/Incorrect pair:
    exp(lc) / (exp(lc) + exp(li)), computed as a logistic of lc - li so it cannot overflow.

    The rest of the vocabulary is ignored: the listener is asked for exactly one of the
    two words, and mass on other tokens says nothing about which one it prefers. When
    neither word was seen (both -inf) there is nothing to normalise and it is an error.
    """
    lc = logprobs.get(correct, -math.inf)
    li = logprobs.get(incorrect, -math.inf)
    if lc == -math.inf and li == -math.inf:
        raise ClientError(
            f"Neither {correct!r} nor {incorrect!r} is among the model's most likely first tokens, "
            "so P(Correct) is undefined; the model did not answer in the asked format."
        )
    if li == -math.inf:
        return 1.0
    if lc == -math.inf:
        return 0.0
    diff = lc - li
    if diff >= 0:
        return 1.0 / (1.0 + math.exp(-diff))
    odds = math.exp(diff)  # small, never overflows
    return odds / (1.0 + odds)
