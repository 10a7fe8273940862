"""The evaluation pages' charts as SVG or PDF files for a paper (core.figures): Tables 3-5 and Table 1.

Researchers only, as the pages; the results figures take the page's filters (judge model, strategy).
"""

from django.http import Http404
from django.views.decorators.http import require_GET

from core.decorators import role_required
from core.figures import UnknownFigure
from core.http import download
from core.roles import RESEARCHER

from ..forms import ResultsFilterForm
from ..selectors.figures import human_report_figure, results_figure
from ..selectors.lookups import generation_run_or_404


@require_GET
@role_required(RESEARCHER)
def results_figure_file(request, name: str, fmt: str):
    form = ResultsFilterForm(request.GET or None)
    data = form.cleaned_data if form.is_valid() else {"judge_model": None, "strategy": "aspect"}
    try:
        body = results_figure(name=name, fmt=fmt, judge_model=data["judge_model"], strategy=data["strategy"])
    except UnknownFigure:
        raise Http404 from None
    return download(body, filename=f"vivid-results-{name}.{fmt}", fmt=fmt)


@require_GET
@role_required(RESEARCHER)
def human_report_figure_file(request, pk: int, name: str, fmt: str):
    run = generation_run_or_404(pk)
    try:
        body = human_report_figure(run=run, name=name, fmt=fmt)
    except UnknownFigure:
        raise Http404 from None
    return download(body, filename=f"run-{run.pk}-human-report-{name}.{fmt}", fmt=fmt)
