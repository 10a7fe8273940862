"""Annotators over time: control items, drift windows, speed and theme shift (README "Annotator quality").

Everything is computed from submitted answers in submission order. Control items are read here
and nowhere else among the statistics: agreement between annotators and with the final labels
uses regular items only; control items are scored against their known labels.

Kappas are scikit-learn's (through annotation.agreement / core.statistics); the theme shift
between the first and second half of an annotator's answers is scipy's chi2_contingency.
Figures that cannot be computed (no item, a single category) are None, never NaN.
"""

import itertools
from collections import defaultdict

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max
from scipy.stats import chi2_contingency

from core.statistics import finite

from .. import agreement
from ..models import (
    AnnotationRound,
    AnnotatorPause,
    Assignment,
    AssignmentStatus,
    ControlItem,
    ItemStatus,
    LabelChange,
    RecalibrationNote,
    RoundItem,
    Theme,
    Trait,
)
from .visibility import round_overview_visible

FINAL_STATUSES = (ItemStatus.UNANIMOUS, ItemStatus.ADJUDICATED)
# The fastest answers are reported as this percentile of an annotator's answer times.
FASTEST_PERCENTILE = 5


def round_quality_visible(*, user, round: AnnotationRound) -> bool:
    """Who may see the quality tab: as for the statistics (never an annotator of the open round)."""
    return round_overview_visible(round=round, user=user)


def round_controls(*, round: AnnotationRound):
    """The round's control items, with how many answers each has."""
    return (
        ControlItem.objects.filter(round=round)
        .select_related("expression", "theme", "source_version")
        .annotate(n_assigned=Count("items__assignments", distinct=True))
        .order_by("id")
    )


def control_get(*, round: AnnotationRound, pk: int) -> ControlItem | None:
    return ControlItem.objects.filter(round=round, pk=pk).select_related("expression", "theme").first()


def round_annotator_get(*, round: AnnotationRound, pk: int):
    return round.annotators.filter(pk=pk).first()


def annotator_control_counts(*, round: AnnotationRound, user) -> dict[str, int]:
    """The control items in ``user``'s own queue, and how many of them hide their suggestions: a page that
    counts a round's items for someone who annotates it adds these, so the counts match their queue."""
    rows = Assignment.objects.filter(item__round=round, annotator_id=user.pk, item__control__isnull=False)
    return {"items": rows.count(), "hidden": rows.filter(item__suggestions_hidden=True).count()}


def round_annotator_choices(*, round: AnnotationRound):
    return round.annotators.order_by("username")


def round_paused_usernames(*, round: AnnotationRound) -> set[str]:
    """The annotators whose queue is paused in the round."""
    return set(AnnotatorPause.objects.filter(round=round).values_list("annotator__username", flat=True))


def annotator_paused(*, round: AnnotationRound, user) -> bool:
    return AnnotatorPause.objects.filter(round=round, annotator_id=user.pk).exists()


def recalibration_notes_unseen(*, round: AnnotationRound, user):
    """Notes to ``user`` not yet shown: the review page shows them on the next item."""
    return RecalibrationNote.objects.filter(round=round, annotator_id=user.pk, seen_at__isnull=True).order_by(
        "created_at", "id"
    )


def recalibration_notes(*, round: AnnotationRound):
    return (
        RecalibrationNote.objects.filter(round=round)
        .select_related("annotator", "created_by")
        .order_by("-created_at", "-id")
    )


def round_quality(*, round: AnnotationRound) -> dict:
    """Every figure of the quality tab, JSON-ready (the API's answer; the CLI keeps ``annotators`` and
    ``pairs`` with their documented keys). Cached under a fingerprint of the answers, the decisions
    and the settings, like the agreement statistics."""
    answers = Assignment.objects.filter(item__round=round).aggregate(last=Max("updated_at"), n=Count("id"))
    changes = LabelChange.objects.filter(item__round=round).aggregate(last=Max("id"), n=Count("id"))
    fresh = AnnotationRound.objects.filter(pk=round.pk).values(
        "status", "quality_window", "quality_threshold", "fast_seconds", "control_rate"
    )[0]
    key = ":".join(
        str(part)
        for part in (
            "vivid:round-quality",
            round.pk,
            round.created_at.timestamp(),
            answers["last"] and answers["last"].timestamp(),
            answers["n"],
            changes["last"],
            changes["n"],
            *fresh.values(),
        )
    )
    result = cache.get(key)
    if result is None:
        for name, value in fresh.items():
            setattr(round, name, value)
        result = _round_quality(round=round)
        cache.set(key, result, timeout=24 * 3600)
    return result


def _kappa(first: list, second: list, n_categories: int) -> float | None:
    return agreement.cohen_kappa(first, second, n_categories) if first else None


def _share(values: list[bool]) -> float | None:
    return float(np.mean(values)) if values else None


def _answers(round: AnnotationRound) -> list[dict]:
    rows = (
        Assignment.objects.filter(item__round=round, status=AssignmentStatus.SUBMITTED)
        .values(
            "id",
            "item_id",
            "annotator__username",
            "theme__code",
            "trait_decisions",
            "added_traits",
            "submitted_at",
            "seconds",
            "item__control_id",
            "item__expression__text",
        )
        .order_by("submitted_at", "id")
    )
    result = []
    for row in rows:
        accepted = {code for code, d in (row["trait_decisions"] or {}).items() if d == "accept"}
        result.append(
            {
                "assignment": row["id"],
                "item": row["item_id"],
                "annotator": row["annotator__username"],
                "theme": row["theme__code"],
                "traits": accepted | set(row["added_traits"] or []),
                "submitted_at": row["submitted_at"],
                "seconds": row["seconds"],
                "control": row["item__control_id"],
                "text": row["item__expression__text"],
            }
        )
    return result


def _final_labels(round: AnnotationRound) -> dict[int, dict]:
    final = {
        item_id: {"theme": theme, "traits": set()}
        for item_id, theme in RoundItem.objects.filter(
            round=round, control__isnull=True, status__in=FINAL_STATUSES, final_theme__isnull=False
        ).values_list("id", "final_theme__code")
    }
    through = RoundItem.final_traits.through.objects.filter(rounditem_id__in=list(final))
    for item_id, code in through.values_list("rounditem_id", "trait__code"):
        final[item_id]["traits"].add(code)
    return final


def _agreement(pairs: list[tuple[dict, dict]], theme_index: dict, trait_codes: list[str]) -> dict:
    """Theme kappa and per-trait kappa of (answer, reference) pairs; a reference has ``theme`` and ``traits``."""
    kept = [(a, b) for a, b in pairs if a["theme"] in theme_index and b["theme"] in theme_index]
    return {
        "theme_kappa": _kappa(
            [theme_index[a["theme"]] for a, _ in kept], [theme_index[b["theme"]] for _, b in kept], len(theme_index)
        ),
        "trait_kappa": {
            code: _kappa([int(code in a["traits"]) for a, _ in kept], [int(code in b["traits"]) for _, b in kept], 2)
            for code in trait_codes
        },
    }


def _control_scores(answers: list[dict], controls: dict[int, dict], trait_codes: list[str]) -> dict:
    """Accuracy on control items: exact (theme and every trait right), theme, and each trait."""
    scored = [(a, controls[a["control"]]) for a in answers if a["control"] in controls]
    return {
        "n_controls": len(scored),
        "control_accuracy": _share([a["theme"] == c["theme"] and a["traits"] == c["traits"] for a, c in scored]),
        "control_theme_accuracy": _share([a["theme"] == c["theme"] for a, c in scored]),
        "control_traits": {
            code: _share([(code in a["traits"]) == (code in c["traits"]) for a, c in scored]) for code in trait_codes
        },
    }


def _theme_shift(regular: list[dict], theme_codes: list[str]) -> dict:
    """Theme counts in the first and second half of an annotator's answers, and scipy's chi-square test."""
    half = len(regular) // 2
    halves = [regular[:half], regular[half:]]
    counts = [[sum(1 for a in part if a["theme"] == code) for code in theme_codes] for part in halves]
    result = {
        "first": dict(zip(theme_codes, counts[0], strict=True)),
        "second": dict(zip(theme_codes, counts[1], strict=True)),
        "chi2": None,
        "p_value": None,
        "dof": None,
        "reason": None,
    }
    table = np.array(counts)
    table = table[:, table.sum(axis=0) > 0]
    if half == 0 or table.shape[1] < 2:
        result["reason"] = agreement.TOO_FEW_ITEMS if half == 0 else agreement.SINGLE_CATEGORY
        return result
    test = chi2_contingency(table)
    result["chi2"], result["p_value"], result["dof"] = finite(test.statistic), finite(test.pvalue), int(test.dof)
    return result


def _windows(sequence: list, size: int) -> list[tuple[int, int, list]]:
    """(start, end, items) for consecutive windows of ``size`` items, 1-based and inclusive; the last may be shorter."""
    return [
        (start + 1, min(start + size, len(sequence)), sequence[start : start + size])
        for start in range(0, len(sequence), size)
    ]


def _round_quality(*, round: AnnotationRound) -> dict:
    trait_codes = list(Trait.objects.order_by("number").values_list("code", flat=True))
    theme_codes = list(Theme.objects.order_by("number").values_list("code", flat=True))
    theme_index = {code: i for i, code in enumerate(theme_codes)}
    size = max(int(round.quality_window), 1)
    fast = float(round.fast_seconds)
    threshold = float(round.quality_threshold)

    answers = _answers(round)
    final = _final_labels(round)
    controls = {
        c["id"]: {"theme": c["theme__code"], "traits": set(c["traits"])}
        for c in ControlItem.objects.filter(round=round).values("id", "theme__code", "traits")
    }
    usernames = sorted(set(round.annotators.values_list("username", flat=True)) | {a["annotator"] for a in answers})
    by_annotator = defaultdict(list)
    for answer in answers:
        by_annotator[answer["annotator"]].append(answer)

    annotators, details, warnings, fast_items = {}, {}, [], []
    for name in usernames:
        sequence = by_annotator.get(name, [])
        regular = [a for a in sequence if a["control"] is None]
        timed = [a["seconds"] for a in sequence if a["seconds"] is not None]
        vs_final = _agreement([(a, final[a["item"]]) for a in regular if a["item"] in final], theme_index, trait_codes)
        windows = []
        for start, end, part in _windows(sequence, size):
            with_final = [(a, final[a["item"]]) for a in part if a["control"] is None and a["item"] in final]
            window = {
                "start": start,
                "end": end,
                "theme_kappa": None,
                "from": part[0]["submitted_at"].isoformat(),
                "to": part[-1]["submitted_at"].isoformat(),
                "n_final": len(with_final),
                **_agreement(with_final, theme_index, trait_codes),
                **_control_scores(part, controls, trait_codes),
            }
            windows.append(window)
            if window["theme_kappa"] is not None and window["theme_kappa"] < threshold:
                warnings.append(
                    {"kind": "final", "annotator": name, "start": start, "end": end, "value": window["theme_kappa"]}
                )
        scores = _control_scores(sequence, controls, trait_codes)
        annotators[name] = {
            "n": len(regular),
            "median_seconds": float(np.median(timed)) if timed else None,
            "fast_share": _share([s < fast for s in timed]),
            "control_accuracy": scores["control_accuracy"],
            "kappa_vs_final": vs_final["theme_kappa"],
            "windows": [{key: w[key] for key in ("start", "end", "theme_kappa")} for w in windows],
        }
        details[name] = {
            "n_answers": len(sequence),
            "n_timed": len(timed),
            "fastest_seconds": float(np.percentile(timed, FASTEST_PERCENTILE)) if timed else None,
            "n_fast": sum(1 for s in timed if s < fast),
            "n_vs_final": sum(1 for a in regular if a["item"] in final),
            "trait_kappa_vs_final": vs_final["trait_kappa"],
            **scores,
            "theme_shift": _theme_shift(regular, theme_codes),
            "windows": windows,
        }
        fast_items.extend(
            {
                "annotator": name,
                "assignment": a["assignment"],
                "item": a["item"],
                "text": a["text"],
                "seconds": a["seconds"],
                "control": a["control"] is not None,
                "submitted_at": a["submitted_at"].isoformat(),
            }
            for a in sequence
            if a["seconds"] is not None and a["seconds"] < fast
        )

    pairs, pair_details = [], []
    regular_by_item = defaultdict(dict)
    for answer in answers:
        if answer["control"] is None:
            regular_by_item[answer["item"]][answer["annotator"]] = answer
    for a, b in itertools.combinations(usernames, 2):
        shared = [(item[a], item[b]) for item in regular_by_item.values() if a in item and b in item]
        # A shared item counts when its second answer arrives.
        shared.sort(key=lambda pair: max(pair[0]["submitted_at"], pair[1]["submitted_at"]))
        if not shared:
            continue
        overall = _agreement(shared, theme_index, trait_codes)
        windows = []
        for start, end, part in _windows(shared, size):
            window = {"start": start, "end": end, "n": len(part), **_agreement(part, theme_index, trait_codes)}
            windows.append(window)
            if window["theme_kappa"] is not None and window["theme_kappa"] < threshold:
                warnings.append(
                    {
                        "kind": "pair",
                        "annotator": a,
                        "other": b,
                        "start": start,
                        "end": end,
                        "value": window["theme_kappa"],
                    }
                )
        pairs.append(
            {
                "a": a,
                "b": b,
                "n": len(shared),
                "theme_kappa": overall["theme_kappa"],
                "windows": [{key: w[key] for key in ("start", "end", "theme_kappa")} for w in windows],
            }
        )
        pair_details.append({"a": a, "b": b, "trait_kappa": overall["trait_kappa"], "windows": windows})

    return {
        "annotators": annotators,
        "pairs": pairs,
        "round": round.name,
        "settings": {
            "window": size,
            "threshold": threshold,
            "fast_seconds": fast,
            "control_rate": float(round.control_rate),
        },
        "categories": {"theme": theme_codes, "traits": trait_codes},
        "n_controls": len(controls),
        "annotator_details": details,
        "pair_details": pair_details,
        "fast_items": fast_items,
        "warnings": warnings,
    }


def quality_summary(report: dict) -> dict:
    """The CLI's JSON: ``annotators`` and ``pairs`` with their documented keys only."""
    return {"annotators": report["annotators"], "pairs": report["pairs"]}


__all__ = [
    "annotator_control_counts",
    "annotator_paused",
    "control_get",
    "quality_summary",
    "recalibration_notes",
    "recalibration_notes_unseen",
    "round_annotator_get",
    "round_controls",
    "round_annotator_choices",
    "round_paused_usernames",
    "round_quality",
    "round_quality_visible",
]
