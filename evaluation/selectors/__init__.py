"""Reads of the evaluation app, one module per feature; the names callers use are re-exported here."""

from llm.selectors import api_key_state, model_choices, model_get, model_list

from .prompts import prompt_list
from .results import results_table, taxonomy
from .runs import (
    finished_generation_exists,
    generation_runs,
    run_counts,
    run_dataset_choices,
    run_item_details,
    run_item_neighbours,
    run_item_or_404,
    run_items,
    run_list,
    run_or_404,
    run_progress,
    run_report,
    run_version_choices,
)

__all__ = [
    "api_key_state",
    "finished_generation_exists",
    "generation_runs",
    "model_choices",
    "model_get",
    "model_list",
    "prompt_list",
    "results_table",
    "run_counts",
    "run_dataset_choices",
    "run_item_details",
    "run_item_or_404",
    "run_item_neighbours",
    "run_items",
    "run_list",
    "run_or_404",
    "run_progress",
    "run_report",
    "run_version_choices",
    "taxonomy",
]
