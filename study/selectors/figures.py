"""The study results page's chart as a file for a paper (SVG, PDF): the pragmatic preference rates.

Drawn from ``study_results``, the selector the results page reads (with the same "include
test responses" choice): per question, the share of side-by-side choices that went to the
pragmatic description, for all participants and for each group, with the bootstrap interval
and n of each. Researchers only, as the page (the view asks).
"""

import hashlib

from django.utils.translation import gettext as _

from core.figures import FORMATS, Bar, Chart, Group, Panel, UnknownFigure, chart_file
from core.stamps import cached

from ..models import Culture, Study
from .results import CRITERIA, study_results

STUDY_FIGURES = ("preferences",)


def study_figure(*, study: Study, name: str, fmt: str, include_test: bool = False) -> bytes:
    if name not in STUDY_FIGURES or fmt not in FORMATS:
        raise UnknownFigure(name)
    results = study_results(study=study, include_test=include_test)
    chart = preferences_chart(study, results)
    # Keyed by what is drawn (every label, value and interval, in the language asked for), not by
    # the study's stamp: an answer that leaves the preference rates as they were (a QA answer, a
    # page seen) finds the drawing already made, and drawing is most of a figure's time.
    digest = hashlib.sha256(repr(chart).encode()).hexdigest()
    return cached(key=f"study:figure:{fmt}:{digest}", compute=lambda: chart_file(chart, fmt=fmt))


def _bar(share: dict, series: int) -> Bar:
    low, high = share["ci"] if share["ci"] else (None, None)
    return Bar(value=share["pragmatic_rate"], series=series, low=low, high=high, n=share["n"])


def preferences_chart(study: Study, results: dict) -> Chart:
    criteria = {
        "comprehension": _("Comprehension"),
        "knowledge_gain": _("Knowledge gain"),
        "prior_knowledge": _("Prior knowledge"),
    }
    cultures = dict(Culture.choices)
    panels = []
    for criterion in CRITERIA:
        groups = [Group(label=_("All participants"), bars=[_bar(results["preferences"][criterion], 0)])]
        for position, (group, rates) in enumerate(results["preferences"]["by_group"].items(), start=1):
            groups.append(Group(label=str(cultures.get(group, group)), bars=[_bar(rates[criterion], position)]))
        panels.append(
            Panel(
                title=criteria.get(criterion, criterion),
                value_label=_("Share of choices for the pragmatic description"),
                category_label=_("Participants"),
                groups=groups,
                limits=(0.0, 1.0),
                reference=0.5,
            )
        )
    participants = results["participants"]
    by_group = ", ".join(
        f"{cultures.get(group, group)} {counts['valid']}" for group, counts in participants["by_group"].items()
    )
    method = results["interval_method"]
    caption = _(
        "n = side-by-side choices behind each bar, from %(valid)s valid participants (%(groups)s). Whiskers: 95%% "
        "intervals, percentile bootstrap over participants (%(resamples)s resamples), none with fewer than two "
        "participants. Dashed line: no preference (0.5)."
    ) % {"valid": participants["valid"], "groups": by_group or "—", "resamples": method["resamples"]}
    if results["include_test"]:
        caption += " " + _("Test responses included.")
    return Chart(
        title=_("Preference for the pragmatic description · %(study)s") % {"study": study.title},
        caption=caption,
        panels=panels,
    )


__all__ = ["STUDY_FIGURES", "preferences_chart", "study_figure"]
