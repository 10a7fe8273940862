"""The study results page's chart as an SVG or PDF file for a paper (core.figures).

Researchers only, as the results page; ``?include_test=1`` counts the test responses, as there.
"""

from django.http import Http404
from django.views.decorators.http import require_GET

from core.decorators import role_required
from core.figures import UnknownFigure
from core.http import download
from core.roles import RESEARCHER

from ..selectors.figures import study_figure
from ..selectors.lookups import study_or_404
from .results import flag


@require_GET
@role_required(RESEARCHER)
def study_figure_file(request, slug: str, name: str, fmt: str):
    study = study_or_404(slug)
    try:
        body = study_figure(study=study, name=name, fmt=fmt, include_test=flag(request, "include_test"))
    except UnknownFigure:
        raise Http404 from None
    return download(body, filename=f"{study.slug}-{name}.{fmt}", fmt=fmt)
