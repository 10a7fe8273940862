"""Reads of the evaluation app, one module per feature; the names callers use are re-exported here."""

from .registry import model_list, prompt_list
from .results import results_table
from .runs import run_counts, run_items, run_list, run_progress, run_report, run_waiting_for_worker

__all__ = [
    "model_list",
    "prompt_list",
    "results_table",
    "run_counts",
    "run_items",
    "run_list",
    "run_progress",
    "run_report",
    "run_waiting_for_worker",
]
