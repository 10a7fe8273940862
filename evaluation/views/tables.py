"""Reports and the paper's Tables 3-5 shaped for pages and files (CSV keeps the codes, pages show names)."""

from django.utils.translation import gettext

from annotation.models import Theme, Trait
from core.http import csv_text
from core.localization import localized_name

RUN_COUNT_KEYS = ("n_items", "n_done", "n_failed", "n_unscored", "n_cached")
# The judge scores 0-5; accuracy is a share.
SCALES = {"theme": 5.0, "trait": 5.0, "classification": 1.0}


def taxonomy() -> tuple[dict, dict]:
    return {t.code: t for t in Theme.objects.all()}, {t.code: t for t in Trait.objects.all()}


def report_csv(report: dict) -> str:
    """One row per figure: section, code, value (a tidy table, readable by pandas)."""
    rows = [
        ["run", key, report["run"].get(key)] for key in ("id", "kind", "model", "strategy", "status", *RUN_COUNT_KEYS)
    ]
    if "average" in report:
        rows.append(["average", "", report["average"]])
        rows += [["theme", code, value] for code, value in report["by_theme"].items()]
        rows += [["trait", code, value] for code, value in report["by_trait"].items()]
    if "accuracy" in report:
        rows.append(["accuracy", report.get("task", ""), report["accuracy"]])
    return csv_text(["section", "code", "value"], rows)


def report_sections(report: dict) -> dict:
    """A judge report's scores by theme and by trait, with the taxonomy entries for their names."""
    if "by_theme" not in report:
        return {}
    themes, traits = taxonomy()
    return {
        "by_theme": [{"code": c, "entry": themes.get(c), "value": v} for c, v in report["by_theme"].items()],
        "by_trait": [{"code": c, "entry": traits.get(c), "value": v} for c, v in report["by_trait"].items()],
    }


def _row_value(table: dict, row: dict, key: str):
    return row.get("average") if key == "average" else row["values"].get(key)


def results_csv(table: dict) -> str:
    keys = table["columns"]
    if table["table"] == "classification":
        return csv_text(
            ["model", *keys], [[row["model"], *(row["values"].get(k) for k in keys)] for row in table["rows"]]
        )
    return csv_text(
        ["model", "prompt", "judge_run", *keys],
        [
            [row["model"], row["prompt"], row["judge_run"], *(_row_value(table, row, k) for k in keys)]
            for row in table["rows"]
        ],
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
            value = _row_value(table, row, key)
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
