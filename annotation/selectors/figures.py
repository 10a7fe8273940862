"""The round statistics page's charts as files for a paper (SVG, PDF): the label distributions.

Drawn from ``round_agreement_stats``, the cached selector the page itself reads, so a
file shows the page's figures. Who may download them is the page's rule (the view asks
``round_stats_visible``).
"""

from django.utils.translation import gettext as _

from core.figures import Bar, Chart, Group, Panel, UnknownFigure, chart_file
from core.localization import localized_name

from ..models import AnnotationRound, Theme, Trait
from .stats import round_agreement_stats

ROUND_FIGURES = ("traits", "themes")


def round_figure(*, round: AnnotationRound, name: str, fmt: str) -> bytes:
    """One chart of the round's statistics page as an SVG or PDF file."""
    if name not in ROUND_FIGURES:
        raise UnknownFigure(name)
    distributions = round_agreement_stats(round=round)["distributions"]
    return chart_file(_distribution_chart(round, distributions, name), fmt=fmt)


def _distribution_chart(round: AnnotationRound, distributions: dict, name: str) -> Chart:
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


__all__ = ["ROUND_FIGURES", "round_figure"]
