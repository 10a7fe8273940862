"""A run's tokens and cost, estimated before it starts; above EVAL_COST_CONFIRM_USD it must be confirmed."""

from django.core.exceptions import ValidationError
from django.db import transaction

from llm.costs import cost_of, prompt_counter
from llm.services.cache import cache_key, response_cache_lookup
from llm.services.capabilities import model_capability_problem
from llm.services.estimates import batch_run_estimate, estimate_confirmed, estimate_totals

from ...models import Run
from .execution import run_item_messages
from .lifecycle import run_create

# Keys per cache lookup: well under SQLite's limit of bound variables.
LOOKUP_BATCH = 500
DEFAULT_MAX_TOKENS = 150  # what the engine sends when a run's params name none


def run_cost_estimate(*, run: Run) -> dict:
    """Tokens from the run's rendered prompts (its items' exact messages) and ``max_tokens`` per reply,
    an upper bound; a request the response cache already answered costs nothing."""
    items = list(
        run.items.select_related("expression__theme", "source_item", "source_item_b")
        .prefetch_related("expression__traits")
        .order_by("id")
    )
    messages = run_item_messages(run=run, items=items)
    counter = prompt_counter(run.model, run_kind=run.kind)
    keys = [cache_key(run.model, m, run.params) for m in messages]
    cached = {}
    for start in range(0, len(keys), LOOKUP_BATCH):
        cached.update(response_cache_lookup(keys[start : start + LOOKUP_BATCH]))
    max_tokens = int(run.params.get("max_tokens") or DEFAULT_MAX_TOKENS)
    to_send = [item_messages for item_messages, key in zip(messages, keys, strict=True) if key not in cached]
    n_cached = len(messages) - len(to_send)
    tokens_in = sum(counter.count_all(to_send)) if to_send else 0
    tokens_out = max_tokens * len(to_send)
    price_input, price_output = run.model.price_input, run.model.price_output
    return estimate_totals(
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        n_requests=len(messages) - n_cached,
        cost=cost_of(tokens_in, tokens_out, price_input=price_input, price_output=price_output),
        n_cached=n_cached,
        max_tokens=max_tokens,
        price_input=price_input,
        price_output=price_output,
        **counter.details(),
    )


def _refuse_missing_capabilities(*, model, params: dict | None) -> None:
    # Only a request for log-probabilities needs them (no run kind asks for them by default).
    problem = model_capability_problem(model, logprobs=(params or {}).get("top_logprobs") is not None)
    if problem:
        raise ValidationError({"model": problem})


def run_start(*, confirm_cost: bool = False, **arguments) -> Run:
    """``run_create`` with the run's estimate made from its own items before anything is queued.

    Above EVAL_COST_CONFIRM_USD and without ``confirm_cost`` it raises CostNotConfirmed and the run,
    its items and its idempotency claim roll back together: nothing is stored and nothing queued
    (the queueing waits for the commit). A repeat of an idempotency key returns the first run as is.
    """
    _refuse_missing_capabilities(model=arguments["model"], params=arguments.get("params"))
    with transaction.atomic():
        run = run_create(**arguments)
        if getattr(run, "idempotent_repeat", False):
            return run
        estimate = estimate_confirmed(run_cost_estimate(run=run), confirm_cost=confirm_cost)
        Run.objects.filter(pk=run.pk).update(estimate=estimate)
        run.estimate = estimate
    return run


def run_estimate(**arguments) -> dict:
    """The estimate of the run these arguments would start, starting nothing (the run is built to
    render its exact prompts, then rolled back)."""
    _refuse_missing_capabilities(model=arguments["model"], params=arguments.get("params"))
    arguments.pop("idempotency_key", None)
    return batch_run_estimate(build=lambda: run_cost_estimate(run=run_create(**arguments)))
