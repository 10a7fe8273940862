"""The results page of a study, its JSON download and the long-format CSV export (researchers only).

Raw exports name excluded sessions and, on request, the raw Prolific ids: personal data,
so every route here is behind the Researcher role.
"""

from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from core import figures
from core.decorators import role_required
from core.http import download, json_text, streamed_download, vary_on_htmx
from core.roles import RESEARCHER

from ..models import Culture, Study
from ..selectors import results as selectors
from ..selectors.lookups import study_or_404

TRUE_VALUES = {"1", "true", "yes", "on"}
# The chart's scale: bars from 0 to 1 over this many SVG units.
CHART_WIDTH = 300
# The colours of the figure files and of vivid.css's eval-series-N classes, as SVG fills need them.
SERIES_COLOURS = figures.SERIES_COLOURS
BAR_STEP = 22
LABEL_WIDTH = 150
VALUE_WIDTH = 150


def flag(request, name: str) -> bool:
    return request.GET.get(name, "").strip().lower() in TRUE_VALUES


def _percent(value) -> float:
    return 0.0 if value is None else round(100 * max(0.0, min(1.0, value)), 2)


def _bar(label: str, share: dict, rate_key: str) -> dict:
    rate = share[rate_key]
    low, high = share["ci"]
    return {
        "label": label,
        "rate": rate,
        "n": share["n"],
        "low": low,
        "high": high,
        "x": _percent(rate) * CHART_WIDTH / 100,
        "low_x": _percent(low) * CHART_WIDTH / 100,
        "high_x": _percent(high) * CHART_WIDTH / 100,
    }


def _criterion_labels() -> dict:
    return {
        "comprehension": _("Comprehension"),
        "knowledge_gain": _("Knowledge gain"),
        "prior_knowledge": _("Prior knowledge"),
    }


def _group_label(group: str) -> str:
    return str(dict(Culture.choices).get(group, group))


def _figure(results: dict) -> list[dict]:
    """Figure 3 as rows of bars: the pragmatic rate per criterion (all groups, then each group)."""
    labels = _criterion_labels()
    rows = []
    for criterion in selectors.CRITERIA:
        bars = [_bar(_("All participants"), results["preferences"][criterion], "pragmatic_rate")]
        for group, rates in results["preferences"]["by_group"].items():
            bars.append(_bar(_group_label(group), rates[criterion], "pragmatic_rate"))
        for position, bar in enumerate(bars):
            bar["y"] = position * BAR_STEP
            bar["colour"] = SERIES_COLOURS[position % len(SERIES_COLOURS)]
        rows.append({"key": criterion, "label": labels[criterion], "bars": bars, "height": len(bars) * BAR_STEP})
    return rows


def _qa_rows(results: dict) -> list[dict]:
    """Table 3: one row for all answers, one per speaker of the description shown, one per group."""
    qa = results["qa_accuracy"]
    rows = [{"key": "all", "label": _("All descriptions"), "table": {k: qa[k] for k in ("familiar", "unfamiliar")}}]
    speaker_labels = {"base": _("Base speaker"), "pragmatic": _("Pragmatic speaker")}
    for speaker, table in qa["by_speaker"].items():
        rows.append({"key": speaker, "label": speaker_labels.get(speaker, speaker), "table": table})
    for group, table in qa["by_group"].items():
        label = _("%(group)s participants") % {"group": _group_label(group)}
        rows.append({"key": f"group-{group}", "label": label, "table": table})
    return rows


def _context(study: Study, *, include_test: bool) -> dict:
    results = selectors.study_results(study=study, include_test=include_test)
    labels = _criterion_labels()
    return {
        "study": study,
        "results": results,
        "include_test": include_test,
        "counts": [("all", _("All participants"), results["participants"])]
        + [(group, _group_label(group), counts) for group, counts in results["participants"]["by_group"].items()],
        "figure": _figure(results),
        "chart_width": CHART_WIDTH,
        "label_width": LABEL_WIDTH,
        "svg_width": LABEL_WIDTH + CHART_WIDTH + VALUE_WIDTH,
        "half_x": CHART_WIDTH / 2,
        "position": _bar(_("Left side"), {**results["position_bias"]}, "left_rate"),
        "qa_rows": _qa_rows(results),
        "kendall_rows": [
            {"key": key, "label": labels.get(key, _("QA accuracy gain")), **results["kendall"][key]}
            for key in [*selectors.CRITERIA, "qa_gain"]
        ],
    }


@require_GET
@role_required(RESEARCHER)
@vary_on_htmx
def study_results(request, slug: str):
    study = study_or_404(slug)
    include_test = flag(request, "include_test")
    fmt = request.GET.get("format", "")
    if fmt and fmt != "json":
        return HttpResponseBadRequest(
            _("Unknown download format “%(format)s”; use ?format=json, or the CSV export.") % {"format": fmt},
            content_type="text/plain; charset=utf-8",
        )
    if fmt == "json":
        results = selectors.study_results(study=study, include_test=include_test)
        return download(json_text(results), filename=f"{study.slug}-results.json", fmt="json")
    context = _context(study, include_test=include_test)
    # The "include test responses" toggle swaps only the figures.
    fragment = request.headers.get("HX-Request") == "true"
    return render(request, "study/_results_body.html" if fragment else "study/study_results.html", context)


@require_GET
@role_required(RESEARCHER)
def study_export(request, slug: str):
    study = study_or_404(slug)
    chunks = selectors.study_export_chunks(
        study=study, include_test=flag(request, "include_test"), raw_pid=flag(request, "raw_pid")
    )
    return streamed_download(chunks, filename=f"{study.slug}-responses.csv", fmt="csv")
