"""One look-up per entity for the study's researcher pages, its API and the Prolific pages: what
exists, or a 404.

Every study is open to every researcher (the views' and APIs' role check), so a look-up filters by
nothing but the slug, and a term or an artwork only by the study it must belong to. The 404's
message is what the API says (DRF turns an ``Http404`` into its detail); the HTML 404 page never
shows it. Imported directly (``from study.selectors.lookups import ...``): an API must never reach
a view for it.
"""

from django.utils.translation import gettext as _

from core.http import found_or_404

from ..models import Artwork, Study, Term
from .prep import study_term_find
from .studies import study_artwork_find_by_pk, study_find


def study_or_404(slug: str, *, progress: bool = False) -> Study:
    """The study of a slug (``study_find``; with ``progress``, its creator and per-group progress)."""
    return found_or_404(study_find(slug=slug, progress=progress), _("No such study."))


def study_term_or_404(*, study: Study, pk) -> Term:
    """A term of this study by its id as posted."""
    return found_or_404(study_term_find(study=study, pk=pk), _("No such term in this study."))


def study_artwork_or_404(*, study: Study, pk) -> Artwork:
    """An artwork of this study by its id as posted."""
    return found_or_404(study_artwork_find_by_pk(study=study, pk=pk), _("No such artwork in this study."))


__all__ = ["study_artwork_or_404", "study_or_404", "study_term_or_404"]
