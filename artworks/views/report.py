"""The Table 1 report page of an artwork pipeline run, its downloads, and the study package export.

Researchers only: the report names the models and every simulated answer behind it.
"""

import tempfile
from pathlib import Path

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from core.decorators import role_required
from core.http import REPORT_FORMATS, download, json_text
from core.roles import RESEARCHER

from ..selectors.lookups import artwork_run_or_404
from ..selectors.report import (
    CONDITIONS,
    FAMILIARITY,
    QUESTION_TYPES,
    artwork_report,
    artwork_report_csv,
    pragmatic_mark,
)
from ..services.export import ArtworkExportError, artwork_study_package, package_slug


def _labels() -> dict:
    # Evaluated per request, so the labels follow the active language.
    return {
        "no_description": _("No description"),
        "base": _("Base speaker"),
        "pragmatic": _("Pragmatic speaker"),
        "familiar": _("Familiar"),
        "unfamiliar": _("Unfamiliar"),
        "attuned": _("Culturally attuned"),
        "agnostic": _("Culturally agnostic"),
        "pragmatic_vs_base": _("Pragmatic speaker against base speaker"),
        "pragmatic_vs_no_description": _("Pragmatic speaker against no description"),
        "base_vs_no_description": _("Base speaker against no description"),
    }


def _marks(report: dict, condition: str, familiarity: str, qtype: str) -> list[dict]:
    """† the pragmatic speaker significantly better than the base one, ‡ significantly worse; * the
    speaker differs from no description, its direction in the title (Welch, p < 0.05)."""
    tests = report["t_test"][familiarity][qtype]
    marks = []
    if condition == "pragmatic" and tests["pragmatic_vs_base"]["significant"]:
        test = tests["pragmatic_vs_base"]
        better = test["direction"] == "better"
        marks.append(
            {
                "symbol": pragmatic_mark(test),
                "direction": test["direction"],
                "label": _("better than the base speaker") if better else _("worse than the base speaker"),
                "test": test,
            }
        )
    if condition in ("base", "pragmatic") and tests[f"{condition}_vs_no_description"]["significant"]:
        test = tests[f"{condition}_vs_no_description"]
        better = test["direction"] == "better"
        marks.append(
            {
                "symbol": "*",
                "direction": test["direction"],
                "label": _("better than no description") if better else _("worse than no description"),
                "test": test,
            }
        )
    return marks


def table_rows(report: dict) -> tuple[list[dict], list[dict]]:
    """Table 1's rows (conditions) and columns (question type x familiarity, agnostic first as in the paper)."""
    labels = _labels()
    columns = [
        {"type": qtype, "familiarity": familiarity, "label": f"{labels[qtype]} · {labels[familiarity]}"}
        for qtype in reversed(QUESTION_TYPES)
        for familiarity in FAMILIARITY
    ]
    rows = []
    for series, condition in enumerate(CONDITIONS):
        cells = []
        for column in columns:
            cell = report["qa_accuracy"][condition][column["familiarity"]][column["type"]]
            cells.append({**cell, **column, "marks": _marks(report, condition, column["familiarity"], column["type"])})
        rows.append({"condition": condition, "label": labels[condition], "series": series, "cells": cells})
    return rows, columns


def t_test_rows(report: dict) -> list[dict]:
    """One row per Welch test, each part by its label (the JSON keeps the codes)."""
    labels = _labels()
    return [
        {
            "familiarity": labels[familiarity],
            "type": labels[qtype],
            "comparison": labels.get(name, name),
            "test": test,
        }
        for familiarity, by_type in report["t_test"].items()
        for qtype, comparisons in by_type.items()
        for name, test in comparisons.items()
    ]


def chart_section(rows: list[dict], columns: list[dict]) -> dict:
    """The shape evaluation/_chart.html draws: one group per column, one bar per condition."""
    groups = []
    for index, column in enumerate(columns):
        bars = []
        for row in rows:
            value = row["cells"][index]["accuracy"]
            bars.append(
                {
                    "label": row["label"],
                    "value": value,
                    "percent": 0.0 if value is None else round(100 * value, 1),
                    "series": row["series"],
                    "best": False,
                }
            )
        groups.append({"label": column["label"], "bars": bars})
    return {
        "title": _("QA accuracy"),
        "percent": True,
        "groups": groups,
        "rows": [{"series": row["series"], "label": row["label"]} for row in rows],
    }


@require_GET
@role_required(RESEARCHER)
def artwork_report_page(request, pk: int):
    run = artwork_run_or_404(pk)
    fmt = request.GET.get("format", "")
    if fmt and fmt not in REPORT_FORMATS:
        return HttpResponseBadRequest(
            _("Unknown download format “%(format)s”; use ?format=json or ?format=csv.") % {"format": fmt},
            content_type="text/plain; charset=utf-8",
        )
    report = artwork_report(run=run)
    if fmt == "json":
        return download(json_text(report), filename=f"artwork-run-{run.pk}-report.json", fmt="json")
    if fmt == "csv":
        return download(artwork_report_csv(report), filename=f"artwork-run-{run.pk}-report.csv", fmt="csv")
    rows, columns = table_rows(report)
    context = {
        "run": run,
        "report": report,
        "rows": rows,
        "columns": columns,
        "section": chart_section(rows, columns),
        "t_test_rows": t_test_rows(report),
        "reproducibility": sorted((run.reproducibility or {}).items()),
        "by_group": [
            {
                "group": group,
                "rows": [
                    {
                        "label": _labels()[condition],
                        "cells": [conditions[condition][q] for q in reversed(QUESTION_TYPES)],
                    }
                    for condition in CONDITIONS
                ],
            }
            for group, conditions in report["by_group"].items()
        ],
    }
    return render(request, "artworks/artwork_report.html", context)


@require_POST
@role_required(RESEARCHER)
def artwork_export(request, pk: int):
    """The run's study package as a .zip download, ready for Studies → Import a study package."""
    run = artwork_run_or_404(pk)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / f"{package_slug(run)}.zip"
        try:
            path = artwork_study_package(run=run, out=target)
        except ArtworkExportError as exc:
            messages.error(request, " ".join(exc.messages))
            return redirect("artworks:report", pk=run.pk)
        body = path.read_bytes()
    response = download(body, filename=target.name, fmt="zip")
    if path.warnings:
        # The download cannot show them, so they are in a header too and shown on the next page.
        response["X-Export-Warnings"] = str(len(path.warnings))
        for warning in path.warnings:
            messages.warning(request, warning)
    return response
