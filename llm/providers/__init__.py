"""Providers: the official openai client against any OpenAI-compatible endpoint, and local transformers models."""

from .base import ClientError, Completion, Provider, ProviderError, RetryableError, p_correct

__all__ = ["ClientError", "Completion", "Provider", "ProviderError", "RetryableError", "p_correct", "provider_for"]


def provider_for(model_config) -> Provider:
    """The provider of a ModelConfig (local models are loaded once per process and reused)."""
    from ..models import Provider as Kind

    if model_config.provider == Kind.OPENAI:
        from .openai_provider import OpenAIProvider

        return OpenAIProvider.for_config(model_config)
    if model_config.provider == Kind.EXTERNAL:
        from .base import ClientError

        raise ClientError(f"model {model_config.name} was imported from a harness log: it cannot be called")
    from .transformers_provider import TransformersProvider

    return TransformersProvider.for_config(model_config)
