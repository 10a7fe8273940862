"""The paper's Tables 3, 4 and 5 across runs, with a chart each and CSV downloads."""

from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.utils.translation import gettext, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from core.decorators import role_required
from core.http import download
from core.localization import localized_name
from core.roles import RESEARCHER

from .. import selectors
from ..forms import ResultsFilterForm
from ..selectors.exports import results_csv, results_row_value

# The judge scores 0-5; accuracy is a share.
SCALES = {"theme": 5.0, "trait": 5.0, "classification": 1.0}

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
    traits, themes = selectors.taxonomy_by_code()
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


def column_label(kind: str, key: str, themes: dict, traits: dict) -> str:
    if key == "average":
        return gettext("Average")
    if kind == "classification":
        return gettext("Topic") if key == "topic" else gettext("Traits")
    entry = (themes if kind == "theme" else traits).get(key)
    return localized_name(entry) or key


def results_display(table: dict, themes: dict, traits: dict) -> dict:
    """Header labels, cells flagged best (bold), and the same figures as chart groups, one per column."""
    kind, keys = table["table"], table["columns"]
    scale = SCALES[kind]
    columns = [{"key": k, "label": column_label(kind, k, themes, traits)} for k in keys]
    rows = []
    for index, row in enumerate(table["rows"]):
        label = row["model"] if kind == "classification" else f"{row['model']} · {row['prompt']}"
        cells = []
        for key in keys:
            value = results_row_value(table, row, key)
            best = table["best"].get(key)
            cells.append({"key": key, "value": value, "best": value is not None and best is not None and value == best})
        rows.append({"label": label, "row": row, "series": index % 8, "cells": cells})
    groups = [
        {
            "label": column["label"],
            "bars": [
                {
                    "label": row["label"],
                    "series": row["series"],
                    "value": cell["value"],
                    "best": cell["best"],
                    "percent": round(100 * cell["value"] / scale, 1) if cell["value"] is not None else 0,
                }
                for row in rows
                for cell in row["cells"]
                if cell["key"] == column["key"]
            ],
        }
        for column in columns
    ]
    return {
        "kind": kind,
        "columns": columns,
        "rows": rows,
        "groups": groups,
        "scale": scale,
        "percent": kind == "classification",
    }
