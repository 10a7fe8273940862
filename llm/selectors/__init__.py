"""Reads of the llm app: the model registry, the state of runs on the engine, token calibration;
the names callers use are re-exported here."""

from .models import api_key_state, model_choices, model_get, model_list
from .runs import batch_run_is_stalled, batch_run_waiting_for_worker, worker_hint_context
from .usage import model_token_calibration

__all__ = [
    "api_key_state",
    "batch_run_is_stalled",
    "batch_run_waiting_for_worker",
    "model_choices",
    "model_get",
    "model_list",
    "model_token_calibration",
    "worker_hint_context",
]
