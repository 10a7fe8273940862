"""A round's charts as SVG or PDF files for a paper (core.figures): statistics, funnel, drift.

The pages' rule holds: researchers and adjudicators only, and not whoever annotates the
same open round (the blindness rule), on this channel as on the pages.
"""

from django.http import Http404
from django.views.decorators.http import require_GET

from core.decorators import role_required
from core.figures import UnknownFigure
from core.http import download, file_stem
from core.roles import ADJUDICATOR, RESEARCHER

from ..selectors import quality
from ..selectors.figures import round_figure, round_quality_figure
from ..selectors.lookups import round_or_404
from ..selectors.stats import round_stats_visible


@require_GET
@role_required(RESEARCHER, ADJUDICATOR)
def round_stats_figure(request, pk: int, name: str, fmt: str):
    round_ = round_or_404(request.user, pk, visible=round_stats_visible)
    try:
        body = round_figure(round=round_, name=name, fmt=fmt)
    except UnknownFigure:
        raise Http404 from None
    stem = file_stem(round_.name, fallback=f"round-{round_.pk}")
    return download(body, filename=f"{stem}-{name}.{fmt}", fmt=fmt)


@require_GET
@role_required(RESEARCHER, ADJUDICATOR)
def round_quality_figure_file(request, pk: int, name: str, fmt: str):
    round_ = round_or_404(request.user, pk, visible=quality.round_quality_visible)
    try:
        body = round_quality_figure(round=round_, name=name, fmt=fmt)
    except UnknownFigure:
        raise Http404 from None
    stem = file_stem(round_.name, fallback=f"round-{round_.pk}")
    return download(body, filename=f"{stem}-{name}.{fmt}", fmt=fmt)
