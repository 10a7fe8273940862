"""The agreement statistics page of a round, and its JSON and CSV downloads (same view, ``?format=``).

The statistics reveal how every annotator labelled, so only researchers and
adjudicators see them, and not while they annotate the same open round.
"""

from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from core.decorators import role_required
from core.http import download, file_stem
from core.roles import ADJUDICATOR, RESEARCHER

from .. import agreement, selectors, services
from ..selectors.lookups import round_or_404
from ..selectors.stats import round_agreement_stats, round_agreement_stats_shown, round_stats_visible

# Why a figure is missing, for people (the JSON keeps the codes).
REASONS = {
    agreement.NO_ITEMS: gettext_lazy("no item has all its ratings yet"),
    agreement.TOO_FEW_ITEMS: gettext_lazy("too few items"),
    agreement.SINGLE_CATEGORY: gettext_lazy(
        "every rating is the same category, so chance agreement is total and the coefficient is undefined"
    ),
    agreement.NOT_TWO_ANNOTATORS: gettext_lazy(
        "Cohen's kappa compares two annotators; see Fleiss' kappa and the pairs below"
    ),
    agreement.COHEN_FOR_TWO: gettext_lazy("with two annotators the interval is given for Cohen's kappa"),
    agreement.TOO_FEW_ANNOTATORS: gettext_lazy("fewer than two annotators per item"),
    agreement.UNSTABLE_BOOTSTRAP: gettext_lazy("too many resamples were undefined for a reliable interval"),
    agreement.NO_HIDDEN_ITEMS: gettext_lazy("no item had its suggestions hidden"),
    agreement.NO_SHOWN_ITEMS: gettext_lazy("no item had its suggestions shown"),
    agreement.NO_SUGGESTIONS: gettext_lazy("the round has no LLM suggestions"),
}

# The columns of the main table: (key in a label's statistics, header, has an interval, is a percentage).
AGREEMENT_COLUMNS = (
    ("percent_agreement", gettext_lazy("Percent agreement"), False, True),
    ("cohen_kappa", gettext_lazy("Cohen's κ"), True, False),
    ("krippendorff_alpha", gettext_lazy("Krippendorff's α"), True, False),
    ("fleiss_kappa", gettext_lazy("Fleiss' κ"), True, False),
    ("pabak", gettext_lazy("PABAK"), False, False),
    ("prevalence_index", gettext_lazy("Prevalence index"), False, False),
    ("bias_index", gettext_lazy("Bias index"), False, False),
)


def _cell(values: dict, key: str, *, with_ci: bool = False, percent: bool = False) -> dict:
    reasons = values.get("reasons", {})
    return {
        "value": values.get(key),
        "ci": values.get(f"{key}_ci") if with_ci else None,
        "reason": REASONS.get(reasons.get(key), "") if values.get(key) is None and key in values else "",
        "ci_reason": _ci_reason(values, key) if with_ci else "",
        "percent": percent,
        "applies": key in values,
    }


def _ci_reason(values: dict, key: str) -> str:
    code = values.get("reasons", {}).get(f"{key}_ci")
    if values.get(f"{key}_ci") is not None or values.get(key) is None or code == agreement.COHEN_FOR_TWO:
        # No figure, no interval to explain; and Fleiss' kappa beside Cohen's needs no excuse.
        return ""
    return REASONS.get(code, "")


def _labels(stats: dict, traits: dict, themes: dict) -> list[dict]:
    """The theme and then each trait, with the taxonomy entry for its localized name."""
    return [{"code": "theme", "entry": None, "values": stats["theme"]}] + [
        {"code": code, "entry": traits.get(code), "values": values} for code, values in stats["traits"].items()
    ]


def _page_context(round_, stats: dict) -> dict:
    traits = {t.code: t for t in selectors.trait_list()}
    themes = {t.code: t for t in selectors.theme_list()}
    labels = _labels(stats, traits, themes)
    rows = [
        {
            **label,
            "n": label["values"]["n"],
            "cells": [
                _cell(label["values"], key, with_ci=ci, percent=pct) for key, _header, ci, pct in AGREEMENT_COLUMNS
            ],
            "pairwise": [{**pair, "kappa": _cell(pair, "cohen_kappa")} for pair in label["values"].get("pairwise", [])],
        }
        for label in labels
    ]
    confusion = stats["theme_confusion"]
    theme_order = [themes.get(code) for code in confusion["categories"]]
    matrix = [
        {"theme": theme, "counts": [{"n": n, "diagonal": i == j} for j, n in enumerate(counts)], "total": sum(counts)}
        for i, (theme, counts) in enumerate(zip(theme_order, confusion["counts"], strict=True))
    ]
    vs_final = [
        {
            "annotator": annotator,
            "cells": [_cell(values["theme"], "cohen_kappa")]
            + [_cell(values["traits"][code], "cohen_kappa") for code in stats["traits"]],
            "n": values["theme"]["n"],
        }
        for annotator, values in stats["vs_final"]["annotators"].items()
    ]
    vs_llm = [
        {
            "entry": traits.get(code),
            "code": code,
            "pooled": _cell(values, "cohen_kappa"),
            "percent": values["percent_agreement"],
            "n": values["n"],
            "annotators": [_cell(values["annotators"][a], "cohen_kappa") for a in stats["annotators"]],
        }
        for code, values in stats["vs_llm"].get("traits", {}).items()
    ]
    anchoring = stats["anchoring"]
    anchoring_rows = []
    if anchoring.get("available"):
        anchoring_rows = [{"entry": None, "code": "overall", **_anchor(anchoring["overall"])}] + [
            {"entry": traits.get(code), "code": code, **_anchor(values)} for code, values in anchoring["traits"].items()
        ]
    distributions = stats["distributions"]
    return {
        "round": round_,
        "stats": stats,
        "columns": [header for _key, header, _ci, _pct in AGREEMENT_COLUMNS],
        "rows": rows,
        "more_than_two": len(stats["annotators"]) > 2,
        "themes_ordered": theme_order,
        "matrix": matrix,
        "vs_final": vs_final,
        "trait_entries": [traits.get(code) for code in stats["traits"]],
        "vs_llm": vs_llm,
        "vs_llm_reason": REASONS.get(stats["vs_llm"].get("reason"), ""),
        "anchoring_rows": anchoring_rows,
        "anchoring_reason": REASONS.get(anchoring.get("reason"), ""),
        "trait_bars": [{"entry": traits.get(code), **values} for code, values in distributions["traits"].items()],
        "theme_bars": [{"entry": themes.get(code), **values} for code, values in distributions["themes"].items()],
    }


def _anchor(values: dict) -> dict:
    return {
        "shown": values["match_rate_shown"],
        "hidden": values["match_rate_hidden"],
        "n_shown": values["n_shown"],
        "n_hidden": values["n_hidden"],
        "difference": _cell(values, "difference", with_ci=True),
    }


def _download(round_, stats: dict, fmt: str) -> HttpResponse:
    filename = f"{file_stem(round_.name, fallback=f'round-{round_.pk}')}-agreement.{fmt}"
    return download(services.round_stats_export(stats=stats, fmt=fmt), filename=filename, fmt=fmt)


@require_GET
@role_required(RESEARCHER, ADJUDICATOR)
def round_stats(request, pk: int):
    round_ = round_or_404(request.user, pk, visible=round_stats_visible)
    fmt = request.GET.get("format", "")
    if fmt and fmt not in services.STATS_FORMATS:
        return HttpResponseBadRequest(
            _("Unknown download format “%(format)s”; use ?format=json or ?format=csv.") % {"format": fmt},
            content_type="text/plain; charset=utf-8",
        )
    if fmt:
        # A download is what the paper cites: the figures of every answer so far, never a moment ago's.
        return _download(round_, round_agreement_stats(round=round_), fmt)
    shown = round_agreement_stats_shown(
        round=round_, refresh=lambda: services.round_summary_schedule(round_id=round_.pk)
    )
    return render(request, "annotation/round_stats.html", {**_page_context(round_, shown.value), "shown": shown})
