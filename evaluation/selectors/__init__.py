"""Reads of the evaluation app, one module per feature; the names callers use are re-exported here."""

from .prompts import prompt_list
from .results import results_table, taxonomy_by_code
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
)

__all__ = [
    "finished_generation_exists",
    "generation_runs",
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
    "taxonomy_by_code",
]
