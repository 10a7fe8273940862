"""The Table 1 chart of an artwork run's report as an SVG or PDF file for a paper (core.figures).

Researchers only, as the report page.
"""

from django.http import Http404
from django.views.decorators.http import require_GET

from core.decorators import role_required
from core.figures import UnknownFigure
from core.http import download
from core.roles import RESEARCHER

from ..selectors.figures import artwork_report_figure
from ..selectors.pipeline import artwork_run_get


@require_GET
@role_required(RESEARCHER)
def artwork_report_figure_file(request, pk: int, name: str, fmt: str):
    run = artwork_run_get(pk=pk)
    if run is None:
        raise Http404
    try:
        body = artwork_report_figure(run=run, name=name, fmt=fmt)
    except UnknownFigure:
        raise Http404 from None
    return download(body, filename=f"artwork-run-{run.pk}-{name}.{fmt}", fmt=fmt)
