"""Writes of the llm app: the model registry, completions, the response cache, the shared
throttle, estimates and the batch-run engine; the names callers use are re-exported here."""

from .cache import cache_key, response_cache_lookup, response_cache_store, response_cache_store_many
from .capabilities import (
    error_refuses_image,
    model_capability_problem,
    model_probe,
    model_probe_enqueue,
    model_probe_queued,
    model_probe_request,
    model_vision_refused,
    reply_sees_no_image,
)
from .complete import model_choice_logprobs, model_complete, model_completion, usage_metered
from .engine import (
    BatchRunError,
    batch_run_cancel,
    batch_run_claim,
    batch_run_fail,
    batch_run_finish,
    batch_run_heartbeat,
    batch_run_resume,
    batch_run_work,
    package_versions,
)
from .estimates import CostNotConfirmed, batch_run_estimate, estimate_confirmed, estimate_text, estimate_totals
from .models import model_add, model_slots_ensure
from .throttle import SlotLease, backoff_delay, model_throttle_wait, request_with_retries

__all__ = [
    "BatchRunError",
    "CostNotConfirmed",
    "SlotLease",
    "backoff_delay",
    "batch_run_cancel",
    "batch_run_claim",
    "batch_run_estimate",
    "batch_run_fail",
    "batch_run_finish",
    "batch_run_heartbeat",
    "batch_run_resume",
    "batch_run_work",
    "cache_key",
    "error_refuses_image",
    "estimate_confirmed",
    "estimate_text",
    "estimate_totals",
    "model_add",
    "model_capability_problem",
    "model_choice_logprobs",
    "model_complete",
    "model_completion",
    "model_probe",
    "model_probe_enqueue",
    "model_probe_queued",
    "model_probe_request",
    "model_slots_ensure",
    "model_throttle_wait",
    "model_vision_refused",
    "package_versions",
    "reply_sees_no_image",
    "request_with_retries",
    "response_cache_lookup",
    "response_cache_store",
    "response_cache_store_many",
    "usage_metered",
]
