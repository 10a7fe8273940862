"""The paper's Tables 3, 4 and 5 across runs, with a chart each and CSV downloads."""

from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from core.decorators import role_required
from core.http import download
from core.roles import RESEARCHER

from .. import selectors
from ..forms import ResultsFilterForm
from .tables import results_csv, results_display, taxonomy

TABLES = (
    (
        "theme",
        gettext_lazy("Table 3 · Mean judge score by theme"),
        gettext_lazy(
            "Judge score 0–5 of each generation run's explanations, by the theme of the expression; the average is over every scored item."
        ),
    ),
    (
        "trait",
        gettext_lazy("Table 4 · Mean judge score by trait"),
        gettext_lazy("Judge score 0–5 by complexity trait; an expression with several traits counts for each."),
    ),
    (
        "classification",
        gettext_lazy("Table 5 · Classification accuracy"),
        gettext_lazy("Exact-match accuracy of the 3-shot topic and trait classification."),
    ),
)


def results_tables(*, judge_model=None, strategy: str = "aspect") -> dict:
    return {
        key: selectors.results_table(table=key, judge_model=judge_model, strategy=strategy)
        for key, _title, _note in TABLES
    }


@require_GET
@role_required(RESEARCHER)
def results(request):
    form = ResultsFilterForm(request.GET or None)
    data = form.cleaned_data if form.is_valid() else {"judge_model": None, "strategy": "aspect"}
    fmt, which = request.GET.get("format", ""), request.GET.get("table", "")
    if fmt:
        if fmt != "csv" or which not in dict((k, t) for k, t, _n in TABLES):
            return HttpResponseBadRequest(
                _("Download one table as CSV: ?format=csv&table=theme, trait or classification."),
                content_type="text/plain; charset=utf-8",
            )
        table = selectors.results_table(table=which, judge_model=data["judge_model"], strategy=data["strategy"])
        return download(results_csv(table), filename=f"vivid-results-{which}.csv", fmt="csv")
    themes, traits = taxonomy()
    tables = results_tables(judge_model=data["judge_model"], strategy=data["strategy"])
    sections = [
        {"key": key, "title": title, "note": note, **results_display(tables[key], themes, traits)}
        for key, title, note in TABLES
    ]
    query = request.GET.copy()
    query.pop("format", None)
    query.pop("table", None)
    return render(
        request,
        "evaluation/results.html",
        {
            "form": form,
            "sections": sections,
            "strategy": data["strategy"],
            "judge_model": data["judge_model"],
            "query": query.urlencode(),
        },
    )
