"""A round's charts as files for a paper (SVG, PDF): the label distributions and the curation funnel.

Drawn from ``round_agreement_stats`` and ``round_funnel``, the selectors the statistics page
and the round page read, so a file shows the page's figures. Who may download them is the
pages' rule (the view asks ``round_stats_visible``, the same as the round page's overview).
"""

from django.conf import settings
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from core.figures import Bar, Chart, Group, Line, LinePanel, Panel, UnknownFigure, chart_file
from core.localization import localized_name
from core.stamps import cached

from ..models import AnnotationRound, Theme, Trait
from .quality import round_quality
from .stats import round_agreement_stats
from .workflow import dataset_stamp, round_funnel, round_stamp

ROUND_FIGURES = ("traits", "themes", "funnel")
QUALITY_FIGURES = ("drift-pairs", "drift-final")
# A drift chart draws at most this many lines: a team of 40 annotators makes 780 pairs, whose lines
# and legend no reader can tell apart (and which take seconds to draw). The ones drawn are those
# with the lowest window kappa, the ones a reader is looking for; the Quality tab lists them all.
MAX_DRIFT_LINES = 12


def _figure_key(round: AnnotationRound, name: str, fmt: str) -> str:
    """A drawn file is kept until the round (or its dataset) changes: drawing costs far more than reading it."""
    stamps = f"{round_stamp(round_id=round.pk)}:{dataset_stamp(dataset_id=round.dataset_id)}"
    return f"vivid:round-figure:{round.pk}:{stamps}:{name}:{fmt}:{get_language()}"


def round_figure(*, round: AnnotationRound, name: str, fmt: str) -> bytes:
    """One chart of the round's pages as an SVG or PDF file."""
    if name not in ROUND_FIGURES:
        raise UnknownFigure(name)
    return cached(key=_figure_key(round, name, fmt), compute=lambda: _round_figure(round, name, fmt))


def _round_figure(round: AnnotationRound, name: str, fmt: str) -> bytes:
    if name == "funnel":
        return chart_file(funnel_chart(round, round_funnel(round=round)), fmt=fmt)
    distributions = round_agreement_stats(round=round)["distributions"]
    return chart_file(distribution_chart(round, distributions, name), fmt=fmt)


def _funnel_stages() -> tuple:
    # The round page's stages and words (annotation/views/rounds.py), in the active language.
    return (
        ("imported", _("Imported into the dataset")),
        ("in_round", _("In the round")),
        ("reviewed_by_all", _("Reviewed by every annotator")),
        ("unanimous", _("Unanimous")),
        ("needs_adjudication", _("Needs adjudication")),
        ("adjudicated", _("Adjudicated")),
        ("removed", _("Removed")),
        ("undecided", _("Not decided yet")),
        ("final", _("Final")),
    )


def funnel_chart(round: AnnotationRound, funnel: dict) -> Chart:
    imported = funnel.get("imported") or 0
    groups = [
        Group(
            label=label,
            bars=[Bar(value=100 * funnel.get(key, 0) / imported if imported else None, n=funnel.get(key, 0))],
        )
        for key, label in _funnel_stages()
    ]
    panel = Panel(
        title="",
        value_label=_("Share of the imported items (%)"),
        category_label=_("Stage"),
        groups=groups,
        limits=(0.0, 100.0),
        value_format="{:.0f}%",
    )
    caption = _("n = %(n)s items imported into the dataset; beside each bar, the items at that stage.") % {
        "n": imported
    }
    return Chart(title=_("Curation funnel · %(round)s") % {"round": round.name}, caption=caption, panels=[panel])


def distribution_chart(round: AnnotationRound, distributions: dict, name: str) -> Chart:
    model = Trait if name == "traits" else Theme
    entries = {entry.code: entry for entry in model.objects.all()}
    values = distributions[name]
    groups = [
        Group(
            label=localized_name(entries.get(code)) or code,
            bars=[Bar(value=share["percent"], n=share["count"])],
        )
        for code, share in values.items()
    ]
    n = distributions["n"]
    if distributions["source"] == "final":
        source = _("n = %(n)s items, from their final labels") % {"n": n}
    else:
        source = _("n = %(n)s submitted reviews (no item has final labels yet)") % {"n": n}
    if name == "traits":
        title = _("Percent of items per trait · %(round)s") % {"round": round.name}
        caption = _("%(source)s. An item may have several traits, so the bars need not add up to 100%%.") % {
            "source": source
        }
        category = _("Trait")
    else:
        title = _("Percent of items per theme · %(round)s") % {"round": round.name}
        caption = _("%(source)s.") % {"source": source}
        category = _("Theme")
    panel = Panel(
        title="",
        value_label=_("Percent of items"),
        category_label=category,
        groups=groups,
        limits=(0.0, 100.0),
        value_format="{:.1f}%",
    )
    return Chart(title=title, caption=caption, panels=[panel])


def round_quality_figure(*, round: AnnotationRound, name: str, fmt: str) -> bytes:
    """A drift chart of the round's Quality tab: theme kappa per window, with the warning threshold."""
    if name not in QUALITY_FIGURES:
        raise UnknownFigure(name)
    # The drift window, the threshold and the smallest window that warns change the drawing: they are part of the key.
    settings_key = (
        f"{round.quality_window}:{round.quality_threshold}:{round.fast_seconds}:{round.control_rate}:"
        f"{settings.QUALITY_MIN_WINDOW_ITEMS}"
    )
    return cached(
        key=_figure_key(round, f"{name}:{settings_key}", fmt), compute=lambda: _round_quality_figure(round, name, fmt)
    )


def _round_quality_figure(round: AnnotationRound, name: str, fmt: str) -> bytes:
    return chart_file(drift_chart(round_name=round.name, report=round_quality(round=round), name=name), fmt=fmt)


def drift_chart(*, round_name: str, report: dict, name: str) -> Chart:
    """A drift chart from ``round_quality``'s report: a line per pair (``drift-pairs``) or per
    annotator against the final labels (``drift-final``), a window too small to warn drawn hollow."""
    options = report["settings"]
    minimum = options.get("min_window_items", 0)
    if name == "drift-pairs":
        entries = [(f"{p['a']} · {p['b']}", p["n"], p["windows"]) for p in report["pairs"]]
        title = _("Theme κ of each pair of annotators, per window of shared items · %(round)s")
        unit = _("n = items both annotators of the pair answered (legend)")
        x_label = _("Window of %(size)s shared items, in submission order") % {"size": options["window"]}
    else:
        entries = [(user, summary["n"], summary["windows"]) for user, summary in report["annotators"].items()]
        title = _("Theme κ of each annotator with the final labels, per window of their answers · %(round)s")
        unit = _("n = items the annotator answered, controls apart (legend)")
        x_label = _("Window of %(size)s answers, in submission order") % {"size": options["window"]}
    total = len(entries)
    if total > MAX_DRIFT_LINES:
        entries = sorted(entries, key=_lowest_kappa)[:MAX_DRIFT_LINES]
        unit = _("%(unit)s; the %(shown)s of %(total)s with the lowest window κ, all of them on the Quality tab") % {
            "unit": unit,
            "shown": MAX_DRIFT_LINES,
            "total": total,
        }
    values = [w["theme_kappa"] for _label, _n, windows in entries for w in windows if w["theme_kappa"] is not None]
    low = min([0.0, options["threshold"], *values])
    panel = LinePanel(
        title="",
        x_label=x_label,
        y_label=_("Cohen's κ (theme)"),
        lines=[
            Line(
                values=[w["theme_kappa"] for w in windows],
                series=index,
                hollow=[w.get("n", minimum) < minimum for w in windows],
            )
            for index, (_label, _n, windows) in enumerate(entries)
        ],
        limits=(min(low - 0.05, 0.0), 1.05),
        reference=options["threshold"],
    )
    caption = _(
        "%(unit)s. Windows of %(size)s in submission order (the last may be shorter); a gap where a window's "
        "kappa is undefined. Dashed line: the warning threshold (%(threshold)s)."
    ) % {"unit": unit, "size": options["window"], "threshold": f"{options['threshold']:.2f}"}
    if any(line.hollow and any(line.hollow) for line in panel.lines):
        caption += " " + _("Open markers: windows of fewer than %(minimum)s items, which never warn.") % {
            "minimum": minimum
        }
    return Chart(
        title=title % {"round": round_name},
        caption=caption,
        panels=[panel],
        series=[_("%(label)s (n = %(n)s)") % {"label": label, "n": n} for label, n, _windows in entries],
    )


def _lowest_kappa(entry: tuple) -> float:
    """A drift line's lowest window kappa (lines without one last)."""
    kappas = [w["theme_kappa"] for w in entry[2] if w["theme_kappa"] is not None]
    return min(kappas, default=float("inf"))


__all__ = [
    "MAX_DRIFT_LINES",
    "QUALITY_FIGURES",
    "ROUND_FIGURES",
    "distribution_chart",
    "drift_chart",
    "funnel_chart",
    "round_figure",
    "round_quality_figure",
]
