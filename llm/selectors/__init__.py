"""Reads of the llm app: the model registry, the state of runs on the engine, token calibration;
the names callers use are re-exported here."""

from .models import api_key_state, model_choices, model_get, model_list
from .runs import WORKER_COMMAND, batch_run_is_stalled, batch_run_waiting_for_worker, worker_hint_context
from .usage import CALIBRATION_MIN_REPLIES, CALIBRATION_REPLIES, CALIBRATION_RUNS, model_token_calibration

__all__ = [
    "CALIBRATION_MIN_REPLIES",
    "CALIBRATION_REPLIES",
    "CALIBRATION_RUNS",
    "WORKER_COMMAND",
    "api_key_state",
    "batch_run_is_stalled",
    "batch_run_waiting_for_worker",
    "model_choices",
    "model_get",
    "model_list",
    "model_token_calibration",
    "worker_hint_context",
]
