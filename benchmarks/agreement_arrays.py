"""The round's quality figures and agreement statistics, computed on arrays against the library per pair.

No database: a synthetic round (every item answered by two annotators, 5% control items in each
queue, a fifth of the items with hidden suggestions, most disputes adjudicated, answers at times
that sometimes coincide) is handed to the pure computations behind the Quality tab and the
Statistics page, ``quality_figures`` and ``agreement_figures`` (1,000 bootstrap resamples, as the
page). "old" is the computation as it was, kept below: one scikit-learn ``cohen_kappa_score`` per
window, label and pair of annotators, each pair scanning every item. The two results are
compared (floats to 1e-9) after they are timed; the script stops if they differ.

Sizes: 5,000 items x 4 annotators and 2,000 items x 40 annotators, and each with a tenth of the
items; the last lines give how much longer ten times the items take. Best of ``--repeat`` for
the new code; the old one once (it takes tens of seconds at 40 annotators; ``--skip-old`` leaves
it out). The old code shares the bootstrap's draws with the new (core.statistics), so its times
include that part already made faster.

OpenBLAS runs its matrix products on every core by default; on a machine whose cores are busy
with other work its threads wait for each other, which can double the statistics' time.
``--blas-threads 1`` shows the time without that wait.

    .venv/bin/python benchmarks/agreement_arrays.py [--repeat 7] [--skip-old] [--blas-threads 1]
        [--sizes 500x4,5000x4,200x40,2000x40]
"""

import argparse
import datetime
import itertools
import math
import os
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

THEMES = ["love", "virtues", "criticism", "work_nature", "social_relationships", "life_lessons", "other"]
TRAITS = ["literal", "sino_vietnamese", "uncommon_vocabulary", "folk_knowledge", "pragmatic"]
WINDOW = 50
RESAMPLES = 1000
SEED = 20240601


# --- A synthetic round ----------------------------------------------------------------------------


def synthetic_round(n_items: int, n_annotators: int, *, per_item: int = 2, seed: int = 1) -> dict:
    """What ``_round_quality`` and ``_round_agreement_stats`` read from the database, made up."""
    rng = np.random.default_rng(seed)
    names = [f"annotator_{i:02d}" for i in range(n_annotators)]
    truth_theme = rng.choice(7, n_items, p=[0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05])
    truth_traits = rng.random((n_items, len(TRAITS))) < 0.3
    llm = {
        100_000 + item: {t for t, on in zip(TRAITS, truth_traits[item] ^ (rng.random(5) < 0.2), strict=True) if on}
        for item in range(n_items)
    }
    hidden = rng.random(n_items) < 0.2
    n_controls = 20
    control_labels = {
        n_items + c: {"theme": THEMES[rng.integers(7)], "traits": {t for t in TRAITS if rng.random() < 0.3}}
        for c in range(n_controls)
    }

    queues = defaultdict(list)
    for item in range(n_items):
        for a in rng.choice(n_annotators, per_item, replace=False):
            queues[int(a)].append(item)
    labels, answers = {}, []
    base = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    for a, queue in queues.items():
        queue = [int(i) for i in rng.permutation(queue)]
        for _ in range(round(0.05 * len(queue))):
            queue.insert(int(rng.integers(len(queue) + 1)), n_items + int(rng.integers(n_controls)))
        # The last 2% of each queue is still unanswered.
        for k, item in enumerate(queue[: int(0.98 * len(queue))]):
            control = item >= n_items
            known = control_labels[item] if control else None
            theme = known["theme"] if control else THEMES[truth_theme[item]]
            traits = (
                set(known["traits"]) if control else {t for t, on in zip(TRAITS, truth_traits[item], strict=True) if on}
            )
            if rng.random() < 0.25:
                theme = THEMES[rng.integers(7)]
            traits ^= {t for t in TRAITS if rng.random() < 0.08}
            answers.append(
                {
                    "assignment": len(answers) + 1,
                    "item": item,
                    "annotator": names[a],
                    "theme": theme,
                    "traits": traits,
                    # Whole seconds: answers of different annotators often share a time.
                    "submitted_at": base + datetime.timedelta(seconds=k * 30 + int(rng.integers(0, 30))),
                    "seconds": None if rng.random() < 0.1 else float(np.round(rng.lognormal(2, 1), 2)),
                    "control": item if control else None,
                    "text": f"Câu {item}",
                }
            )
            if not control:
                labels[(item, names[a])] = (theme, traits)
    answers.sort(key=lambda answer: (answer["submitted_at"], answer["assignment"]))

    by_item = defaultdict(list)
    for (item, _name), label in sorted(labels.items()):
        by_item[item].append(label)
    item_rows, final = [], {}
    for item in range(n_items):
        given = by_item.get(item, [])
        status, final_theme = "pending", None
        if len(given) == per_item:
            status = "unanimous" if all(label == given[0] for label in given) else "needs_adjudication"
            if status == "needs_adjudication" and rng.random() < 0.8:
                status = "adjudicated"
            if status in ("unanimous", "adjudicated"):
                final_theme = given[0][0]
                final[item] = {"theme": final_theme, "traits": set(given[0][1])}
        item_rows.append((item, 100_000 + item, bool(hidden[item]), status, final_theme))
    rows = [
        {
            "item": item,
            "annotator": name,
            "theme": theme,
            "traits": sorted(traits),
            "suggestions_hidden": bool(hidden[item]),
        }
        for (item, name), (theme, traits) in sorted(labels.items())
    ]
    return {
        "quality": {
            "answers": answers,
            "final": final,
            "controls": control_labels,
            "round_annotators": names,
            "theme_codes": THEMES,
            "trait_codes": TRAITS,
            "name": "synthetic",
            "window": WINDOW,
            "threshold": 0.4,
            "fast_seconds": 3.0,
            "control_rate": 0.05,
        },
        "stats": {
            "rows": rows,
            "item_rows": item_rows,
            "final": final,
            "suggestions": llm,
            "round_annotators": names,
            "theme_codes": THEMES,
            "trait_codes": TRAITS,
            "name": "synthetic",
            "status": "locked",
            "annotators_per_item": per_item,
            "hide_suggestions_fraction": 0.2,
            "n_resamples": RESAMPLES,
            "seed": SEED,
        },
    }


# --- The reference: the computation as it was, one library call per pair and window -------------


def old_kappa(first, second, n_categories):
    from annotation import agreement

    return agreement.cohen_kappa(first, second, n_categories) if first else None


def old_share(values):
    return float(np.mean(values)) if values else None


def old_agreement(pairs, theme_index, trait_codes):
    kept = [(a, b) for a, b in pairs if a["theme"] in theme_index and b["theme"] in theme_index]
    return {
        "theme_kappa": old_kappa(
            [theme_index[a["theme"]] for a, _ in kept], [theme_index[b["theme"]] for _, b in kept], len(theme_index)
        ),
        "trait_kappa": {
            code: old_kappa([int(code in a["traits"]) for a, _ in kept], [int(code in b["traits"]) for _, b in kept], 2)
            for code in trait_codes
        },
    }


def old_control_scores(answers, controls, trait_codes):
    scored = [(a, controls[a["control"]]) for a in answers if a["control"] in controls]
    return {
        "n_controls": len(scored),
        "control_accuracy": old_share([a["theme"] == c["theme"] and a["traits"] == c["traits"] for a, c in scored]),
        "control_theme_accuracy": old_share([a["theme"] == c["theme"] for a, c in scored]),
        "control_traits": {
            code: old_share([(code in a["traits"]) == (code in c["traits"]) for a, c in scored]) for code in trait_codes
        },
    }


def old_theme_shift(regular, theme_codes):
    from scipy.stats import chi2_contingency

    from annotation import agreement
    from core.statistics import finite

    half = len(regular) // 2
    counts = [
        [sum(1 for a in part if a["theme"] == code) for code in theme_codes]
        for part in (regular[:half], regular[half:])
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
    test = chi2_contingency(table)
    result["chi2"], result["p_value"], result["dof"] = finite(test.statistic), finite(test.pvalue), int(test.dof)
    return result


def old_windows(sequence, size):
    return [
        (start + 1, min(start + size, len(sequence)), sequence[start : start + size])
        for start in range(0, len(sequence), size)
    ]


def old_quality(
    *,
    answers,
    final,
    controls,
    round_annotators,
    theme_codes,
    trait_codes,
    name,
    window,
    threshold,
    fast_seconds,
    control_rate,
):
    theme_index = {code: i for i, code in enumerate(theme_codes)}
    size = max(int(window), 1)
    fast = float(fast_seconds)
    threshold = float(threshold)
    usernames = sorted(set(round_annotators) | {a["annotator"] for a in answers})
    by_annotator = defaultdict(list)
    for answer in answers:
        by_annotator[answer["annotator"]].append(answer)
    annotators, details, warned, fast_items = {}, {}, [], []
    for username in usernames:
        sequence = by_annotator.get(username, [])
        regular = [a for a in sequence if a["control"] is None]
        timed = [a["seconds"] for a in sequence if a["seconds"] is not None]
        vs_final = old_agreement(
            [(a, final[a["item"]]) for a in regular if a["item"] in final], theme_index, trait_codes
        )
        windows = []
        for start, end, part in old_windows(sequence, size):
            with_final = [(a, final[a["item"]]) for a in part if a["control"] is None and a["item"] in final]
            window = {
                "start": start,
                "end": end,
                "theme_kappa": None,
                "from": part[0]["submitted_at"].isoformat(),
                "to": part[-1]["submitted_at"].isoformat(),
                "n_final": len(with_final),
                **old_agreement(with_final, theme_index, trait_codes),
                **old_control_scores(part, controls, trait_codes),
            }
            windows.append(window)
            if window["theme_kappa"] is not None and window["theme_kappa"] < threshold:
                warned.append(
                    {"kind": "final", "annotator": username, "start": start, "end": end, "value": window["theme_kappa"]}
                )
        scores = old_control_scores(sequence, controls, trait_codes)
        annotators[username] = {
            "n": len(regular),
            "median_seconds": float(np.median(timed)) if timed else None,
            "fast_share": old_share([s < fast for s in timed]),
            "control_accuracy": scores["control_accuracy"],
            "kappa_vs_final": vs_final["theme_kappa"],
            "windows": [{key: w[key] for key in ("start", "end", "theme_kappa")} for w in windows],
        }
        details[username] = {
            "n_answers": len(sequence),
            "n_timed": len(timed),
            "fastest_seconds": float(np.percentile(timed, 5)) if timed else None,
            "n_fast": sum(1 for s in timed if s < fast),
            "n_vs_final": sum(1 for a in regular if a["item"] in final),
            "trait_kappa_vs_final": vs_final["trait_kappa"],
            **scores,
            "theme_shift": old_theme_shift(regular, theme_codes),
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
    pairs, pair_details = [], []
    regular_by_item = defaultdict(dict)
    for answer in answers:
        if answer["control"] is None:
            regular_by_item[answer["item"]][answer["annotator"]] = answer
    for a, b in itertools.combinations(usernames, 2):
        shared = [(item[a], item[b]) for item in regular_by_item.values() if a in item and b in item]
        shared.sort(key=lambda pair: max(pair[0]["submitted_at"], pair[1]["submitted_at"]))
        if not shared:
            continue
        overall = old_agreement(shared, theme_index, trait_codes)
        windows = []
        for start, end, part in old_windows(shared, size):
            window = {"start": start, "end": end, "n": len(part), **old_agreement(part, theme_index, trait_codes)}
            windows.append(window)
            if window["theme_kappa"] is not None and window["theme_kappa"] < threshold:
                warned.append(
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
        "round": name,
        "settings": {"window": size, "threshold": threshold, "fast_seconds": fast, "control_rate": float(control_rate)},
        "categories": {"theme": theme_codes, "traits": trait_codes},
        "n_controls": len(controls),
        "annotator_details": details,
        "pair_details": pair_details,
        "fast_items": fast_items,
        "warnings": warned,
    }


def old_pooled_confusion(ratings, n_categories, items=None):
    confusion = np.zeros((n_categories, n_categories), dtype=int)
    columns = ratings if items is None else ratings[:, items]
    for i, j in itertools.combinations(range(ratings.shape[0]), 2):
        both = ~np.isnan(columns[i]) & ~np.isnan(columns[j])
        np.add.at(confusion, (columns[i, both].astype(np.intp), columns[j, both].astype(np.intp)), 1)
    return confusion


def old_pair_agreement(first, second, n_categories, *, binary=False):
    from annotation import agreement

    first = np.asarray(first, dtype=np.intp)
    second = np.asarray(second, dtype=np.intp)
    n = len(first)
    result = {"n": n, "cohen_kappa": None, "percent_agreement": None, "reasons": {}}
    if n == 0:
        result["reasons"] = {"cohen_kappa": agreement.NO_ITEMS, "percent_agreement": agreement.NO_ITEMS}
        return result
    result["percent_agreement"] = float(100 * np.mean(first == second))
    result["cohen_kappa"] = agreement.cohen_kappa(first, second, n_categories)
    if result["cohen_kappa"] is None:
        result["reasons"]["cohen_kappa"] = agreement.SINGLE_CATEGORY
    if binary:
        result["prevalence"] = float(np.mean(np.concatenate([first, second]) == 1))
    return result


def old_label_figures(ratings, n_categories, binary, per_item, annotators):
    """``agreement._label_figures`` as it was: its pairwise kappas and pooled confusion pair by pair."""
    from annotation import agreement
    from core import statistics

    n_annotators = ratings.shape[0]
    annotators = annotators or [str(i) for i in range(n_annotators)]
    items = agreement.complete_items(ratings, per_item) if per_item >= 2 else np.array([], dtype=np.intp)
    n = int(items.size)
    pairable = np.flatnonzero((~np.isnan(ratings)).sum(axis=0) >= 2)
    result = {
        "n": n,
        "n_pairable": int(pairable.size),
        "percent_agreement": None,
        "observed_agreement": None,
        "cohen_kappa": None,
        "cohen_kappa_ci": None,
        "krippendorff_alpha": None,
        "krippendorff_alpha_ci": None,
        "fleiss_kappa": None,
        "fleiss_kappa_ci": None,
        "pabak": None,
    }
    if binary:
        result |= {"prevalence": None, "prevalence_index": None, "bias_index": None}
    reasons = {}
    result["reasons"] = reasons
    jobs = []
    if n_annotators < 2 or per_item < 2:
        for key in [k for k, v in result.items() if v is None]:
            reasons[key] = agreement.TOO_FEW_ANNOTATORS
        return result, jobs
    confusion = old_pooled_confusion(ratings, n_categories, items)
    pairs = int(confusion.sum())
    if binary:
        rated = ratings[:, items]
        rated = rated[~np.isnan(rated)]
        result["prevalence"] = float(rated.mean()) if rated.size else None
    if pairs:
        po = float(np.trace(confusion) / pairs)
        result["observed_agreement"] = po
        result["percent_agreement"] = 100 * po
        result["pabak"] = (n_categories * po - 1) / (n_categories - 1)
        if binary:
            result["prevalence_index"] = float(abs(confusion[1, 1] - confusion[0, 0]) / pairs)
            result["bias_index"] = float(abs(confusion[0, 1] - confusion[1, 0]) / pairs)
    codes = agreement.item_codes(ratings, items, per_item)
    if n_annotators == 2:
        result["cohen_kappa"] = agreement.cohen_kappa(codes[:, 0], codes[:, 1], n_categories) if n else None
        if result["cohen_kappa"] is not None:
            onehot = statistics.pair_one_hot(codes[:, 0], codes[:, 1], n_categories)
            jobs.append(("cohen_kappa_ci", items, lambda w: statistics.cohen_kappa_weighted(onehot, w, n_categories)))
    else:
        reasons["cohen_kappa"] = reasons["cohen_kappa_ci"] = agreement.NOT_TWO_ANNOTATORS
        pairwise = []
        for i, j in itertools.combinations(range(n_annotators), 2):
            both = ~np.isnan(ratings[i]) & ~np.isnan(ratings[j])
            pair = old_pair_agreement(ratings[i, both], ratings[j, both], n_categories)
            pairwise.append({"annotators": [annotators[i], annotators[j]], **pair})
        result["pairwise"] = pairwise
    result["fleiss_kappa"] = agreement.fleiss(codes, n_categories)
    if n_annotators == 2:
        reasons["fleiss_kappa_ci"] = agreement.COHEN_FOR_TWO
    elif result["fleiss_kappa"] is not None:
        counts = statistics.category_counts(codes, n_categories)
        jobs.append(("fleiss_kappa_ci", items, lambda w: statistics.fleiss_kappa_weighted(counts, w)))
    result["krippendorff_alpha"] = agreement.alpha(ratings, n_categories)
    if result["krippendorff_alpha"] is not None:
        contributions = statistics.coincidences(ratings[:, pairable], n_categories)
        jobs.append(
            (
                "krippendorff_alpha_ci",
                pairable,
                lambda w: statistics.krippendorff_alpha_weighted(contributions, w, n_categories),
            )
        )
    return result, jobs


def old_labels_agreement(labels, *, per_item, annotators, n_resamples, seed):
    from annotation import agreement

    results, jobs = {}, defaultdict(list)
    for label, (ratings, n_categories, binary) in labels.items():
        result, label_jobs = old_label_figures(ratings, n_categories, binary, per_item, annotators)
        results[label] = result
        for ci_key, items, replicate in label_jobs:
            jobs[(ratings.shape[1], items.tobytes())].append((label, ci_key, items.size, replicate))
    for group in jobs.values():
        cis = agreement.bootstrap_cis([job[3] for job in group], group[0][2], n_resamples=n_resamples, seed=seed)
        for (label, ci_key, _n, _replicate), (ci, reason) in zip(group, cis, strict=True):
            results[label][ci_key] = ci
            if reason:
                results[label]["reasons"][ci_key] = reason
    for result in results.values():
        agreement._explain_missing(result)
    return results


def old_anchoring(rows, item_rows, suggestions, trait_codes, hide_suggestions_fraction, *, n_resamples, seed):
    from annotation import agreement

    if suggestions is None:
        return {"available": False, "reason": agreement.NO_SUGGESTIONS, "traits": {}, "overall": None}
    info = {item_id: (expression_id, hidden) for item_id, expression_id, hidden, *_ in item_rows}
    kept = [r for r in rows if info[r["item"]][0] in suggestions]
    matches = np.array(
        [[(code in r["traits"]) == (code in suggestions[info[r["item"]][0]]) for code in trait_codes] for r in kept],
        dtype=float,
    ).reshape(len(kept), len(trait_codes))
    items, position = np.unique([r["item"] for r in kept], return_inverse=True)
    reviews = np.bincount(position, minlength=items.size)
    per_item = np.stack(
        [np.bincount(position, weights=matches[:, t], minlength=items.size) for t in range(len(trait_codes))], axis=1
    )
    per_item = per_item / np.maximum(reviews, 1)[:, None]
    figures = np.column_stack([per_item.mean(axis=1), per_item]).T
    hidden = np.array([info[item][1] for item in items], dtype=bool)
    results = agreement.rate_differences(figures[:, ~hidden], figures[:, hidden], n_resamples=n_resamples, seed=seed)
    return {
        "available": True,
        "hide_suggestions_fraction": hide_suggestions_fraction,
        "overall": results[0],
        "traits": dict(zip(trait_codes, results[1:], strict=True)),
    }


def old_stats(
    *,
    rows,
    item_rows,
    final,
    suggestions,
    round_annotators,
    theme_codes,
    trait_codes,
    name,
    status,
    annotators_per_item,
    hide_suggestions_fraction,
    n_resamples,
    seed,
):
    from annotation import agreement
    from annotation.selectors import stats
    from core import statistics

    theme_index = {code: i for i, code in enumerate(theme_codes)}
    annotators = sorted(set(round_annotators) | {r["annotator"] for r in rows})
    items = [row[0] for row in item_rows]
    per_item = min(annotators_per_item, len(annotators)) if annotators else 0
    themes = {(r["annotator"], r["item"]): theme_index.get(r["theme"]) for r in rows}
    theme_ratings = agreement.ratings_matrix(themes, annotators=annotators, items=items)
    trait_sets = {(r["annotator"], r["item"]): set(r["traits"]) for r in rows}
    trait_ratings = {
        code: agreement.ratings_matrix(
            {key: int(code in traits) for key, traits in trait_sets.items()}, annotators=annotators, items=items
        )
        for code in trait_codes
    }
    labelled = old_labels_agreement(
        {"theme": (theme_ratings, len(theme_codes), False)}
        | {code: (trait_ratings[code], 2, True) for code in trait_codes},
        per_item=per_item,
        annotators=annotators,
        n_resamples=n_resamples,
        seed=seed,
    )
    by_annotator = defaultdict(list)
    for row in rows:
        if row["item"] in final:
            by_annotator[row["annotator"]].append((row, final[row["item"]]))
    vs_final = {"n_items": len(final), "annotators": {}}
    for annotator in annotators:
        pairs = by_annotator.get(annotator, [])
        vs_final["annotators"][annotator] = {
            "theme": old_pair_agreement(
                [theme_index[r["theme"]] for r, _ in pairs],
                [theme_index[f["theme"]] for _, f in pairs],
                len(theme_index),
            ),
            "traits": {
                code: old_pair_agreement(
                    [int(code in r["traits"]) for r, _ in pairs],
                    [int(code in f["traits"]) for _, f in pairs],
                    2,
                    binary=True,
                )
                for code in trait_codes
            },
        }
    expression_of = {item_id: expression_id for item_id, expression_id, hidden, *_ in item_rows if not hidden}
    shown = [
        (r, suggestions[expression_of[r["item"]]]) for r in rows if expression_of.get(r["item"]) in (suggestions or {})
    ]
    vs_llm = {"available": True, "n_items": len({r["item"] for r, _ in shown}), "traits": {}}
    if suggestions is None:
        vs_llm = {"available": False, "reason": agreement.NO_SUGGESTIONS, "traits": {}}
    for code in trait_codes if suggestions is not None else []:
        entry = old_pair_agreement(
            [int(code in llm) for _, llm in shown], [int(code in r["traits"]) for r, _ in shown], 2, binary=True
        )
        entry["annotators"] = {
            annotator: old_pair_agreement(
                [int(code in llm) for r, llm in shown if r["annotator"] == annotator],
                [int(code in r["traits"]) for r, _ in shown if r["annotator"] == annotator],
                2,
                binary=True,
            )
            for annotator in annotators
        }
        vs_llm["traits"][code] = entry
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
            "counts": old_pooled_confusion(theme_ratings, len(theme_codes)).tolist(),
        },
        "vs_final": vs_final,
        "vs_llm": vs_llm,
        "anchoring": old_anchoring(
            rows, item_rows, suggestions, trait_codes, hide_suggestions_fraction, n_resamples=n_resamples, seed=seed
        ),
        # Unchanged: the distributions were counted once already.
        "distributions": stats._distributions(rows, final, theme_codes, trait_codes),
    }


# --- Comparing and timing -------------------------------------------------------------------------


def differences(actual, expected, path="$"):
    """Where the two results differ: keys (and their order), types, or floats beyond 1e-9."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or list(actual) != list(expected):
            return [path]
        return [d for key in expected for d in differences(actual[key], expected[key], f"{path}.{key}")]
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            return [path]
        return [
            d for n, (a, e) in enumerate(zip(actual, expected, strict=True)) for d in differences(a, e, f"{path}[{n}]")
        ]
    if isinstance(expected, float):
        same = isinstance(actual, float) and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)
        return [] if same else [f"{path}: {actual!r} != {expected!r}"]
    return [] if type(actual) is type(expected) and actual == expected else [f"{path}: {actual!r} != {expected!r}"]


def best_of(function, repeat: int) -> tuple[float, object]:
    best, result = math.inf, None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-old", action="store_true")
    parser.add_argument("--sizes", default="500x4,5000x4,200x40,2000x40", help="items x annotators, comma-separated")
    parser.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS threads (default: its own)")
    args = parser.parse_args()
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=args.blas_threads, user_api="blas")

    os.environ.setdefault("VIVID_VAR_DIR", tempfile.mkdtemp(prefix="vivid-bench-"))
    os.environ.setdefault("DJANGO_ENV", "test")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vivid_site.settings")
    import django

    django.setup()
    from annotation.selectors.quality import quality_figures
    from annotation.selectors.stats import agreement_figures

    warnings.simplefilter("ignore")
    print(f"{'size':>12} {'figures':>8} {'old ms':>10} {'new ms':>8} {'speed-up':>9}")
    times = {}
    for size in args.sizes.split(","):
        n_items, n_annotators = (int(part) for part in size.split("x"))
        inputs = synthetic_round(n_items, n_annotators)
        for label, new, old, options in (
            ("quality", quality_figures, old_quality, inputs["quality"]),
            ("stats", agreement_figures, old_stats, inputs["stats"]),
        ):
            new_time, result = best_of(lambda new=new, options=options: new(**options), args.repeat)
            times[(n_items, n_annotators, label)] = new_time
            if args.skip_old:
                print(f"{size:>12} {label:>8} {'-':>10} {new_time * 1000:8.1f}")
                continue
            old_time, expected = best_of(lambda old=old, options=options: old(**options), 1)
            found = differences(result, expected)
            if found:
                raise SystemExit(f"{size} {label}: the results differ at {len(found)} places, first {found[:3]}")
            print(f"{size:>12} {label:>8} {old_time * 1000:10.1f} {new_time * 1000:8.1f} {old_time / new_time:8.1f}x")
    for (n_items, n_annotators, label), time_taken in times.items():
        larger = times.get((10 * n_items, n_annotators, label))
        if larger:
            print(
                f"{label}: {10 * n_items} items x {n_annotators} take {larger / time_taken:.1f}x the time of {n_items}"
            )


if __name__ == "__main__":
    main()
