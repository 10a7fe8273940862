"""What every provider returns and raises, so the engine treats them alike."""

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

    def complete(self, messages: list[dict], *, temperature: float, max_tokens: int, seed: int | None = None,
                 top_logprobs: int | None = None) -> Completion:
        raise NotImplementedError

    def describe(self) -> dict:
        """Reproducibility facts: model id, base URL or local path and hash, package versions."""
        raise NotImplementedError
