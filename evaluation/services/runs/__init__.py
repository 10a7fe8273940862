"""Runs: generation, judging and classification, a kind of work on the llm app's engine.

lifecycle creates and resumes runs; cost estimates them before they start; execution fans a
run's items out in chunks and sends each once; reparse reads stored judge replies again.
The names callers use are re-exported here.
"""

from .cost import DEFAULT_MAX_TOKENS, LOOKUP_BATCH, run_cost_estimate, run_estimate, run_start
from .execution import (
    CHUNK_SLOTS,
    SLOT_WAIT_SECONDS,
    chunk_size,
    claimable_items,
    judge_reading_fields,
    run_chunk,
    run_claims_release,
    run_execute,
    run_fingerprint_record,
    run_finish,
    run_item_messages,
    run_items_claim_more,
)
from .imports import run_import
from .lifecycle import (
    CLASSIFICATION_DEFAULTS,
    COT_MAX_TOKENS,
    GENERATION_DEFAULTS,
    JUDGE_DEFAULTS,
    JUDGE_TOP_LOGPROBS,
    RUN_IDEMPOTENCY_SCOPE,
    run_create,
    run_execute_enqueue,
    run_repeat,
    run_reproducibility,
    run_rerun_longer,
    run_resume,
)
from .reparse import READING_FIELDS, run_scores_reparse

__all__ = [
    "CHUNK_SLOTS",
    "CLASSIFICATION_DEFAULTS",
    "COT_MAX_TOKENS",
    "DEFAULT_MAX_TOKENS",
    "GENERATION_DEFAULTS",
    "JUDGE_DEFAULTS",
    "JUDGE_TOP_LOGPROBS",
    "LOOKUP_BATCH",
    "READING_FIELDS",
    "RUN_IDEMPOTENCY_SCOPE",
    "SLOT_WAIT_SECONDS",
    "chunk_size",
    "claimable_items",
    "judge_reading_fields",
    "run_chunk",
    "run_claims_release",
    "run_cost_estimate",
    "run_create",
    "run_estimate",
    "run_execute",
    "run_execute_enqueue",
    "run_fingerprint_record",
    "run_items_claim_more",
    "run_finish",
    "run_import",
    "run_item_messages",
    "run_repeat",
    "run_reproducibility",
    "run_rerun_longer",
    "run_resume",
    "run_scores_reparse",
    "run_start",
]
