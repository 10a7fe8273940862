"""Writes of the evaluation app: prompts, runs and their execution; the names callers use are re-exported here."""

from .prompts import prompt_add
from .runs import (
    run_chunk,
    run_estimate,
    run_execute,
    run_repeat,
    run_rerun_longer,
    run_resume,
    run_scores_reparse,
    run_start,
)

__all__ = [
    "prompt_add",
    "run_chunk",
    "run_estimate",
    "run_execute",
    "run_repeat",
    "run_rerun_longer",
    "run_resume",
    "run_scores_reparse",
    "run_start",
]
