"""Runs: generation, judging and classification, executed by Celery workers.

lifecycle creates, cancels and resumes runs; execution fans a run's items out in chunks and
sends each once; cache is the persistent response cache; throttle paces a model's requests
across every worker. The names callers use are re-exported here.
"""

from ...prompts import CLASSIFICATION_TASKS, GENERATION_PROMPTS, JUDGE_STRATEGIES
from .cache import cache_key, response_cache_lookup, response_cache_store
from .execution import claimable_items, run_chunk, run_claims_release, run_execute, run_fingerprint_record, run_finish
from .lifecycle import (
    CLASSIFICATION_DEFAULTS,
    COT_MAX_TOKENS,
    GENERATION_DEFAULTS,
    JUDGE_DEFAULTS,
    RUN_IDEMPOTENCY_SCOPE,
    RunError,
    package_versions,
    run_cancel,
    run_execute_enqueue,
    run_is_stalled,
    run_repeat,
    run_reproducibility,
    run_rerun_longer,
    run_resume,
    run_start,
)
from .reparse import run_scores_reparse
from .throttle import SlotLease, backoff_delay, model_throttle_wait

__all__ = [
    "CLASSIFICATION_DEFAULTS",
    "CLASSIFICATION_TASKS",
    "COT_MAX_TOKENS",
    "GENERATION_DEFAULTS",
    "GENERATION_PROMPTS",
    "JUDGE_DEFAULTS",
    "JUDGE_STRATEGIES",
    "RUN_IDEMPOTENCY_SCOPE",
    "RunError",
    "SlotLease",
    "backoff_delay",
    "cache_key",
    "claimable_items",
    "model_throttle_wait",
    "package_versions",
    "run_reproducibility",
    "response_cache_lookup",
    "response_cache_store",
    "run_cancel",
    "run_chunk",
    "run_claims_release",
    "run_execute",
    "run_execute_enqueue",
    "run_fingerprint_record",
    "run_finish",
    "run_is_stalled",
    "run_repeat",
    "run_rerun_longer",
    "run_resume",
    "run_scores_reparse",
    "run_start",
]
