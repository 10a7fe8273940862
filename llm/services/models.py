"""The model registry: registering a model, with its concurrency and pacing rows."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from core.services.idempotency import idempotent_create

from ..guard import api_key_env_problem, base_url_problem, key_binding_problem
from ..models import MAX_CONCURRENCY, REGISTRABLE_PROVIDERS, ModelConfig, ModelSlot, ModelThrottle, Provider

MODEL_IDEMPOTENCY_SCOPE = "evaluation.model"


def model_add(
    *,
    name: str,
    provider: str,
    model_id: str,
    base_url: str = "",
    api_key_env: str = "",
    max_concurrency: int = 4,
    requests_per_minute: int | None = None,
    timeout: float = 60.0,
    supports_vision: bool | None = None,
    supports_logprobs: bool | None = None,
    context_length: int | None = None,
    price_input: float | None = None,
    price_output: float | None = None,
    user=None,
    builtin: bool = False,
    idempotency_key: str | None = None,
) -> ModelConfig:
    """Register a model. The API key itself is never stored, only the name of its environment variable.

    Capabilities left None are unknown until ``probe_model`` asks the model; prices are US dollars
    per million tokens (None: unknown, and so is the cost of its runs).

    A second request with the same ``idempotency_key`` returns the model the first one registered, with
    ``model.idempotent_repeat`` set, instead of refusing the name as taken.
    """
    model = idempotent_create(
        scope=MODEL_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=ModelConfig,
        create=lambda: _model_create(
            name=name,
            provider=provider,
            model_id=model_id,
            base_url=base_url,
            api_key_env=api_key_env,
            max_concurrency=max_concurrency,
            requests_per_minute=requests_per_minute,
            timeout=timeout,
            supports_vision=supports_vision,
            supports_logprobs=supports_logprobs,
            context_length=context_length,
            price_input=price_input,
            price_output=price_output,
            user=user,
            builtin=builtin,
        ),
    )
    return model


@transaction.atomic
def _model_create(
    *,
    name,
    provider,
    model_id,
    base_url,
    api_key_env,
    max_concurrency,
    requests_per_minute,
    timeout,
    supports_vision,
    supports_logprobs,
    context_length,
    price_input,
    price_output,
    user,
    builtin,
) -> ModelConfig:
    errors = {}
    registrable = [value for value, _label in REGISTRABLE_PROVIDERS]
    if provider not in registrable:
        errors["provider"] = _("one of %(values)s") % {"values": ", ".join(registrable)}
    if provider == Provider.OPENAI and not base_url:
        errors["base_url"] = _("an OpenAI-compatible model needs a base URL")
    if not model_id:
        errors["model_id"] = _("a model id is required")
    key_problem = api_key_env_problem(api_key_env)
    if not key_problem and provider == Provider.OPENAI:
        key_problem = key_binding_problem(api_key_env, base_url)
    if key_problem:
        errors["api_key_env"] = key_problem
    url_problem = base_url_problem(base_url)
    if url_problem:
        errors["base_url"] = url_problem
    if not 1 <= max_concurrency <= MAX_CONCURRENCY:
        errors["max_concurrency"] = _("from 1 to %(max)s") % {"max": MAX_CONCURRENCY}
    if requests_per_minute is not None and requests_per_minute < 1:
        errors["requests_per_minute"] = _("at least 1, or empty for no limit")
    if timeout <= 0:
        errors["timeout"] = _("a positive number of seconds")
    for field, price in (("price_input", price_input), ("price_output", price_output)):
        if price is not None and not 0 <= price < 1_000_000:
            errors[field] = _("US dollars per million tokens, from 0")
    if context_length is not None and context_length < 1:
        errors["context_length"] = _("at least 1 token, or empty when unknown")
    if provider == Provider.TRANSFORMERS and supports_vision:
        errors["supports_vision"] = _("the local transformers provider takes text only")
    if ModelConfig.objects.filter(name=name).exists():
        errors["name"] = _("a model named '%(name)s' already exists") % {"name": name}
    if errors:
        raise ValidationError(errors)
    model = ModelConfig.objects.create(
        name=name,
        provider=provider,
        model_id=model_id,
        base_url=base_url,
        api_key_env=api_key_env,
        max_concurrency=max_concurrency,
        requests_per_minute=requests_per_minute,
        timeout=timeout,
        supports_vision=False if provider == Provider.TRANSFORMERS else supports_vision,
        supports_logprobs=True
        if provider == Provider.TRANSFORMERS and supports_logprobs is None
        else supports_logprobs,
        context_length=context_length,
        price_input=price_input,
        price_output=price_output,
        created_by=user,
        builtin=builtin,
    )
    model_slots_ensure(model=model)
    return model


def model_slots_ensure(*, model: ModelConfig) -> None:
    """One lease row per allowed concurrent request, and the pacing row."""
    existing = set(model.slots.values_list("number", flat=True))
    ModelSlot.objects.bulk_create(
        [ModelSlot(model=model, number=n) for n in range(model.max_concurrency) if n not in existing]
    )
    model.slots.filter(number__gte=model.max_concurrency).delete()
    ModelThrottle.objects.get_or_create(model=model)
