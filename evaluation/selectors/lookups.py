"""One look-up per entity for the run, report, bias and scoring pages and their API: what the reader may open, or a 404.

A rater's look-ups read ``rater=user`` only, so another rater's task or rating answers exactly like one
that does not exist. The 404's message is what the API says (DRF turns an ``Http404`` into its detail);
the HTML 404 page never shows it. Imported directly (``from evaluation.selectors.lookups import ...``).
"""

from core.http import found_or_404

from ..models import HumanRating, Run, RunItem, RunKind, ScoringTask
from .bias import judge_runs_for_bias
from .runs import run_item_details, run_list
from .scoring import rater_rating, rater_task, task_list


def run_or_404(pk: int) -> Run:
    """A run of any kind with what its pages and API name (model, prompt, dataset, version, who started it)."""
    return found_or_404(run_list().select_related("version", "created_by").filter(pk=pk).first(), "No such run.")


def run_item_or_404(*, run: Run, pk: int) -> RunItem:
    """One item of ``run`` with what its page shows; an item of another run does not exist here."""
    return found_or_404(run_item_details(run=run).filter(pk=pk).first(), "No such item.")


def generation_run_or_404(pk: int) -> Run:
    return found_or_404(run_list(kind=RunKind.GENERATION).filter(pk=pk).first(), "No such generation run.")


def judge_run_or_404(pk: int) -> Run:
    """A judge run with what its bias diagnostics read (its model, prompt and source runs' models)."""
    return found_or_404(judge_runs_for_bias().filter(pk=pk).first(), "No such judge run.")


def scoring_task_or_404(pk: int, *, rater=None) -> ScoringTask:
    """Any scoring task (the researchers' pages), or with ``rater`` only one of the tasks that user rates."""
    if rater is None:
        return found_or_404(task_list().filter(pk=pk).first(), "No such scoring task.")
    return found_or_404(rater_task(user=rater, pk=pk), "No such scoring task among yours.")


def rating_or_404(user, pk: int, *, task_pk: int | None = None) -> HumanRating:
    """One of ``user``'s own ratings (of task ``task_pk`` when given); anyone else's does not exist for them."""
    return found_or_404(rater_rating(user=user, pk=pk, task_pk=task_pk), "No such rating among yours.")


__all__ = [
    "generation_run_or_404",
    "judge_run_or_404",
    "rating_or_404",
    "run_item_or_404",
    "run_or_404",
    "scoring_task_or_404",
]
