"""Annotators over time: control items, drift windows, speed and theme shift (README "Annotator quality").

Everything is computed from submitted answers in submission order. Control items are read here
and nowhere else among the statistics: agreement between annotators and with the final labels
uses regular items only; control items are scored against their known labels.

Kappas are scikit-learn's ``cohen_kappa_score``, computed with its arithmetic for every window,
pair and label at once from stacked confusion matrices (core.statistics: one scikit-learn call
each took seconds with a few dozen annotators); the theme shift between the first and second half
of an annotator's answers is scipy's chi2_contingency.
Figures that cannot be computed (no item, a single category) are None, never NaN.
"""

from collections import defaultdict

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Count

from core import statistics
from core.stamps import Shown, cached, cached_with_latest, shown
from core.statistics import finite

from .. import agreement
from ..models import (
    AnnotationRound,
    AnnotatorPause,
    Assignment,
    AssignmentStatus,
    ControlItem,
    ItemStatus,
    RecalibrationNote,
    RoundItem,
    Theme,
    Trait,
)
from .corpus import present_traits_codes, theme_ids
from .visibility import round_overview_visible
from .workflow import round_stamp

FINAL_STATUSES = (ItemStatus.UNANIMOUS, ItemStatus.ADJUDICATED)
# The fastest answers are reported as this percentile of an annotator's answer times.
FASTEST_PERCENTILE = 5
# A window as the CLI and the API's summary give it; the details add trait kappas and controls.
WINDOW_KEYS = ("start", "end", "theme_kappa", "n", "theme_kappa_ci")


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
    rows = Assignment.objects.filter(round=round, annotator_id=user.pk, item__control__isnull=False)
    return {"items": rows.count(), "hidden": rows.filter(item__suggestions_hidden=True).count()}


def round_annotator_choices(*, round: AnnotationRound):
    return round.annotators.order_by("username")


def round_paused_usernames(*, round: AnnotationRound) -> set[str]:
    """The annotators whose queue is paused in the round."""
    return set(AnnotatorPause.objects.filter(round=round).values_list("annotator__username", flat=True))


def annotator_paused(*, round: AnnotationRound, user) -> bool:
    return AnnotatorPause.objects.filter(round=round, annotator_id=user.pk).exists()


def recalibration_key(*, round_id: int, annotator_id: int) -> str:
    return f"vivid:recalibration:{round_id}:{annotator_id}"


def annotator_recalibration(*, round: AnnotationRound, user) -> dict:
    """Whether a researcher paused the annotator's queue and whether notes wait for them, for the review
    page on every item: kept in the shared cache until a pause, a resume, a note or its reading
    changes them (services.quality), since they change a few times a round and are read on every answer."""
    return cached(
        key=recalibration_key(round_id=round.pk, annotator_id=user.pk),
        compute=lambda: {
            "paused": annotator_paused(round=round, user=user),
            "notes_waiting": recalibration_notes_unseen(round=round, user=user).exists(),
        },
    )


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
    ``pairs`` with their documented keys). Computed once per change of the round's answers (its
    change stamp, as for the agreement statistics: a draft changes nothing here) and of its quality
    settings, which are read fresh and are part of the key."""
    key, latest, compute = _quality_keys(round)
    return cached_with_latest(key=key, latest_key=latest, compute=compute)


def round_quality_shown(*, round: AnnotationRound, refresh=None) -> Shown:
    """The Quality tab's figures: the current ones when they have been computed, else the latest ones
    with the same settings (from before the last answers, while ``refresh`` brings the current ones:
    see ``core.stamps.shown``)."""
    key, latest, compute = _quality_keys(round)
    return shown(
        key=key, latest_key=latest, compute=compute, max_age=settings.ROUND_FIGURES_STALE_SECONDS, refresh=refresh
    )


def _quality_keys(round: AnnotationRound):
    fresh = AnnotationRound.objects.filter(pk=round.pk).values(
        "status", "quality_window", "quality_threshold", "fast_seconds", "control_rate"
    )[0]
    # The site's smallest window that may warn decides the warnings as the round's settings do.
    options = ":".join(str(value) for value in [*fresh.values(), settings.QUALITY_MIN_WINDOW_ITEMS])
    key = f"vivid:round-quality:{round.pk}:{round_stamp(round_id=round.pk)}:{options}"
    # The latest figures stand in only for the same settings: a new window size shows at once.
    settings_part = options.split(":", 1)[1]
    latest = f"vivid:round-quality-latest:{round.pk}:{settings_part}"

    def compute() -> dict:
        for name, value in fresh.items():
            setattr(round, name, value)
        return _round_quality(round=round)

    return key, latest, compute


def _share(values: list[bool]) -> float | None:
    return float(np.mean(values)) if values else None


def _answers(round: AnnotationRound) -> list[dict]:
    """The round's submitted answers in submission order. Read as plain numbers (the annotator's id,
    the theme's id, the traits as ``present_traits`` bits), which costs a fraction of decoding each
    answer's JSON and joining names in; the names come from maps of a few rows."""
    rows = (
        Assignment.objects.filter(round=round, status=AssignmentStatus.SUBMITTED)
        .values_list(
            "id", "item_id", "annotator_id", "theme_id", "present_traits", "submitted_at", "seconds", "item__control_id"
        )
        .order_by("submitted_at", "id")
    )
    usernames = dict(round.annotators.values_list("pk", "username"))
    themes = {pk: code for code, pk in theme_ids().items()}
    result = []
    for pk, item_id, annotator_id, theme_id, mask, submitted_at, seconds, control_id in rows:
        if annotator_id not in usernames:  # removed from the round since: their answers still count
            usernames[annotator_id] = User.objects.get(pk=annotator_id).get_username()
        result.append(
            {
                "assignment": pk,
                "item": item_id,
                "annotator": usernames[annotator_id],
                "theme": themes.get(theme_id),
                "traits": set(present_traits_codes(mask)),
                "submitted_at": submitted_at,
                "seconds": seconds,
                "control": control_id,
                "text": None,
            }
        )
    # The expression's text is shown for the answers listed as too fast only.
    fast = float(round.fast_seconds)
    quick = [a for a in result if a["seconds"] is not None and a["seconds"] < fast]
    texts = dict(RoundItem.objects.filter(pk__in={a["item"] for a in quick}).values_list("pk", "expression__text"))
    for answer in quick:
        answer["text"] = texts.get(answer["item"])
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


def _kappas(groups, first: tuple, second: tuple, n_groups: int, n_themes: int, trait_codes: list[str]) -> list[dict]:
    """Theme kappa and per-trait kappa of each group of (answer, reference) rows, all groups at once:
    ``first`` and ``second`` are (theme indices, trait bits) of the rows' two sides. A group without a
    row, or whose kappa scikit-learn leaves undefined, gets None."""
    groups = np.asarray(groups, dtype=np.intp)
    n_traits = len(trait_codes)
    theme = statistics.cohen_kappa_from_confusion(
        statistics.stacked_confusions(groups, first[0], second[0], n_groups=n_groups, n_categories=n_themes)
    )
    traits = statistics.cohen_kappa_from_confusion(
        statistics.stacked_confusions(
            (groups[:, None] * n_traits + np.arange(n_traits)).ravel(),
            first[1].ravel(),
            second[1].ravel(),
            n_groups=n_groups * n_traits,
            n_categories=2,
        )
    ).reshape(n_groups, n_traits)
    return [
        {
            "theme_kappa": finite(theme[g]),
            "trait_kappa": {code: finite(traits[g, t]) for t, code in enumerate(trait_codes)},
        }
        for g in range(n_groups)
    ]


def _control_scores(groups, scored, answers: list[dict], controls, n_groups: int, trait_codes: list[str]) -> list[dict]:
    """Accuracy on control items per group of answers (``groups[i]`` is answer i's): exact (theme and
    every trait right), theme, and each trait."""
    rows = np.flatnonzero(scored)
    right = np.zeros((rows.size, 2 + len(trait_codes)))
    for r, i in enumerate(rows):
        answer, control = answers[i], controls[answers[i]["control"]]
        right[r, 0] = answer["theme"] == control["theme"] and answer["traits"] == control["traits"]
        right[r, 1] = answer["theme"] == control["theme"]
        right[r, 2:] = [(code in answer["traits"]) == (code in control["traits"]) for code in trait_codes]
    group = np.asarray(groups, dtype=np.intp)[rows]
    counts = np.bincount(group, minlength=n_groups)
    sums = np.stack([np.bincount(group, weights=column, minlength=n_groups) for column in right.T], axis=1)
    results = []
    for g in range(n_groups):
        n = int(counts[g])
        # The share exactly as numpy's mean of the booleans: an exact count over n.
        shares = [float(value / n) if n else None for value in sums[g]]
        results.append(
            {
                "n_controls": n,
                "control_accuracy": shares[0],
                "control_theme_accuracy": shares[1],
                "control_traits": dict(zip(trait_codes, shares[2:], strict=True)),
            }
        )
    return results


def _theme_shift(themes: np.ndarray, theme_codes: list[str]) -> dict:
    """Theme counts in the first and second half of an annotator's answers (theme indices, -1 for
    a theme outside the taxonomy), and scipy's chi-square test."""
    half = len(themes) // 2
    counts = [
        np.bincount(part[part >= 0], minlength=len(theme_codes)).tolist() for part in (themes[:half], themes[half:])
    ]
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
    from scipy.stats import chi2_contingency  # where used: core/warmup.py says why

    test = chi2_contingency(table)
    result["chi2"], result["p_value"], result["dof"] = finite(test.statistic), finite(test.pvalue), int(test.dof)
    return result


def _round_quality(*, round: AnnotationRound) -> dict:
    return quality_figures(
        answers=_answers(round),
        final=_final_labels(round),
        controls={
            c["id"]: {"theme": c["theme__code"], "traits": set(c["traits"])}
            for c in ControlItem.objects.filter(round=round).values("id", "theme__code", "traits")
        },
        round_annotators=list(round.annotators.values_list("username", flat=True)),
        theme_codes=list(Theme.objects.order_by("number").values_list("code", flat=True)),
        trait_codes=list(Trait.objects.order_by("number").values_list("code", flat=True)),
        name=round.name,
        window=round.quality_window,
        threshold=round.quality_threshold,
        fast_seconds=round.fast_seconds,
        control_rate=round.control_rate,
        min_window_items=settings.QUALITY_MIN_WINDOW_ITEMS,
    )


def _window_intervals(groups, first, second, *, n_groups: int, n_categories: int, n_resamples: int, seed: int):
    """The percentile bootstrap interval of every window's theme kappa, each window's items resampled
    within it (a stratum per window), all windows in one bootstrap: (low, high) arrays with NaN where
    no interval is defined (fewer than ``agreement.MIN_DEFINED_REPLICATES`` of the resamples give a
    kappa, as for the statistics page's intervals).

    Each row adds to its window's sums of ``statistics.cohen_kappa_linear`` (a block of columns per
    window), so one sparse product per batch of resamples gives every window's sums, and that
    statistic's arithmetic turns them into kappas."""
    low, high = np.full(n_groups, np.nan), np.full(n_groups, np.nan)
    groups = np.asarray(groups, dtype=np.intp)
    if groups.size == 0 or n_resamples < 1:
        return low, high
    # Rows in window order: each stratum's rows are then a slice of the resamples' weights.
    order = np.argsort(groups, kind="stable")
    groups = groups[order]
    linear = statistics.cohen_kappa_linear(np.asarray(first)[order], np.asarray(second)[order], n_categories)
    width = linear.sums.shape[1]
    rows, columns = np.nonzero(linear.sums)
    from scipy import sparse  # not at the top: see core.statistics

    spread = sparse.csr_matrix(
        (linear.sums[rows, columns], (groups[rows] * width + columns, rows)), shape=(n_groups * width, groups.size)
    )

    k = int(n_categories)

    def kappas(weights):
        # windows x sums x resamples, and ``cohen_kappa_linear``'s arithmetic along the sums: laid out
        # so, nothing of the size of the resamples is copied.
        totals = np.asarray(spread @ np.atleast_2d(weights).T).reshape(n_groups, width, -1)
        rows, cols, trace = totals[:, :k], totals[:, k : 2 * k], totals[:, 2 * k]
        total = rows.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected_disagreement = total - (rows * cols).sum(axis=1) / total
            kappa = 1 - (total - trace) / expected_disagreement
        return np.where((total > 0) & (expected_disagreement > 0), kappa, np.nan)

    distribution = statistics.bootstrap_distribution(
        statistic=kappas, n_rows=groups.size, strata=groups, n_resamples=n_resamples, seed=seed
    )
    # Every window's percentiles at once: the undefined resamples sort last and are left out.
    defined = np.isfinite(distribution)
    count = defined.sum(axis=1)
    ordered = np.sort(np.where(defined, distribution, np.inf), axis=1)
    usable = (count > 0) & (count >= agreement.MIN_DEFINED_REPLICATES * n_resamples)
    tail = (1 - agreement.CONFIDENCE_LEVEL) / 2
    bounds = []
    for share in (tail, 1 - tail):
        # np.quantile's default (linear) method on each row's defined values.
        position = share * np.maximum(count - 1, 0)
        below = np.floor(position).astype(np.intp)
        above = np.minimum(below + 1, np.maximum(count - 1, 0))
        a = np.take_along_axis(ordered, below[:, None], axis=1)[:, 0]
        b = np.take_along_axis(ordered, above[:, None], axis=1)[:, 0]
        with np.errstate(invalid="ignore"):
            bounds.append(np.where(usable, a + (b - a) * (position - below), np.nan))
    low[:], high[:] = bounds
    return low, high


def _interval(low: float, high: float) -> list[float] | None:
    return [float(low), float(high)] if np.isfinite(low) and np.isfinite(high) else None


def quality_figures(
    *,
    answers: list[dict],
    final: dict[int, dict],
    controls: dict[int, dict],
    round_annotators: list[str],
    theme_codes: list[str],
    trait_codes: list[str],
    name: str,
    window: int,
    threshold: float,
    fast_seconds: float,
    control_rate: float,
    min_window_items: int = 20,
    n_resamples: int = agreement.DEFAULT_RESAMPLES,
    seed: int = agreement.DEFAULT_SEED,
) -> dict:
    """The figures of ``round_quality`` from what it read: the submitted answers in submission order
    (``_answers``), the final labels, the controls' known labels and the round's annotators. No
    database: the benchmark calls it on synthetic answers.

    Every kappa of every window and pair comes from one confusion-matrix stack per label set
    (``_kappas``), and each item's answers are paired once, not once per pair of annotators.
    Every window's theme kappa has a bootstrap interval over its items (``_window_intervals``, one
    bootstrap for all of them). A window warns when it holds at least ``min_window_items`` items
    and even the upper end of its interval is below ``threshold``: a low kappa of a few items, or
    one whose interval reaches the threshold, is shown (with its n) but not warned about.
    """
    theme_index = {code: i for i, code in enumerate(theme_codes)}
    size = max(int(window), 1)
    fast = float(fast_seconds)
    threshold = float(threshold)
    usernames = sorted(set(round_annotators) | {a["annotator"] for a in answers})
    position = {username: u for u, username in enumerate(usernames)}

    # Per answer: its annotator, its place in that annotator's sequence, its labels and references.
    by_annotator = defaultdict(list)
    place = np.zeros(len(answers), dtype=np.intp)
    for i, answer in enumerate(answers):
        sequence = by_annotator[answer["annotator"]]
        place[i] = len(sequence)
        sequence.append(i)
    annotator = np.array([position[a["annotator"]] for a in answers], dtype=np.intp)
    theme = np.array([theme_index.get(a["theme"], -1) for a in answers], dtype=np.intp)
    bits = agreement.trait_bits([a["traits"] for a in answers], trait_codes)
    regular = np.array([a["control"] is None for a in answers], dtype=bool)
    scored = np.array([a["control"] in controls for a in answers], dtype=bool)
    references = [final.get(a["item"]) if a["control"] is None else None for a in answers]
    with_final = np.array([reference is not None for reference in references], dtype=bool)
    final_theme = np.array(
        [theme_index.get(reference["theme"], -1) if reference is not None else -1 for reference in references],
        dtype=np.intp,
    )
    final_bits = agreement.trait_bits(
        [reference["traits"] if reference else () for reference in references], trait_codes
    )
    # Kappas need both themes in the taxonomy (the trait kappas too: the same answers for every label).
    kept = with_final & (theme >= 0) & (final_theme >= 0)

    # Windows of each annotator's answers, numbered across annotators.
    lengths = np.array([len(by_annotator.get(u, ())) for u in usernames], dtype=np.intp)
    n_windows = -(-lengths // size)
    first_window = np.concatenate([[0], np.cumsum(n_windows)[:-1]]).astype(np.intp)
    window_of = first_window[annotator] + place // size if answers else np.zeros(0, dtype=np.intp)
    total_windows = int(n_windows.sum())

    def kappas(groups, rows, n_groups):
        return _kappas(
            groups[rows],
            (theme[rows], bits[rows]),
            (final_theme[rows], final_bits[rows]),
            n_groups,
            len(theme_codes),
            trait_codes,
        )

    vs_final = kappas(annotator, kept, len(usernames))
    window_vs_final = kappas(window_of, kept, total_windows)
    window_scores = _control_scores(window_of, scored, answers, controls, total_windows, trait_codes)
    overall_scores = _control_scores(annotator, scored, answers, controls, len(usernames), trait_codes)
    window_n_final = np.bincount(window_of[with_final], minlength=total_windows)
    n_vs_final = np.bincount(annotator[with_final], minlength=len(usernames))

    pairs, pair_details, pair_rows, pair_windows = _pairs(
        answers, usernames, annotator, regular, theme, bits, size, len(theme_codes), trait_codes
    )
    # One bootstrap for every window, the annotators' (against the final labels) and then the pairs'.
    low, high = _window_intervals(
        np.concatenate([window_of[kept], pair_rows[0] + total_windows]),
        np.concatenate([theme[kept], pair_rows[1]]),
        np.concatenate([final_theme[kept], pair_rows[2]]),
        n_groups=total_windows + len(pair_windows),
        n_categories=len(theme_codes),
        n_resamples=n_resamples,
        seed=seed,
    )
    window_n = np.bincount(window_of[kept], minlength=total_windows)
    minimum = max(int(min_window_items), 1)

    def warns(window: dict) -> bool:
        kappa, interval = window["theme_kappa"], window["theme_kappa_ci"]
        return (
            window["n"] >= minimum
            and kappa is not None
            and kappa < threshold
            and interval is not None
            and interval[1] < threshold
        )

    annotators, details, warnings, fast_items = {}, {}, [], []
    for u, username in enumerate(usernames):
        sequence = [answers[i] for i in by_annotator.get(username, [])]
        timed = [a["seconds"] for a in sequence if a["seconds"] is not None]
        windows = []
        for w, start in enumerate(range(0, len(sequence), size)):
            g = first_window[u] + w
            part_end = min(start + size, len(sequence))
            window = {
                "start": start + 1,
                "end": part_end,
                "theme_kappa": None,
                "from": sequence[start]["submitted_at"].isoformat(),
                "to": sequence[part_end - 1]["submitted_at"].isoformat(),
                "n_final": int(window_n_final[g]),
                **window_vs_final[g],
                **window_scores[g],
                "n": int(window_n[g]),
                "theme_kappa_ci": _interval(low[g], high[g]),
            }
            window["warns"] = warns(window)
            windows.append(window)
            if window["warns"]:
                warnings.append(
                    {
                        "kind": "final",
                        "annotator": username,
                        "start": start + 1,
                        "end": part_end,
                        "value": window["theme_kappa"],
                        "n": window["n"],
                        "theme_kappa_ci": window["theme_kappa_ci"],
                    }
                )
        scores = overall_scores[u]
        own = np.asarray(by_annotator.get(username, []), dtype=np.intp)
        annotators[username] = {
            "n": int(regular[own].sum()),
            "median_seconds": float(np.median(timed)) if timed else None,
            "fast_share": _share([s < fast for s in timed]),
            "control_accuracy": scores["control_accuracy"],
            "kappa_vs_final": vs_final[u]["theme_kappa"],
            "windows": [{key: w[key] for key in WINDOW_KEYS} for w in windows],
        }
        details[username] = {
            "n_answers": len(sequence),
            "n_timed": len(timed),
            "fastest_seconds": float(np.percentile(timed, FASTEST_PERCENTILE)) if timed else None,
            "n_fast": sum(1 for s in timed if s < fast),
            "n_vs_final": int(n_vs_final[u]),
            "trait_kappa_vs_final": vs_final[u]["trait_kappa"],
            **scores,
            "theme_shift": _theme_shift(theme[own[regular[own]]], theme_codes),
            "windows": windows,
        }
        fast_items.extend(
            {
                "annotator": username,
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

    for g, (pair, window) in enumerate(pair_windows, start=total_windows):
        window["theme_kappa_ci"] = _interval(low[g], high[g])
        window["warns"] = warns(window)
        if window["warns"]:
            warnings.append(
                {
                    "kind": "pair",
                    "annotator": pair["a"],
                    "other": pair["b"],
                    "start": window["start"],
                    "end": window["end"],
                    "value": window["theme_kappa"],
                    "n": window["n"],
                    "theme_kappa_ci": window["theme_kappa_ci"],
                }
            )
    for pair in pairs:
        pair["windows"] = [{key: w[key] for key in WINDOW_KEYS} for w in pair.pop("_windows")]
    return {
        "annotators": annotators,
        "pairs": pairs,
        "round": name,
        "settings": {
            "window": size,
            "threshold": threshold,
            "fast_seconds": fast,
            "control_rate": float(control_rate),
            "min_window_items": minimum,
        },
        "interval_method": statistics.interval_method(
            unit="items, within each window", n_resamples=n_resamples, confidence=agreement.CONFIDENCE_LEVEL
        ),
        "categories": {"theme": theme_codes, "traits": trait_codes},
        "n_controls": len(controls),
        "annotator_details": details,
        "pair_details": pair_details,
        "fast_items": fast_items,
        "warnings": warnings,
    }


def _pairs(answers, usernames, annotator, regular, theme, bits, size, n_themes, trait_codes):
    """Per pair of annotators, the theme and per-trait kappa of their shared regular items, overall
    and per window of ``size`` shared items in the order their second answer came. Returns the pairs
    (their windows under ``_windows`` for now), their details, the rows the window kappas are
    computed from (window, one theme, the other: for the intervals) and every (pair, window) in
    window order.

    The items' answers are paired once, every pair of annotators at a time, instead of one scan of
    every item per pair of annotators."""
    n_users = len(usernames)
    answered = np.flatnonzero(regular)
    # Items numbered in the order of their first regular answer.
    number = {}
    item = np.array([number.setdefault(answers[i]["item"], len(number)) for i in answered], dtype=np.intp)
    # One answer per item and annotator, the last one, sorted by item and then annotator.
    keys, last = np.unique((item * n_users + annotator[answered])[::-1], return_index=True)
    chosen = answered[answered.size - 1 - last]
    item, user = keys // max(n_users, 1), keys % max(n_users, 1)
    # Each item's annotators are consecutive: the entries ``offset`` apart within an item are its pairs.
    first, second = [np.empty(0, np.intp)], [np.empty(0, np.intp)]
    for offset in range(1, np.bincount(item).max(initial=0)):
        same = item[offset:] == item[:-offset]
        first.append(np.flatnonzero(same))
        second.append(first[-1] + offset)
    first, second = np.concatenate(first), np.concatenate(second)
    pair = agreement.pair_index(user[first], user[second], n_users)
    order, users, first, second = item[first], (user[first], user[second]), chosen[first], chosen[second]
    # A shared item counts when its second answer arrives: rank the answers by time, equal times equal.
    moment = {value: rank for rank, value in enumerate(sorted({a["submitted_at"] for a in answers}))}
    when = np.array([moment[a["submitted_at"]] for a in answers], dtype=np.intp)
    latest = np.maximum(when[first], when[second])
    # Within a pair, by the later answer's time, and in item order where times are equal (a stable sort).
    ordering = np.lexsort((order, latest, pair))
    pair, first, second = pair[ordering], first[ordering], second[ordering]
    users = (users[0][ordering], users[1][ordering])

    present, starts, counts = np.unique(pair, return_index=True, return_counts=True)
    compact = np.repeat(np.arange(present.size), counts)
    n_windows = -(-counts // size)
    first_window = np.concatenate([[0], np.cumsum(n_windows)[:-1]]).astype(np.intp)
    window_of = first_window[compact] + (np.arange(pair.size) - starts[compact]) // size
    kept = (theme[first] >= 0) & (theme[second] >= 0)

    def kappas(groups, n_groups):
        return _kappas(
            groups[kept],
            (theme[first][kept], bits[first][kept]),
            (theme[second][kept], bits[second][kept]),
            n_groups,
            n_themes,
            trait_codes,
        )

    overall = kappas(compact, present.size)
    per_window = kappas(window_of, int(n_windows.sum()))
    pairs, pair_details, every_window = [], [], []
    for p, start in enumerate(starts):
        a, b = usernames[users[0][start]], usernames[users[1][start]]
        n = int(counts[p])
        windows = []
        for w, offset in enumerate(range(0, n, size)):
            end = min(offset + size, n)
            window = {"start": offset + 1, "end": end, "n": end - offset, **per_window[first_window[p] + w]}
            windows.append(window)
        pairs.append({"a": a, "b": b, "n": n, "theme_kappa": overall[p]["theme_kappa"], "_windows": windows})
        pair_details.append({"a": a, "b": b, "trait_kappa": overall[p]["trait_kappa"], "windows": windows})
        every_window.extend((pairs[-1], window) for window in windows)
    rows = (window_of[kept], theme[first][kept], theme[second][kept])
    return pairs, pair_details, rows, every_window


def quality_summary(report: dict) -> dict:
    """The CLI's JSON: ``annotators`` and ``pairs`` with their documented keys only."""
    return {"annotators": report["annotators"], "pairs": report["pairs"]}


__all__ = [
    "annotator_control_counts",
    "annotator_paused",
    "annotator_recalibration",
    "recalibration_key",
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
