"""Writes of the evaluation app: models, prompts, runs and their execution."""

from .capabilities import model_probe, model_probe_request
from .models import model_add, prompt_add
from .runs import (
    RunError,
    run_cancel,
    run_chunk,
    run_execute,
    run_repeat,
    run_rerun_longer,
    run_resume,
    run_scores_reparse,
    run_start,
)

__all__ = [
    "RunError",
    "model_add",
    "model_probe",
    "model_probe_request",
    "prompt_add",
    "run_cancel",
    "run_chunk",
    "run_execute",
    "run_repeat",
    "run_rerun_longer",
    "run_resume",
    "run_scores_reparse",
    "run_start",
]
