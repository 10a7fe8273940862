"""Figures for the paper: the app's charts drawn with matplotlib as SVG or PDF files.

Each app's ``selectors/figures.py`` turns the data its page already shows (from the same
selector, never a second computation) into a ``Chart`` and asks for the file here; nothing
in this module queries the database. The views serve the bytes through ``core.http.download``.

Fonts: labels mix English, Vietnamese and Chinese. DejaVu Sans (shipped inside matplotlib)
has every Vietnamese letter; Chinese needs a CJK font, Debian's fonts-noto-cjk, which
``make system-deps`` installs. matplotlib falls back glyph by glyph along the family list,
so one label may mix scripts. Without a CJK font a figure still renders, after a
``FigureFontWarning`` that says what to install (its Chinese glyphs would be empty boxes).

Text is drawn as glyph outlines in SVG (a figure looks the same on a machine without the
fonts) and embedded as TrueType (Type 42) in PDF, which journals accept and editors can
still select. Files carry no creation date, so the same data give the same bytes.
"""

import io
import logging
import math
import re
import textwrap
import threading
import warnings
from dataclasses import dataclass, field
from functools import cache
from types import SimpleNamespace

logger = logging.getLogger(__name__)


@cache
def _mpl() -> SimpleNamespace:
    """matplotlib, imported with the first figure drawn: every process (and test run) that never
    draws one starts without it."""
    import matplotlib

    # No display: the Agg family of backends only. Set before anything draws.
    matplotlib.use("Agg")
    from matplotlib import font_manager
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    return SimpleNamespace(
        matplotlib=matplotlib, font_manager=font_manager, Figure=Figure, Patch=Patch, MaxNLocator=MaxNLocator
    )


FORMATS = ("svg", "pdf")
BASE_FAMILY = "DejaVu Sans"
# The first one installed is used for Han characters. The .ttc of fonts-noto-cjk exposes its
# first face, "Noto Sans CJK JP", which holds every simplified Chinese character as well.
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Noto Sans CJK JP",
    "Source Han Sans",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
)
CJK_PACKAGE_HINT = "apt-get install fonts-noto-cjk (make system-deps)"
# The colours of vivid.css's eval-series-N classes, so a file matches the page.
SERIES_COLOURS = ("#1d4ed8", "#b45309", "#0f766e", "#7c3aed", "#be123c", "#4d7c0f", "#0369a1", "#57534e")
INTERVAL_COLOUR = "#111827"
REFERENCE_COLOUR = "#6b7280"
STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "path",
    "svg.hashsalt": "vivid-figure",
    "pdf.fonttype": 42,
    "axes.unicode_minus": True,
}
WIDTH_INCHES = 7.0
# Inches per bar and around each panel (title, axis label, ticks).
BAR_INCHES = 0.24
PANEL_INCHES = 0.9
CAPTION_CHARS = 120
LINE_PANEL_INCHES = 2.6
LEGEND_LINE_INCHES = 0.22
_CLIP_ID = re.compile(rb'(?:<clipPath id="|url\(#)(p[0-9a-f]{10})\b')
# rcParams are process-wide and gunicorn serves with threads: one figure at a time.
_LOCK = threading.Lock()


class FigureFontWarning(UserWarning):
    """A script of the figure's labels has no font on this machine."""


class UnknownFigure(LookupError):
    """No such figure (name or format): the view answers 404."""


@dataclass
class Bar:
    """One bar: its value, the interval drawn as an error bar when there is one, and its n."""

    value: float | None
    series: int = 0
    low: float | None = None
    high: float | None = None
    n: int | None = None
    text: str = ""  # written beside the bar instead of the value, when set


@dataclass
class Group:
    """Bars side by side under one label on the category axis (one per series)."""

    label: str
    bars: list[Bar]


@dataclass
class Panel:
    title: str
    value_label: str  # the value axis
    category_label: str  # the category axis
    groups: list[Group]
    limits: tuple[float, float] = (0.0, 1.0)
    reference: float | None = None  # a dashed line, e.g. no preference at 0.5
    value_format: str = "{:.2f}"


@dataclass
class Line:
    """Values at x = 1, 2, ...; a missing value breaks the line."""

    values: list[float | None]
    series: int = 0


@dataclass
class LinePanel:
    title: str
    x_label: str
    y_label: str
    lines: list[Line]
    limits: tuple[float, float] = (0.0, 1.0)
    reference: float | None = None  # a dashed line, e.g. a warning threshold


@dataclass
class Chart:
    title: str
    caption: str  # says what n is
    panels: list[Panel | LinePanel]
    series: list[str] = field(default_factory=list)  # legend labels by series index; none for one series


@cache
def font_families() -> tuple[str, ...]:
    """DejaVu Sans, then the first CJK family installed; a warning (once) when there is none."""
    installed = {entry.name for entry in _mpl().font_manager.fontManager.ttflist}
    cjk = next((name for name in CJK_FAMILIES if name in installed), None)
    if cjk is None:
        message = (
            f"No CJK font for figures (looked for {', '.join(CJK_FAMILIES)}): Chinese labels will be "
            f"drawn as empty boxes. Install one: {CJK_PACKAGE_HINT}."
        )
        logger.warning(message)
        warnings.warn(message, FigureFontWarning, stacklevel=2)
        return (BASE_FAMILY,)
    return (BASE_FAMILY, cjk)


def chart_file(chart: Chart, *, fmt: str) -> bytes:
    """The chart as an SVG or PDF file."""
    if fmt not in FORMATS:
        raise UnknownFigure(fmt)
    families = font_families()
    with _LOCK, _mpl().matplotlib.rc_context({**STYLE, "font.family": list(families)}):
        figure = _draw(chart)
        buffer = io.BytesIO()
        # No date: the same figures give the same file. The title and caption go into the
        # metadata, where a PDF keeps them as searchable text.
        if fmt == "pdf":
            metadata = {"Title": chart.title, "Subject": chart.caption, "Creator": "VIVID Studio", "CreationDate": None}
        else:
            metadata = {"Title": chart.title, "Description": chart.caption, "Creator": "VIVID Studio", "Date": None}
        figure.savefig(buffer, format=fmt, metadata=metadata)
    body = buffer.getvalue()
    return _stable_clip_ids(body) if fmt == "svg" else body


def _stable_clip_ids(svg: bytes) -> bytes:
    """Number the clip paths in order: matplotlib names them from id() of objects, which
    changes from one drawing to the next even with svg.hashsalt set."""
    names: dict[bytes, bytes] = {}
    for match in _CLIP_ID.finditer(svg):
        names.setdefault(match.group(1), b"clip%d" % len(names))
    return _CLIP_ID.sub(lambda m: m.group(0).replace(m.group(1), names[m.group(1)]), svg)


def _height(panel: Panel | LinePanel) -> float:
    if isinstance(panel, LinePanel):
        return LINE_PANEL_INCHES
    return PANEL_INCHES + BAR_INCHES * sum(max(len(g.bars), 1) for g in panel.groups)


def _draw(chart: Chart):
    heights = [_height(panel) for panel in chart.panels]
    if chart.series:
        # The legend gets a row of its own under the panels, one line per two series.
        heights.append(LEGEND_LINE_INCHES * ((len(chart.series) + 1) // 2))
    caption = textwrap.fill(chart.caption, CAPTION_CHARS)
    extra = 0.5 + LEGEND_LINE_INCHES * (caption.count("\n") + 1)
    figure = _mpl().Figure(figsize=(WIDTH_INCHES, sum(heights) + extra), layout="constrained")
    figure.suptitle(chart.title, fontweight="bold")
    axes = figure.subplots(len(heights), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, panel in zip(axes, chart.panels, strict=False):
        if isinstance(panel, LinePanel):
            _draw_lines(ax, panel)
        else:
            _draw_panel(ax, panel)
    if chart.series:
        handles = [
            _mpl().Patch(color=SERIES_COLOURS[i % len(SERIES_COLOURS)], label=label)
            for i, label in enumerate(chart.series)
        ]
        axes[-1].axis("off")
        axes[-1].legend(handles=handles, loc="center left", ncols=2, frameon=False, borderaxespad=0)
    # As the figure's x label, so the layout keeps room for it under everything else.
    figure.supxlabel(caption, x=0.0, ha="left", fontsize=8)
    return figure


def _draw_panel(ax, panel: Panel) -> None:
    """Horizontal bars, first group at the top; bars of a group stacked by series."""
    step = 0.8 / max(max((len(g.bars) for g in panel.groups), default=1), 1)
    low, high = panel.limits
    span = high - low
    # Bars grow from 0 where the scale spans it (a negative kappa points left), else from the scale's start.
    origin = 0.0 if low <= 0.0 <= high else low
    ticks, labels = [], []
    for index, group in enumerate(panel.groups):
        centre = -index
        ticks.append(centre)
        labels.append(group.label)
        count = len(group.bars)
        for position, bar in enumerate(group.bars):
            y = centre + (count - 1) * step / 2 - position * step
            colour = SERIES_COLOURS[bar.series % len(SERIES_COLOURS)]
            if bar.value is not None:
                ax.barh(y, bar.value - origin, left=origin, height=step * 0.9, color=colour)
            right = bar.value if bar.value is not None else low
            if bar.low is not None and bar.high is not None and bar.value is not None:
                ax.errorbar(
                    bar.value,
                    y,
                    xerr=[[max(bar.value - bar.low, 0.0)], [max(bar.high - bar.value, 0.0)]],
                    fmt="none",
                    ecolor=INTERVAL_COLOUR,
                    elinewidth=1,
                    capsize=3,
                )
                right = max(right, bar.high)
            # A typographic minus, as on the axis.
            text = bar.text or ("—" if bar.value is None else panel.value_format.format(bar.value).replace("-", "−"))
            if bar.n is not None and not bar.text:
                text = f"{text} (n={bar.n})"
            ax.text(max(right, low) + span * 0.01, y, text, va="center", ha="left", fontsize=7)
    ax.set_yticks(ticks, labels)
    ax.set_ylim(-len(panel.groups) + 0.5, 0.5)
    # Room on the right for the longest value text.
    ax.set_xlim(low, high + span * 0.22)
    ax.set_xticks([t for t in ax.get_xticks() if low <= t <= high])
    ax.spines.bottom.set_bounds(low, high)
    if low < 0.0 <= high:
        ax.axvline(0.0, color=REFERENCE_COLOUR, linewidth=0.6)
    if panel.reference is not None:
        ax.axvline(panel.reference, color=REFERENCE_COLOUR, linestyle="--", linewidth=0.8)
    ax.set_xlabel(panel.value_label)
    ax.set_ylabel(panel.category_label)
    ax.set_title(panel.title, loc="left")
    ax.grid(axis="x", color="#e5e7eb", linewidth=0.5)
    ax.set_axisbelow(True)


def _draw_lines(ax, panel: LinePanel) -> None:
    """One line with its points per series over x = 1..n; gaps where a value is missing."""
    longest = max((len(line.values) for line in panel.lines), default=0)
    for line in panel.lines:
        xs = list(range(1, len(line.values) + 1))
        ys = [math.nan if value is None else value for value in line.values]
        ax.plot(
            xs, ys, marker="o", markersize=3.5, linewidth=1.4, color=SERIES_COLOURS[line.series % len(SERIES_COLOURS)]
        )
    if panel.reference is not None:
        ax.axhline(panel.reference, color=REFERENCE_COLOUR, linestyle="--", linewidth=0.8)
    low, high = panel.limits
    ax.set_ylim(low, high)
    ax.set_xlim(0.5, max(longest, 1) + 0.5)
    ax.xaxis.set_major_locator(_mpl().MaxNLocator(integer=True))
    ax.set_xlabel(panel.x_label)
    ax.set_ylabel(panel.y_label)
    ax.set_title(panel.title, loc="left")
    ax.grid(axis="y", color="#e5e7eb", linewidth=0.5)
    ax.set_axisbelow(True)
