"""Reads of the evaluation app, one module per feature; the names callers use are re-exported here."""

from .registry import api_key_state, model_choices, model_get, model_list, prompt_list
from .results import results_table, taxonomy, taxonomy_by_code
from .runs import (
    finished_generation_exists,
    generation_runs,
    run_counts,
    run_dataset_choices,
    run_item_details,
    run_item_neighbours,
    run_items,
    run_list,
    run_progress,
    run_report,
    run_version_choices,
    run_waiting_for_worker,
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
    "run_item_neighbours",
    "run_items",
    "run_list",
    "run_progress",
    "run_report",
    "run_version_choices",
    "run_waiting_for_worker",
    "taxonomy",
    "taxonomy_by_code",
]
