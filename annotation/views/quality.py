"""A round's "Quality" tab: control items, drift windows, speed and theme shift per annotator, and the
researcher's recalibration tools (README "Annotator quality").

The figures reveal how every annotator labelled, so the tab follows the statistics page's rule:
researchers and adjudicators, never someone who annotates the round while it is open.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_GET, require_POST

from core import figures
from core.decorators import role_required
from core.http import add_service_errors
from core.roles import ADJUDICATOR, RESEARCHER, has_role

from .. import agreement, selectors, services
from ..forms.quality import ControlForm, QualitySettingsForm, RecalibrationForm
from ..selectors import quality
from ..selectors.lookups import round_or_404

FAST_ITEMS_SHOWN = 200
CHART_WIDTH, CHART_HEIGHT, CHART_PAD = 640, 220, 36
# Why a chi-square is missing, for people (the JSON keeps the codes).
SHIFT_REASONS = {
    agreement.TOO_FEW_ITEMS: gettext_lazy("too few answers"),
    agreement.SINGLE_CATEGORY: gettext_lazy("a single theme in both halves"),
}


def _thirds(*corners) -> tuple:
    return tuple((a / 3, b / 3) for a, b in corners)


# The corners of each marker shape of core.figures.MARKERS (a circle aside), for a marker of radius 1.
MARKER_SHAPES = {
    "s": ((-1, -1), (1, -1), (1, 1), (-1, 1)),
    "D": ((0, -1.2), (1.2, 0), (0, 1.2), (-1.2, 0)),
    "^": ((0, -1.15), (1.1, 0.8), (-1.1, 0.8)),
    "v": ((0, 1.15), (1.1, -0.8), (-1.1, -0.8)),
    "P": _thirds(
        (-1, -3), (1, -3), (1, -1), (3, -1), (3, 1), (1, 1), (1, 3), (-1, 3), (-1, 1), (-3, 1), (-3, -1), (-1, -1)
    ),
    "X": _thirds(
        (-2, -3), (0, -1), (2, -3), (3, -2), (1, 0), (3, 2), (2, 3), (0, 1), (-2, 3), (-3, 2), (-1, 0), (-3, -2)
    ),
    "h": ((0, -1.1), (0.95, -0.55), (0.95, 0.55), (0, 1.1), (-0.95, 0.55), (-0.95, -0.55)),
}


def marker_path(series: int, x: float, y: float, r: float = 3.5) -> str:
    """The SVG path of series ``series``'s marker at (x, y): the shape of ``core.figures.marker``, so a
    series has the same colour and shape on the page and in the file for the paper."""
    corners = MARKER_SHAPES.get(figures.marker(series))
    if corners is None:  # a circle
        return f"M{x - r:.1f},{y:.1f}a{r},{r} 0 1,0 {2 * r},0a{r},{r} 0 1,0 {-2 * r},0Z"
    return "M" + "L".join(f"{x + dx * r:.1f},{y + dy * r:.1f}" for dx, dy in corners) + "Z"


def line_chart(series: list[dict], *, threshold: float | None = None, minimum: int = 0) -> dict:
    """A server-drawn SVG line chart of kappas per window: ``series`` is [{label, values: [float|None],
    ns: [int]}]; a window of fewer than ``minimum`` items (``ns``) is drawn hollow.

    Coordinates are computed here (the CSP allows no script or style to draw them); a missing value
    breaks the line. Each series has its colour and marker shape, and the series are set a few pixels
    apart at each window (a dodge), so two annotators with the same kappas stay visible.
    """
    values = [v for s in series for v in s["values"] if v is not None]
    low = min([0.0, *values, threshold if threshold is not None else 0.0])
    low = max(-1.0, (int(low * 5) - 1) / 5) if low < 0 else 0.0
    high = 1.0
    n = max((len(s["values"]) for s in series), default=0)
    width, height, pad = CHART_WIDTH, CHART_HEIGHT, CHART_PAD
    step = (width - 2 * pad) / (n - 1) if n > 1 else width - 2 * pad
    dodge = min(7.0, 0.6 * step / max(len(series), 1))

    def x(i: int, s: int = 0) -> float:
        centre = pad + (width - 2 * pad) * (i / (n - 1) if n > 1 else 0.5)
        return centre + (s - (len(series) - 1) / 2) * dodge

    def y(v: float) -> float:
        return pad / 2 + (height - pad) * (high - v) / (high - low)

    lines = []
    for index, entry in enumerate(series):
        segments, current = [], []
        for i, value in enumerate(entry["values"]):
            if value is None:
                if current:
                    segments.append(current)
                current = []
            else:
                current.append(f"{x(i, index):.1f},{y(value):.1f}")
        if current:
            segments.append(current)
        ns = entry.get("ns") or [None] * len(entry["values"])
        lines.append(
            {
                "label": entry["label"],
                "series": index % len(figures.SERIES_COLOURS),
                "swatch": marker_path(index, 7, 7, 4),
                "segments": [" ".join(points) for points in segments],
                "dots": [
                    {
                        "path": marker_path(index, x(i, index), y(v)),
                        "value": v,
                        "window": i + 1,
                        "n": count,
                        "small": count is not None and count < minimum,
                    }
                    for i, (v, count) in enumerate(zip(entry["values"], ns, strict=True))
                    if v is not None
                ],
            }
        )
    ticks = [{"value": v, "y": f"{y(v):.1f}"} for v in (low, 0.0, 0.5, 1.0) if low <= v <= high]
    return {
        "width": width,
        "height": height,
        "left": pad,
        "right": width - pad,
        "bottom": height - pad / 2,
        "lines": lines,
        "ticks": list({t["value"]: t for t in ticks}.values()),
        "threshold": {"value": threshold, "y": f"{y(threshold):.1f}"} if threshold is not None else None,
        "n_windows": n,
        "minimum": minimum,
        "any_small": any(dot["small"] for line in lines for dot in line["dots"]),
        "empty": not values,
    }


def _context(request, round_, **forms) -> dict:
    shown = quality.round_quality_shown(
        round=round_, refresh=lambda: services.round_summary_schedule(round_id=round_.pk)
    )
    report = shown.value
    controls = quality.round_controls(round=round_)
    traits = {t.code: t for t in selectors.trait_list()}
    is_researcher = has_role(request.user, RESEARCHER)
    annotators = []
    for name, summary in report["annotators"].items():
        detail = report["annotator_details"][name]
        shift = detail["theme_shift"]
        annotators.append(
            {
                "name": name,
                "summary": summary,
                "detail": detail,
                "control_traits": [
                    {"entry": traits.get(code), "code": code, "value": value}
                    for code, value in detail["control_traits"].items()
                ],
                "shift_reason": SHIFT_REASONS.get(shift["reason"], ""),
            }
        )
    minimum = report["settings"]["min_window_items"]
    pair_chart = line_chart(
        [
            {
                "label": f"{p['a']} · {p['b']}",
                "values": [w["theme_kappa"] for w in p["windows"]],
                "ns": [w["n"] for w in p["windows"]],
            }
            for p in report["pairs"]
        ],
        threshold=report["settings"]["threshold"],
        minimum=minimum,
    )
    final_chart = line_chart(
        [
            {
                "label": name,
                "values": [w["theme_kappa"] for w in summary["windows"]],
                "ns": [w["n"] for w in summary["windows"]],
            }
            for name, summary in report["annotators"].items()
        ],
        threshold=report["settings"]["threshold"],
        minimum=minimum,
    )
    context = {
        "round": round_,
        "report": report,
        "shown": shown,
        "annotators": annotators,
        # Before the first answer every table is zeros and dashes: the tab says what comes instead.
        "answered": any(row["summary"]["n"] or row["detail"]["n_controls"] for row in annotators),
        "paused_names": quality.round_paused_usernames(round=round_),
        "pair_chart": pair_chart,
        "final_chart": final_chart,
        "trait_entries": [traits.get(code) for code in report["categories"]["traits"]],
        "fast_items": report["fast_items"][:FAST_ITEMS_SHOWN],
        "fast_more": max(len(report["fast_items"]) - FAST_ITEMS_SHOWN, 0),
        "is_researcher": is_researcher,
        "controls": controls,
    }
    if is_researcher:
        context |= {
            "notes": quality.recalibration_notes(round=round_),
            "settings_form": forms.get("settings_form")
            or QualitySettingsForm(initial=QualitySettingsForm.initial_for(round_)),
            "control_form": forms.get("control_form") or ControlForm(),
            "recalibration_form": forms.get("recalibration_form")
            or RecalibrationForm(annotators=quality.round_annotator_choices(round=round_), controls=controls),
        }
    return context


def _render(request, round_, status: int = 200, **forms):
    return render(request, "annotation/round_quality.html", _context(request, round_, **forms), status=status)


@require_GET
@role_required(RESEARCHER, ADJUDICATOR)
def round_quality(request, pk: int):
    return _render(request, round_or_404(request.user, pk, visible=quality.round_quality_visible))


@require_POST
@role_required(RESEARCHER)
def quality_settings(request, pk: int):
    round_ = round_or_404(request.user, pk, visible=quality.round_quality_visible)
    form = QualitySettingsForm(request.POST)
    if form.is_valid():
        try:
            services.round_quality_update(round=round_, user=request.user, **form.service_kwargs())
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(request, _("Quality settings saved."))
            return redirect("annotation:round_quality", pk=round_.pk)
    return _render(request, round_, status=400, settings_form=form)


@require_POST
@role_required(RESEARCHER)
def controls_add(request, pk: int):
    round_ = round_or_404(request.user, pk, visible=quality.round_quality_visible)
    form = ControlForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            if data["source"] == "version":
                added = services.control_items_from_version(
                    round=round_, version=data["version"], user=request.user, count=data["count"]
                )
            else:
                added = [
                    services.control_item_create(
                        round=round_,
                        user=request.user,
                        expression=data["expression"],
                        traits=data["traits"],
                        theme=data["theme"],
                    )
                ]
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(
                request,
                ngettext("%(n)s control item added.", "%(n)s control items added.", len(added)) % {"n": len(added)},
            )
            return redirect("annotation:round_quality", pk=round_.pk)
    return _render(request, round_, status=400, control_form=form)


@require_POST
@role_required(RESEARCHER)
def recalibrate(request, pk: int):
    round_ = round_or_404(request.user, pk, visible=quality.round_quality_visible)
    form = RecalibrationForm(
        request.POST,
        annotators=quality.round_annotator_choices(round=round_),
        controls=quality.round_controls(round=round_),
    )
    if form.is_valid():
        data = form.cleaned_data
        annotator, action = data["annotator"], data["action"]
        name = annotator.get_username()
        try:
            if action == "pause":
                services.annotator_queue_pause(round=round_, annotator=annotator, user=request.user)
                message = _("%(user)s's queue is paused.") % {"user": name}
            elif action == "resume":
                services.annotator_queue_resume(round=round_, annotator=annotator, user=request.user)
                message = _("%(user)s's queue is resumed.") % {"user": name}
            elif action == "note":
                services.recalibration_note_create(
                    round=round_, annotator=annotator, user=request.user, note=data["note"], examples=data["examples"]
                )
                message = _("The note will be shown to %(user)s on their next item.") % {"user": name}
            else:
                n = services.assignments_review_again(
                    round=round_, annotator=annotator, user=request.user, since=data["since"]
                )
                message = ngettext(
                    "%(n)s answer of %(user)s went back for another review.",
                    "%(n)s answers of %(user)s went back for another review.",
                    n,
                ) % {"n": n, "user": name}
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(request, message)
            return redirect("annotation:round_quality", pk=round_.pk)
    return _render(request, round_, status=400, recalibration_form=form)
