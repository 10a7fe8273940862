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
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
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
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Text
    from matplotlib.ticker import FormatStrFormatter, MaxNLocator

    return SimpleNamespace(
        matplotlib=matplotlib,
        font_manager=font_manager,
        Figure=Figure,
        Line2D=Line2D,
        Patch=Patch,
        Text=Text,
        FormatStrFormatter=FormatStrFormatter,
        MaxNLocator=MaxNLocator,
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
# Okabe and Ito's colour-blind-safe palette (as vivid.css's eval-series-N and quality-series-N
# classes, so a file matches the page), yellow last: it is the palest on white.
SERIES_COLOURS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#000000", "#f0e442")
# A line's marker: with its colour, what tells two series apart where their points fall together.
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "h")
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
TITLE_POINTS = 10
CAPTION_POINTS = 8
WIDTH_INCHES = 7.0
# What a text may use of the width: the canvas less a margin on each side.
TEXT_INCHES = WIDTH_INCHES - 0.3
# A category label takes at most this share of the width; longer ones wrap.
CATEGORY_SHARE = 0.36
# Inches per bar and around each panel (title, axis label, ticks).
BAR_INCHES = 0.24
PANEL_INCHES = 0.9
LINE_PANEL_INCHES = 2.6
# A line of text of n points takes about n * LINE_SPACING / 72 inches.
LINE_SPACING = 1.25
MARKER_POINTS = 5.0
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
    """Values at x = 1, 2, ...; a missing value breaks the line. A point whose ``hollow`` is true is
    drawn as an open marker (a drift window too small to warn, say)."""

    values: list[float | None]
    series: int = 0
    hollow: list[bool] = field(default_factory=list)


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


def colour(series: int) -> str:
    return SERIES_COLOURS[series % len(SERIES_COLOURS)]


def marker(series: int) -> str:
    """Series ``series``'s marker shape: the shape moves on by one every len(SERIES_COLOURS) series,
    so no two of the first 64 series share both colour and shape."""
    return MARKERS[(series + series // len(SERIES_COLOURS)) % len(MARKERS)]


@contextmanager
def drawn(chart: Chart):
    """The chart drawn and laid out on a matplotlib figure, with the fonts and style of the files
    (for ``chart_file``, and for tests that measure what was drawn)."""
    families = font_families()
    with _LOCK, _mpl().matplotlib.rc_context({**STYLE, "font.family": list(families)}):
        yield _draw(chart)


def chart_file(chart: Chart, *, fmt: str) -> bytes:
    """The chart as an SVG or PDF file."""
    if fmt not in FORMATS:
        raise UnknownFigure(fmt)
    with drawn(chart) as figure:
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


class _Measure:
    """Text widths in inches, as the figure will draw them (the Agg renderer's font lookup, with
    its fallback from DejaVu Sans to the CJK font glyph by glyph)."""

    def __init__(self):
        from matplotlib.backends.backend_agg import RendererAgg

        self.renderer = RendererAgg(10, 10, 72)
        self.families = list(_mpl().matplotlib.rcParams["font.family"])

    def width(self, text: str, points: float, weight: str = "normal") -> float:
        props = _mpl().font_manager.FontProperties(family=self.families, size=points, weight=weight)
        return max(
            (
                self.renderer.get_text_width_height_descent(line, props, ismath=False)[0] / 72
                for line in text.split("\n")
            ),
            default=0.0,
        )

    def wrap(self, text: str, inches: float, points: float, weight: str = "normal") -> str:
        """``text`` broken into lines that are each at most ``inches`` wide: at spaces where there are
        some, inside a word (a name, a run of Chinese) where one alone is too wide."""
        lines = []
        for paragraph in text.split("\n"):
            full = self.width(paragraph, points, weight)
            if full <= inches or len(paragraph) < 2:
                lines.append(paragraph)
                continue
            chars = max(1, int(len(paragraph) * inches / full))
            while True:
                wrapped = textwrap.wrap(paragraph, chars, break_long_words=True, break_on_hyphens=False)
                if chars == 1 or all(self.width(line, points, weight) <= inches for line in wrapped):
                    break
                chars = max(1, chars - max(1, chars // 12))
            lines.extend(wrapped)
        return "\n".join(lines)


def _inches(points: float, lines: int = 1) -> float:
    return lines * points * LINE_SPACING / 72


def _fitted_panel(panel: Panel | LinePanel, measure: _Measure) -> Panel | LinePanel:
    """The panel with its category labels wrapped to their share of the width (a copy)."""
    if isinstance(panel, LinePanel):
        return panel
    limit = WIDTH_INCHES * CATEGORY_SHARE
    points = STYLE["ytick.labelsize"]
    return replace(panel, groups=[replace(g, label=measure.wrap(g.label, limit, points)) for g in panel.groups])


def _height(panel: Panel | LinePanel) -> float:
    if isinstance(panel, LinePanel):
        return LINE_PANEL_INCHES
    points = STYLE["ytick.labelsize"]
    rows = sum(max(len(g.bars) * BAR_INCHES, _inches(points, g.label.count("\n") + 1) + 0.08) for g in panel.groups)
    extra = _inches(STYLE["axes.titlesize"], panel.title.count("\n") + 1) if panel.title else 0.0
    return PANEL_INCHES + rows + extra


def _legend(chart: Chart, measure: _Measure) -> tuple[list[str], int]:
    """The legend's labels (wrapped to their column) and its number of columns."""
    points = STYLE["legend.fontsize"]
    # A handle with its padding takes about 0.45 inch of a column.
    two = TEXT_INCHES / 2 - 0.45
    ncols = 2 if len(chart.series) > 1 and all(measure.width(label, points) <= two for label in chart.series) else 1
    return [measure.wrap(label, TEXT_INCHES / ncols - 0.45, points) for label in chart.series], ncols


def _draw(chart: Chart):
    mpl = _mpl()
    measure = _Measure()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    title = measure.wrap(chart.title, TEXT_INCHES, TITLE_POINTS, "bold")
    caption = measure.wrap(chart.caption, TEXT_INCHES, CAPTION_POINTS)
    panels = [_fitted_panel(panel, measure) for panel in chart.panels]
    heights = [_height(panel) for panel in panels]
    top = 0.3 + _inches(TITLE_POINTS, title.count("\n") + 1)
    figure = mpl.Figure(figsize=(WIDTH_INCHES, sum(heights) + top + 1.0), layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle(title, fontweight="bold", fontsize=TITLE_POINTS)
    axes = figure.subplots(len(heights), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, panel in zip(axes, panels, strict=True):
        if isinstance(panel, LinePanel):
            _draw_lines(ax, panel)
        else:
            _draw_panel(ax, panel)
    # The legend, then the caption, under the panels across the whole width (an axes' column is
    # narrowed by the category labels): the layout keeps to the area above them.
    margin = 0.14 / WIDTH_INCHES
    bottom = [figure.text(margin, 0, caption, ha="left", va="bottom", fontsize=CAPTION_POINTS)]
    if chart.series:
        labels, ncols = _legend(chart, measure)
        if any(isinstance(panel, LinePanel) for panel in panels):
            handles = [
                mpl.Line2D(
                    [], [], color=colour(i), marker=marker(i), markersize=MARKER_POINTS, linewidth=1.4, label=label
                )
                for i, label in enumerate(labels)
            ]
        else:
            handles = [mpl.Patch(color=colour(i), label=label) for i, label in enumerate(labels)]
        legend = figure.legend(
            handles=handles, loc="upper left", ncols=ncols, frameon=False, borderaxespad=0, borderpad=0
        )
        bottom.insert(0, legend)
    renderer = figure.canvas.get_renderer()
    gap = 0.12
    sizes = [artist.get_window_extent(renderer).height / figure.dpi for artist in bottom]
    reserved = sum(sizes) + gap * (len(sizes) + 1)
    height = sum(heights) + top + reserved
    figure.set_size_inches(WIDTH_INCHES, height)
    figure.get_layout_engine().set(rect=(0, reserved / height, 1, 1 - reserved / height))
    if chart.series:
        legend.set_bbox_to_anchor((margin, (reserved - gap) / height), transform=figure.transFigure)
    bottom[-1].set_position((margin, gap / height))
    _fit(figure, axes, panels, measure)
    return figure


def _fit(figure, axes, panels, measure: _Measure) -> None:
    """What only the layout can tell: each axis label and panel title wrapped to its axes' width,
    and room on the right of the bars for the texts beside them. Then any text still outside the
    canvas (none is expected) is made smaller until it fits."""
    figure.draw_without_rendering()
    width = figure.bbox.width
    # Wrapping these changes the axes' heights, not their widths: one layout serves both steps.
    for ax, panel in zip(axes, panels, strict=True):
        box = ax.get_window_extent()
        inches = box.width / figure.dpi
        ax.set_xlabel(measure.wrap(ax.get_xlabel(), inches, STYLE["axes.labelsize"]))
        ax.set_ylabel(measure.wrap(ax.get_ylabel(), box.height / figure.dpi, STYLE["axes.labelsize"]))
        if panel.title:
            room = (width - box.x0) / figure.dpi - 0.15
            ax.set_title(measure.wrap(panel.title, room, STYLE["axes.titlesize"]), loc="left")
        if isinstance(panel, Panel):
            _room_for_texts(ax, panel)
    figure.draw_without_rendering()
    renderer = figure.canvas.get_renderer()
    canvas = figure.bbox
    for _attempt in range(8):
        outside = [t for t in drawn_texts(figure) if not _inside(t.get_window_extent(renderer), canvas)]
        if not outside:
            return
        for text in outside:
            text.set_fontsize(text.get_fontsize() * 0.9)
        figure.draw_without_rendering()


def _inside(box, canvas, tolerance: float = 0.5) -> bool:
    return (
        box.x0 >= canvas.x0 - tolerance
        and box.y0 >= canvas.y0 - tolerance
        and box.x1 <= canvas.x1 + tolerance
        and box.y1 <= canvas.y1 + tolerance
    )


def drawn_texts(figure) -> list:
    """Every text the figure draws (titles, labels, tick labels in view, texts beside bars, the legend)."""
    texts = []
    for artist in figure.findobj(_mpl().Text):
        if not artist.get_visible() or not artist.get_text().strip():
            continue
        texts.append(artist)
    # Tick labels of ticks outside the view are not drawn: leave them out.
    hidden = set()
    for ax in figure.axes:
        for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            low, high = min(low, high), max(low, high)
            for tick in axis.get_major_ticks():
                if not low - 1e-9 <= tick.get_loc() <= high + 1e-9:
                    hidden.update({id(tick.label1), id(tick.label2)})
    return [t for t in texts if id(t) not in hidden]


def _room_for_texts(ax, panel: Panel) -> None:
    """Widen the value axis on the right so every text beside a bar ends inside the axes."""
    low, high = ax.get_xlim()
    box = ax.get_window_extent()
    right = high
    for text in ax.texts:
        extent = text.get_window_extent()
        x = text.get_position()[0]
        # Where the axis must end for this text's right edge to be the axes' right edge.
        if extent.width < box.width:
            right = max(right, low + (x - low) * box.width / (box.width - extent.width - 2))
    if right > high:
        ax.set_xlim(low, right)


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
            if bar.value is not None:
                ax.barh(y, bar.value - origin, left=origin, height=step * 0.9, color=colour(bar.series))
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
    # Room on the right for the value texts; widened to fit them once the layout is known.
    ax.set_xlim(low, high + span * 0.22)
    ax.set_xticks([t for t in ax.get_xticks() if low <= t <= high])
    ax.spines.bottom.set_bounds(low, high)
    if low < 0.0 <= high:
        ax.axvline(0.0, color=REFERENCE_COLOUR, linewidth=0.6)
    if panel.reference is not None:
        ax.axvline(panel.reference, color=REFERENCE_COLOUR, linestyle="--", linewidth=0.8)
    ax.set_xlabel(panel.value_label)
    ax.set_ylabel(panel.category_label)
    if panel.title:
        ax.set_title(panel.title, loc="left")
    ax.grid(axis="x", color="#e5e7eb", linewidth=0.5)
    ax.set_axisbelow(True)


def _draw_lines(ax, panel: LinePanel) -> None:
    """One line per series over x = 1..n, each with its colour and marker, the series set a little
    apart at each x (a dodge) so equal values stay visible; gaps where a value is missing, open
    markers for the points marked hollow. The x axis counts (windows): whole numbers only."""
    longest = max((len(line.values) for line in panel.lines), default=0)
    count = len(panel.lines)
    # At most 0.6 of the distance between two windows, shared by the series; at most a marker and a half apart.
    axis_points = (WIDTH_INCHES - 1.2) * 72
    marker_width = 1.5 * MARKER_POINTS * max(longest, 1) / axis_points
    dodge = min(0.6 / max(count, 1), marker_width)
    for index, line in enumerate(panel.lines):
        offset = (index - (count - 1) / 2) * dodge
        xs = [x + 1 + offset for x in range(len(line.values))]
        ys = [math.nan if value is None else value for value in line.values]
        hollow = [bool(line.hollow[i]) if i < len(line.hollow) else False for i in range(len(line.values))]
        ax.plot(xs, ys, linewidth=1.4, color=colour(line.series), zorder=2)
        for empty in (False, True):
            points = [(x, y) for x, y, h in zip(xs, ys, hollow, strict=True) if h == empty and not math.isnan(y)]
            if not points:
                continue
            ax.plot(
                [x for x, _y in points],
                [y for _x, y in points],
                linestyle="none",
                marker=marker(line.series),
                markersize=MARKER_POINTS,
                color=colour(line.series),
                markerfacecolor="white" if empty else colour(line.series),
                markeredgewidth=1.1,
                zorder=3,
                gid=f"series-{line.series}",
            )
    if panel.reference is not None:
        ax.axhline(panel.reference, color=REFERENCE_COLOUR, linestyle="--", linewidth=0.8)
    low, high = panel.limits
    ax.set_ylim(low, high)
    ax.set_xlim(0.5, max(longest, 1) + 0.5)
    # Window numbers: whole numbers, at most about ten of them, none outside 1..n.
    locator = _mpl().MaxNLocator(nbins=10, integer=True, min_n_ticks=1)
    ax.set_xticks([t for t in locator.tick_values(1, max(longest, 1)) if 1 <= t <= max(longest, 1)])
    ax.xaxis.set_major_formatter(_mpl().FormatStrFormatter("%d"))
    ax.set_xlabel(panel.x_label)
    ax.set_ylabel(panel.y_label)
    if panel.title:
        ax.set_title(panel.title, loc="left")
    ax.grid(axis="y", color="#e5e7eb", linewidth=0.5)
    ax.set_axisbelow(True)
