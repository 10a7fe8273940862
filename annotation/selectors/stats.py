"""Agreement statistics of a round: gathers the labels from the database and hands
plain arrays to annotation.agreement, which does every computation.

The figures are computed on the annotators' submitted labels, which is to say
before adjudication; the agreement of each annotator with the final
(unanimous or adjudicated) labels is reported beside them.
"""

from collections import defaultdict

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max

from core import statistics

from .. import agreement
from ..models import AnnotationRound, ItemStatus, LabelChange, RoundItem, Suggestion, Theme, Trait
from .visibility import round_overview_visible
from .workflow import round_submitted_labels

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

    Cached under a fingerprint of everything the figures depend on: every label
    or decision change writes a LabelChange row, so a new row (or a new round
    status) makes a new key and a stale result is never served.
    """
    fingerprint = LabelChange.objects.filter(item__round=round).aggregate(last=Max("id"), n=Count("id"))
    status = AnnotationRound.objects.filter(pk=round.pk).values_list("status", flat=True).get()
    key = f"vivid:round-stats:{round.pk}:{round.created_at.timestamp()}:{status}:{fingerprint['last']}:{fingerprint['n']}:{n_resamples}:{seed}"
    stats = cache.get(key)
    if stats is None:
        stats = _round_agreement_stats(round=round, n_resamples=n_resamples, seed=seed)
        cache.set(key, stats, timeout=24 * 3600)
    return stats


def _round_agreement_stats(*, round: AnnotationRound, n_resamples: int, seed: int) -> dict:
    trait_codes = list(Trait.objects.order_by("number").values_list("code", flat=True))
    theme_codes = list(Theme.objects.order_by("number").values_list("code", flat=True))
    theme_index = {code: i for i, code in enumerate(theme_codes)}

    rows = round_submitted_labels(round=round)
    annotators = sorted(set(round.annotators.values_list("username", flat=True)) | {r["annotator"] for r in rows})
    item_rows = list(
        RoundItem.objects.filter(round=round, control__isnull=True)
        .order_by("id")
        .values_list("id", "expression_id", "suggestions_hidden", "status", "final_theme__code")
    )
    items = [row[0] for row in item_rows]
    per_item = min(round.annotators_per_item, len(annotators)) if annotators else 0

    themes = {(r["annotator"], r["item"]): theme_index.get(r["theme"]) for r in rows}
    theme_ratings = agreement.ratings_matrix(themes, annotators=annotators, items=items)
    trait_sets = {(r["annotator"], r["item"]): set(r["traits"]) for r in rows}
    trait_ratings = {
        code: agreement.ratings_matrix(
            {key: int(code in traits) for key, traits in trait_sets.items()}, annotators=annotators, items=items
        )
        for code in trait_codes
    }
    labelled = agreement.labels_agreement(
        {"theme": (theme_ratings, len(theme_codes), False)}
        | {code: (trait_ratings[code], 2, True) for code in trait_codes},
        per_item=per_item,
        annotators=annotators,
        n_resamples=n_resamples,
        seed=seed,
    )

    final = _final_labels(round, item_rows)
    suggestions = _suggested_traits(round)
    return {
        "round": round.name,
        "status": round.status,
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
        "vs_final": _vs_final(rows, final, theme_index, trait_codes, annotators),
        "vs_llm": _vs_llm(rows, item_rows, suggestions, trait_codes, annotators),
        "anchoring": _anchoring(rows, item_rows, suggestions, trait_codes, round, n_resamples=n_resamples, seed=seed),
        "distributions": _distributions(rows, final, theme_codes, trait_codes),
    }


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


def _vs_final(rows, final, theme_index, trait_codes, annotators) -> dict:
    """Each annotator's agreement with the final labels (after adjudication)."""
    by_annotator = defaultdict(list)
    for row in rows:
        if row["item"] in final:
            by_annotator[row["annotator"]].append((row, final[row["item"]]))
    result = {"n_items": len(final), "annotators": {}}
    for annotator in annotators:
        pairs = by_annotator.get(annotator, [])
        result["annotators"][annotator] = {
            "theme": agreement.pair_agreement(
                [theme_index[r["theme"]] for r, _ in pairs],
                [theme_index[f["theme"]] for _, f in pairs],
                len(theme_index),
            ),
            "traits": {
                code: agreement.pair_agreement(
                    [int(code in r["traits"]) for r, _ in pairs],
                    [int(code in f["traits"]) for _, f in pairs],
                    2,
                    binary=True,
                )
                for code in trait_codes
            },
        }
    return result


def _vs_llm(rows, item_rows, suggestions, trait_codes, annotators) -> dict:
    """Annotator-vs-LLM agreement per trait, on the items where the suggestions were shown."""
    if suggestions is None:
        return {"available": False, "reason": agreement.NO_SUGGESTIONS, "traits": {}}
    expression_of = {item_id: expression_id for item_id, expression_id, hidden, *_ in item_rows if not hidden}
    shown = [(r, suggestions[expression_of[r["item"]]]) for r in rows if expression_of.get(r["item"]) in suggestions]
    result = {"available": True, "n_items": len({r["item"] for r, _ in shown}), "traits": {}}
    for code in trait_codes:
        entry = agreement.pair_agreement(
            [int(code in llm) for _, llm in shown], [int(code in r["traits"]) for r, _ in shown], 2, binary=True
        )
        entry["annotators"] = {
            annotator: agreement.pair_agreement(
                [int(code in llm) for r, llm in shown if r["annotator"] == annotator],
                [int(code in r["traits"]) for r, _ in shown if r["annotator"] == annotator],
                2,
                binary=True,
            )
            for annotator in annotators
        }
        result["traits"][code] = entry
    return result


def _anchoring(rows, item_rows, suggestions, trait_codes, round, *, n_resamples, seed) -> dict:
    """How much the suggestions shifted labels: the rate at which annotators' traits match the
    LLM's on items where the suggestions were shown, minus the same rate where they were hidden.

    The unit is the item (its annotators' match rates averaged), so the interval
    resamples items, not annotations of the same item as if they were independent.
    """
    if suggestions is None:
        return {"available": False, "reason": agreement.NO_SUGGESTIONS, "traits": {}, "overall": None}
    info = {item_id: (expression_id, hidden) for item_id, expression_id, hidden, *_ in item_rows}
    kept = [r for r in rows if info[r["item"]][0] in suggestions]
    # One row per review: does the annotator agree with the LLM on each trait?
    matches = np.array(
        [[(code in r["traits"]) == (code in suggestions[info[r["item"]][0]]) for code in trait_codes] for r in kept],
        dtype=float,
    ).reshape(len(kept), len(trait_codes))
    items, position = np.unique([r["item"] for r in kept], return_inverse=True)
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
        "hide_suggestions_fraction": round.hide_suggestions_fraction,
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
