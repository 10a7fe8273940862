"""Agreement statistics of a round: gathers the labels from the database and hands
plain arrays to annotation.agreement, which does every computation.

The figures are computed on the annotators' submitted labels, which is to say
before adjudication; the agreement of each annotator with the final
(unanimous or adjudicated) labels is reported beside them.
"""

import numpy as np
from django.conf import settings

from core import statistics
from core.stamps import Shown, cached_with_latest, shown

from .. import agreement
from ..models import AnnotationRound, ItemStatus, RoundItem, Suggestion, Theme, Trait
from .visibility import round_overview_visible
from .workflow import round_stamp, round_submitted_labels

FINAL_STATUSES = (ItemStatus.UNANIMOUS, ItemStatus.ADJUDICATED)


def round_get_by_name(*, name: str) -> AnnotationRound | None:
    return AnnotationRound.objects.select_related("dataset", "suggestion_set").filter(name=name).first()


def round_stats_visible(*, user, round: AnnotationRound) -> bool:
    """Researchers and adjudicators see the statistics. They reveal how others labelled,
    so someone who also annotates the round waits until it is locked (the blindness rule)."""
    return round_overview_visible(round=round, user=user)


def round_agreement_stats(
    *, round: AnnotationRound, n_resamples: int = agreement.DEFAULT_RESAMPLES, seed: int = agreement.DEFAULT_SEED
) -> dict:
    """Every agreement figure of a round, as JSON-ready data (see the CLI contract in the README).

    Computed once per change of the round's labels and kept in the shared cache under the round's
    change stamp (services.changes bumps it on every answer, decision and lock; a draft does not),
    so every process serves the same figures and none is stale. The status is read fresh as well:
    a caller's round object may predate a lock.
    """
    key, latest = _stats_keys(round, n_resamples, seed)
    return cached_with_latest(
        key=key,
        latest_key=latest,
        compute=lambda: _round_agreement_stats(round=round, n_resamples=n_resamples, seed=seed),
    )


def round_agreement_stats_shown(*, round: AnnotationRound, refresh=None) -> Shown:
    """The statistics page's figures: the current ones when they have been computed, else the latest
    ones (from before the last answers, for at most ROUND_FIGURES_STALE_SECONDS, while ``refresh``
    brings the current ones: see ``core.stamps.shown``)."""
    key, latest = _stats_keys(round, agreement.DEFAULT_RESAMPLES, agreement.DEFAULT_SEED)
    return shown(
        key=key,
        latest_key=latest,
        compute=lambda: _round_agreement_stats(
            round=round, n_resamples=agreement.DEFAULT_RESAMPLES, seed=agreement.DEFAULT_SEED
        ),
        max_age=settings.ROUND_FIGURES_STALE_SECONDS,
        refresh=refresh,
    )


def _stats_keys(round: AnnotationRound, n_resamples: int, seed: int) -> tuple[str, str]:
    status = AnnotationRound.objects.filter(pk=round.pk).values_list("status", flat=True).get()
    key = f"vivid:round-stats:{round.pk}:{round_stamp(round_id=round.pk)}:{status}:{n_resamples}:{seed}"
    return key, f"vivid:round-stats-latest:{round.pk}:{n_resamples}:{seed}"


def _round_agreement_stats(*, round: AnnotationRound, n_resamples: int, seed: int) -> dict:
    trait_codes = list(Trait.objects.order_by("number").values_list("code", flat=True))
    theme_codes = list(Theme.objects.order_by("number").values_list("code", flat=True))
    rows = round_submitted_labels(round=round)
    item_rows = list(
        RoundItem.objects.filter(round=round, control__isnull=True)
        .order_by("id")
        .values_list("id", "expression_id", "suggestions_hidden", "status", "final_theme__code")
    )
    return agreement_figures(
        rows=rows,
        item_rows=item_rows,
        final=_final_labels(round, item_rows),
        suggestions=_suggested_traits(round),
        round_annotators=list(round.annotators.values_list("username", flat=True)),
        theme_codes=theme_codes,
        trait_codes=trait_codes,
        name=round.name,
        status=round.status,
        annotators_per_item=round.annotators_per_item,
        hide_suggestions_fraction=round.hide_suggestions_fraction,
        n_resamples=n_resamples,
        seed=seed,
    )


def agreement_figures(
    *,
    rows: list[dict],
    item_rows: list[tuple],
    final: dict[int, dict],
    suggestions: dict[int, set[str]] | None,
    round_annotators: list[str],
    theme_codes: list[str],
    trait_codes: list[str],
    name: str,
    status: str,
    annotators_per_item: int,
    hide_suggestions_fraction: float,
    n_resamples: int,
    seed: int,
) -> dict:
    """The figures of ``round_agreement_stats`` from what it read: the submitted labels
    (``round_submitted_labels``), the regular items (id, expression id, suggestions hidden, status,
    final theme), the final labels, the LLM's traits per expression (None without a suggestion set)
    and the round's annotators. No database: the benchmark calls it on synthetic rows."""
    theme_index = {code: i for i, code in enumerate(theme_codes)}
    annotators = sorted(set(round_annotators) | {r["annotator"] for r in rows})
    items = [row[0] for row in item_rows]
    per_item = min(annotators_per_item, len(annotators)) if annotators else 0

    # Each row's traits as bits, read once for the ratings, the final labels, the LLM and the anchoring.
    bits = agreement.trait_bits([r["traits"] for r in rows], trait_codes)
    theme_ratings, trait_ratings = _ratings(rows, bits, annotators, items, theme_index, trait_codes)
    labelled = agreement.labels_agreement(
        {"theme": (theme_ratings, len(theme_codes), False)}
        | {code: (trait_ratings[code], 2, True) for code in trait_codes},
        per_item=per_item,
        annotators=annotators,
        n_resamples=n_resamples,
        seed=seed,
    )

    return {
        "round": name,
        "status": status,
        "n_items": len(items),
        "n_labelled": len({r["item"] for r in rows}),
        "annotators": annotators,
        "annotators_per_item": per_item,
        "categories": {"theme": theme_codes, "traits": trait_codes},
        "method": {
            "labels": "submitted by the annotators, before adjudication",
            "bootstrap": "percentile, items resampled with all their ratings",
            "n_resamples": n_resamples,
            "confidence_level": agreement.CONFIDENCE_LEVEL,
            "seed": seed,
            "percent_agreement": "percentage of agreeing annotator pairs on items with all ratings",
        },
        "interval_method": statistics.interval_method(
            unit="items", n_resamples=n_resamples, confidence=agreement.CONFIDENCE_LEVEL
        ),
        "theme": labelled["theme"],
        "traits": {code: labelled[code] for code in trait_codes},
        "theme_confusion": {
            "categories": theme_codes,
            "rows": annotators[0] if annotators else None,
            "columns": annotators[1] if len(annotators) > 1 else None,
            "pooled_over_pairs": len(annotators) > 2,
            "counts": agreement.pooled_confusion(theme_ratings, len(theme_codes)).tolist(),
        },
        "vs_final": _vs_final(rows, bits, final, theme_index, trait_codes, annotators),
        "vs_llm": _vs_llm(rows, bits, item_rows, suggestions, trait_codes, annotators),
        "anchoring": _anchoring(
            rows,
            bits,
            item_rows,
            suggestions,
            trait_codes,
            hide_suggestions_fraction,
            n_resamples=n_resamples,
            seed=seed,
        ),
        "distributions": _distributions(rows, final, theme_codes, trait_codes),
    }


def _ratings(rows, bits, annotators, items, theme_index, trait_codes) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The annotators x items ratings of the theme and of each trait (``agreement.ratings_matrix``'s)."""
    row_of = {a: i for i, a in enumerate(annotators)}
    column_of = {item: j for j, item in enumerate(items)}
    kept = [n for n, r in enumerate(rows) if r["annotator"] in row_of and r["item"] in column_of]
    where = (
        np.array([row_of[rows[n]["annotator"]] for n in kept], dtype=np.intp),
        np.array([column_of[rows[n]["item"]] for n in kept], dtype=np.intp),
    )
    theme = np.array([theme_index.get(rows[n]["theme"], -1) for n in kept], dtype=np.intp)
    theme_ratings = np.full((len(annotators), len(items)), np.nan)
    rated = theme >= 0
    theme_ratings[where[0][rated], where[1][rated]] = theme[rated]
    bits = bits[np.array(kept, dtype=np.intp)]
    trait_ratings = {}
    for t, code in enumerate(trait_codes):
        trait_ratings[code] = np.full((len(annotators), len(items)), np.nan)
        trait_ratings[code][where] = bits[:, t]
    return theme_ratings, trait_ratings


def _final_labels(round: AnnotationRound, item_rows: list[tuple]) -> dict[int, dict]:
    """{item id: {theme, traits}} of the unanimous and adjudicated items."""
    final = {
        item_id: {"theme": theme, "traits": set()}
        for item_id, _expression, _hidden, status, theme in item_rows
        if status in FINAL_STATUSES and theme
    }
    through = RoundItem.final_traits.through.objects.filter(rounditem__round=round)
    for item_id, code in through.values_list("rounditem_id", "trait__code"):
        if item_id in final:
            final[item_id]["traits"].add(code)
    return final


def _suggested_traits(round: AnnotationRound) -> dict[int, set[str]] | None:
    """{expression id: trait codes the LLM suggested}, or None when the round has no suggestion set."""
    if round.suggestion_set_id is None:
        return None
    suggested = {
        expression_id: set()
        for expression_id in Suggestion.objects.filter(suggestion_set_id=round.suggestion_set_id).values_list(
            "expression_id", flat=True
        )
    }
    through = Suggestion.traits.through.objects.filter(suggestion__suggestion_set_id=round.suggestion_set_id)
    for expression_id, code in through.values_list("suggestion__expression_id", "trait__code"):
        suggested[expression_id].add(code)
    return suggested


def _vs_final(rows, bits, final, theme_index, trait_codes, annotators) -> dict:
    """Each annotator's agreement with the final labels (after adjudication), every annotator and
    label from one confusion-matrix stack."""
    position = {a: i for i, a in enumerate(annotators)}
    final_row = {item: n for n, item in enumerate(final)}
    final_bits = agreement.trait_bits([f["traits"] for f in final.values()], trait_codes)
    kept = [n for n, r in enumerate(rows) if r["item"] in final]
    group = np.array([position[rows[n]["annotator"]] for n in kept], dtype=np.intp)
    themes = agreement.pair_agreements(
        group,
        np.array([theme_index[rows[n]["theme"]] for n in kept], dtype=np.intp),
        np.array([theme_index[final[rows[n]["item"]]["theme"]] for n in kept], dtype=np.intp),
        n_groups=len(annotators),
        n_categories=len(theme_index),
    )
    n_traits, n_annotators = len(trait_codes), len(annotators)
    # Group t * annotators + a: annotator a on trait t.
    traits = agreement.pair_agreements(
        (np.arange(n_traits) * n_annotators + group[:, None]).ravel(),
        bits[np.array(kept, dtype=np.intp)].ravel(),
        final_bits[np.array([final_row[rows[n]["item"]] for n in kept], dtype=np.intp)].ravel(),
        n_groups=n_traits * n_annotators,
        n_categories=2,
        binary=True,
    )
    result = {"n_items": len(final), "annotators": {}}
    for a, annotator in enumerate(annotators):
        result["annotators"][annotator] = {
            "theme": themes[a],
            "traits": {code: traits[t * n_annotators + a] for t, code in enumerate(trait_codes)},
        }
    return result


def _llm_bits(suggestions: dict[int, set[str]], trait_codes: list[str]) -> tuple[dict[int, int], np.ndarray]:
    """Each expression's row in the LLM's trait bits, and those bits."""
    return {expression: n for n, expression in enumerate(suggestions)}, agreement.trait_bits(
        list(suggestions.values()), trait_codes
    )


def _vs_llm(rows, bits, item_rows, suggestions, trait_codes, annotators) -> dict:
    """Annotator-vs-LLM agreement per trait, on the items where the suggestions were shown."""
    if suggestions is None:
        return {"available": False, "reason": agreement.NO_SUGGESTIONS, "traits": {}}
    expression_of = {item_id: expression_id for item_id, expression_id, hidden, *_ in item_rows if not hidden}
    shown = [n for n, r in enumerate(rows) if expression_of.get(r["item"]) in suggestions]
    result = {"available": True, "n_items": len({rows[n]["item"] for n in shown}), "traits": {}}
    position = {a: i for i, a in enumerate(annotators)}
    llm_row, llm_bits = _llm_bits(suggestions, trait_codes)
    llm = llm_bits[np.array([llm_row[expression_of[rows[n]["item"]]] for n in shown], dtype=np.intp)]
    theirs = bits[np.array(shown, dtype=np.intp)]
    # Per trait, group 0 holds every row and group 1 + a annotator a's: each row is in both.
    per_trait = len(annotators) + 1
    own = np.array([1 + position[rows[n]["annotator"]] for n in shown], dtype=np.intp)
    offsets = np.arange(len(trait_codes)) * per_trait
    entries = agreement.pair_agreements(
        np.concatenate([np.broadcast_to(offsets, llm.shape).ravel(), (offsets + own[:, None]).ravel()]),
        np.concatenate([llm.ravel(), llm.ravel()]),
        np.concatenate([theirs.ravel(), theirs.ravel()]),
        n_groups=len(trait_codes) * per_trait,
        n_categories=2,
        binary=True,
    )
    for t, code in enumerate(trait_codes):
        entry = entries[t * per_trait]
        entry["annotators"] = {annotator: entries[t * per_trait + 1 + a] for a, annotator in enumerate(annotators)}
        result["traits"][code] = entry
    return result


def _anchoring(
    rows, bits, item_rows, suggestions, trait_codes, hide_suggestions_fraction, *, n_resamples, seed
) -> dict:
    """How much the suggestions shifted labels: the rate at which annotators' traits match the
    LLM's on items where the suggestions were shown, minus the same rate where they were hidden.

    The unit is the item (its annotators' match rates averaged), so the interval
    resamples items, not annotations of the same item as if they were independent.
    """
    if suggestions is None:
        return {"available": False, "reason": agreement.NO_SUGGESTIONS, "traits": {}, "overall": None}
    info = {item_id: (expression_id, hidden) for item_id, expression_id, hidden, *_ in item_rows}
    kept = [n for n, r in enumerate(rows) if info[r["item"]][0] in suggestions]
    llm_row, llm_bits = _llm_bits(suggestions, trait_codes)
    # One row per review: does the annotator agree with the LLM on each trait?
    kept_rows = np.array(kept, dtype=np.intp)
    llm = llm_bits[np.array([llm_row[info[rows[n]["item"]][0]] for n in kept], dtype=np.intp)]
    matches = (bits[kept_rows] == llm).astype(float).reshape(len(kept), len(trait_codes))
    items, position = np.unique(np.array([rows[n]["item"] for n in kept], dtype=np.intp), return_inverse=True)
    reviews = np.bincount(position, minlength=items.size)
    # Items x traits: each item's match rate, averaged over its annotators.
    per_item = np.stack(
        [np.bincount(position, weights=matches[:, t], minlength=items.size) for t in range(len(trait_codes))], axis=1
    )
    per_item = per_item / np.maximum(reviews, 1)[:, None]
    figures = np.column_stack([per_item.mean(axis=1), per_item]).T  # overall, then each trait
    hidden = np.array([info[item][1] for item in items], dtype=bool)
    results = agreement.rate_differences(figures[:, ~hidden], figures[:, hidden], n_resamples=n_resamples, seed=seed)
    return {
        "available": True,
        "hide_suggestions_fraction": hide_suggestions_fraction,
        "overall": results[0],
        "traits": dict(zip(trait_codes, results[1:], strict=True)),
    }


def _distributions(rows, final, theme_codes, trait_codes) -> dict:
    """Percent of items per trait and per theme (the paper's Figures 2 and 3): from the
    final labels once there are any, else from every submitted annotation."""
    if final:
        source, labels = "final", list(final.values())
    else:
        source, labels = "annotators", [{"theme": r["theme"], "traits": set(r["traits"])} for r in rows]
    return {
        "source": source,
        "n": len(labels),
        "traits": agreement.distribution([lab["traits"] for lab in labels], trait_codes, multi=True),
        "themes": agreement.distribution([lab["theme"] for lab in labels], theme_codes, multi=False),
    }


__all__ = ["round_agreement_stats", "round_get_by_name", "round_stats_visible"]
