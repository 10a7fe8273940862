"""The Table 1 chart of an artwork pipeline run's report as a file for a paper (SVG, PDF).

Drawn from ``artwork_report``, the selector the report page reads: QA accuracy per condition,
in each question type x familiarity column, with its Wilson 95% interval and its n.
Researchers only, as the page (the view asks).
"""

from django.utils.translation import gettext as _

from core.figures import Bar, Chart, Group, Panel, UnknownFigure, chart_file

from ..models import ArtworkPipelineRun
from .report import CONDITIONS, FAMILIARITY, QUESTION_TYPES, artwork_report

ARTWORK_REPORT_FIGURES = ("table1",)


def artwork_report_figure(*, run: ArtworkPipelineRun, name: str, fmt: str) -> bytes:
    if name not in ARTWORK_REPORT_FIGURES:
        raise UnknownFigure(name)
    return chart_file(table1_chart(artwork_report(run=run)), fmt=fmt)


def table1_chart(report: dict) -> Chart:
    labels = {
        "no_description": _("No description"),
        "base": _("Base speaker"),
        "pragmatic": _("Pragmatic speaker"),
        "familiar": _("Familiar"),
        "unfamiliar": _("Unfamiliar"),
        "attuned": _("Culturally attuned"),
        "agnostic": _("Culturally agnostic"),
    }
    groups = []
    # Agnostic questions first, as in the paper (and on the page).
    for qtype in reversed(QUESTION_TYPES):
        for familiarity in FAMILIARITY:
            bars = []
            for series, condition in enumerate(CONDITIONS):
                cell = report["qa_accuracy"][condition][familiarity][qtype]
                low, high = cell["ci"] or (None, None)
                bars.append(Bar(value=cell["accuracy"], series=series, low=low, high=high, n=cell["n"]))
            groups.append(Group(label=f"{labels[qtype]} · {labels[familiarity]}", bars=bars))
    run = report["run"]
    caption = _(
        "QA accuracy of the simulated listener (%(listener)s) with its Wilson 95%% interval; n = answers in "
        "each cell (beside each bar), %(total)s in all. Speaker %(speaker)s, collection %(collection)s. A "
        "familiar listener belongs to the artwork's culture."
    ) % {
        "listener": run["listener"],
        "total": run["n_answers"],
        "speaker": run["speaker"],
        "collection": run["collection"],
    }
    panel = Panel(
        title="",
        value_label=_("QA accuracy (0–1)"),
        category_label=_("Question type · listener"),
        groups=groups,
        limits=(0.0, 1.0),
        value_format="{:.3f}",
    )
    return Chart(
        title=_("Table 1 · QA accuracy · artwork run #%(run)s") % {"run": run["id"]},
        caption=caption,
        panels=[panel],
        series=[labels[condition] for condition in CONDITIONS],
    )


__all__ = ["ARTWORK_REPORT_FIGURES", "artwork_report_figure", "table1_chart"]
