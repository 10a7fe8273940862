"""One look-up per entity for every page and API endpoint: what the reader may open, or a 404.

Something a reader may not see answers exactly like something that does not exist (the blindness
rule), so the permission filter belongs to the look-up, not to each caller. The 404's message is
what the API says (DRF turns an ``Http404`` into its detail); the HTML 404 page never shows it.
Imported directly (``from annotation.selectors.lookups import ...``): an API must never reach a view for it.
"""

from collections.abc import Callable

from django.core.exceptions import PermissionDenied
from django.http import Http404

from core.http import found_or_404

from ..models import AnnotationRound, Assignment, Dataset, DatasetVersion, ImportJob, RoundItem
from .adjudication import item_visible_get
from .corpus import dataset_get_by_id, import_job_get
from .rounds import version_get
from .workflow import annotated_round_get, assignment_get, round_get


def round_or_404(
    user,
    pk: int,
    *,
    annotated: bool = False,
    visible: Callable[..., bool] | None = None,
    denied: str = "",
) -> AnnotationRound:
    """A round ``user`` may read (``round_get``: annotators only the rounds they are in).

    ``annotated``: only a round ``user`` annotates in, with their item counts (the review pages
    and API); any other round does not exist for them. ``visible``: a check such as
    ``round_stats_visible`` whose False is a 403 (with ``denied`` as the API's detail): the round
    exists for them, its figures do not yet.
    """
    round_ = found_or_404(
        annotated_round_get(pk=pk, user=user) if annotated else round_get(pk=pk, user=user), "No such round."
    )
    if visible is not None and not visible(user=user, round=round_):
        raise PermissionDenied(*([denied] if denied else []))
    return round_


def assignment_or_404(user, pk: int, *, round_pk: int | None = None) -> Assignment:
    """One of ``user``'s own assignments (of round ``round_pk`` when given); anyone else's is a 404."""
    assignment = found_or_404(assignment_get(pk=pk, user=user), "No such assignment among yours.")
    if round_pk is not None and assignment.item.round_id != round_pk:
        raise Http404("No such assignment among yours.")
    return assignment


def version_or_404(pk: int) -> DatasetVersion:
    return found_or_404(version_get(pk=pk), "No such version.")


def dataset_or_404(pk: int) -> Dataset:
    return found_or_404(dataset_get_by_id(pk=pk), "No such dataset.")


def import_job_or_404(user, pk: int) -> ImportJob:
    """A job only its creator (or a superuser) sees: anyone else's reads as missing."""
    return found_or_404(import_job_get(pk=pk, user=user), "No such import job.")


def item_or_404(user, pk: int, *, round_pk: int | None = None) -> RoundItem:
    """An item for its history: researchers and adjudicators any item, annotators only theirs."""
    return found_or_404(item_visible_get(pk=pk, user=user, round_pk=round_pk), "No such item.")


__all__ = [
    "assignment_or_404",
    "dataset_or_404",
    "import_job_or_404",
    "item_or_404",
    "round_or_404",
    "version_or_404",
]
