"""Judge bias diagnostics: pure computations, no database (the selectors gather the data).

- Verbosity: Spearman's rho between a judge's score and the length of the explanation judged
  (scipy), and the partial Spearman controlling for the human score: the three variables are
  rank-transformed (average ranks, scipy) and the partial correlation of the ranks is taken, the
  usual definition of a partial Spearman correlation. tests/evaluation/test_judge_bias.py checks
  it against the correlation of OLS residuals on the ranks (statsmodels).
- Prompt-paraphrase stability: Krippendorff's alpha (interval) of the scores the same judge gave
  under K wordings of its prompt (``krippendorff`` through core.statistics), and the items whose
  scores spread widest.
- Pairwise judging with position swap: each idiom asked in both orders; the share of first-position
  wins, the consistency (the same explanation wins in both orders), win rates with Wilson intervals
  (statsmodels, through core.statistics), and agreement with the human preference where people
  scored both explanations.

An undefined figure is None with a reason, never NaN.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from core import statistics

# The items listed as the widest score ranges across paraphrases.
WIDEST_LIMIT = 10


def length_in_words(text: str) -> int:
    """Whitespace words: a Vietnamese syllable is a word here, as in the paper's length counts."""
    return len((text or "").split())


def _constant(values) -> bool:
    return len(set(values)) < 2


def spearman(x, y) -> tuple[float | None, float | None, str | None]:
    """scipy's Spearman rho and its p-value, or (None, None, reason)."""
    if len(x) < 3:
        return None, None, "fewer than three items"
    if _constant(x) or _constant(y):
        return None, None, "one side is constant: no ranking to compare"
    from scipy import stats  # where used: core/warmup.py says why

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.spearmanr(x, y)
    return statistics.finite(result.statistic), statistics.finite(result.pvalue), None


def partial_spearman(x, y, z) -> tuple[float | None, float | None, str | None]:
    """Spearman's rho between x and y with z held constant: the partial correlation of the ranks.

    r_xy.z = (r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2)) on the Pearson correlations of the
    average ranks; the p-value from Student's t with n - 3 degrees of freedom.
    """
    n = len(x)
    if n < 4:
        return None, None, "fewer than four items with a human score"
    if _constant(x) or _constant(y) or _constant(z):
        return None, None, "a variable is constant on the items with a human score"
    from scipy import stats  # where used: core/warmup.py says why

    ranks = np.vstack([stats.rankdata(x), stats.rankdata(y), stats.rankdata(z)])
    r = np.corrcoef(ranks)
    r_xy, r_xz, r_yz = r[0, 1], r[0, 2], r[1, 2]
    denominator = (1 - r_xz**2) * (1 - r_yz**2)
    if denominator <= 0:
        return None, None, "the human score determines one of the variables"
    value = float(np.clip((r_xy - r_xz * r_yz) / math.sqrt(denominator), -1.0, 1.0))
    dof = n - 3
    if abs(value) >= 1:
        p_value = 0.0
    else:
        t = value * math.sqrt(dof / (1 - value**2))
        p_value = float(2 * stats.t.sf(abs(t), dof))
    return value, p_value, None


def verbosity(rows: list[tuple[float, float, float | None]]) -> dict:
    """``rows``: (judge's score or preference, explanation length, human score or None) per item."""
    scores = [row[0] for row in rows]
    lengths = [row[1] for row in rows]
    rho, p_value, reason = spearman(scores, lengths)
    with_human = [row for row in rows if row[2] is not None]
    partial, partial_p, partial_reason = partial_spearman(
        [row[0] for row in with_human], [row[1] for row in with_human], [row[2] for row in with_human]
    )
    reasons = {key: text for key, text in (("spearman", reason), ("partial_spearman", partial_reason)) if text}
    return {
        "spearman": rho,
        "p_value": p_value,
        "n": len(rows),
        "partial_spearman": partial,
        "partial_p_value": partial_p,
        "n_partial": len(with_human),
        "reasons": reasons,
    }


def paraphrase_stability(variants: list[dict], *, labels: dict | None = None) -> dict:
    """Krippendorff's alpha (interval) across prompt wordings: ``variants`` maps item -> score (None
    for unscored) per wording. ``labels`` names the items for the widest list."""
    items = sorted({item for scores in variants for item in scores})
    out = {"alpha": None, "k": len(variants), "n": 0, "widest": [], "reasons": {}}
    data = np.array(
        [[np.nan if scores.get(item) is None else float(scores[item]) for item in items] for scores in variants],
        dtype=float,
    ).reshape(len(variants), len(items))
    paired = (~np.isnan(data)).sum(axis=0) >= 2 if len(variants) else np.zeros(len(items), dtype=bool)
    out["n"] = int(paired.sum())
    if len(variants) < 2:
        out["reasons"]["alpha"] = "a single wording: start the paraphrase runs to compare wordings"
        return out
    if not out["n"]:
        out["reasons"]["alpha"] = "no item was scored under two wordings"
        return out
    try:
        alpha = statistics.krippendorff_alpha(data[:, paired], level_of_measurement="interval")
    except (ValueError, ZeroDivisionError):
        alpha = float("nan")
    out["alpha"] = statistics.finite(alpha)
    if out["alpha"] is None:
        out["reasons"]["alpha"] = "undefined on these scores (every wording gave every item the same score)"
    widest = []
    for column, item in enumerate(items):
        if not paired[column]:
            continue
        values = data[:, column][~np.isnan(data[:, column])]
        widest.append(
            {
                "item": item,
                "label": (labels or {}).get(item, ""),
                "range": float(values.max() - values.min()),
                "scores": [None if np.isnan(v) else int(v) for v in data[:, column]],
            }
        )
    widest.sort(key=lambda row: (-row["range"], row["item"]))
    out["widest"] = [row for row in widest if row["range"] > 0][:WIDEST_LIMIT]
    return out


def _rate(successes: int, n: int) -> dict:
    if not n:
        return {"rate": None, "ci": None, "count": successes, "n": n}
    return {"rate": successes / n, "ci": list(statistics.wilson_interval(successes, n)), "count": successes, "n": n}


def pairwise(verdicts: list[tuple[object, bool, int | None]], human_preference: dict | None = None) -> dict:
    """Position bias of a pairwise judge asked in both orders.

    ``verdicts``: (idiom, swapped, position preferred 1|2 or None) per item; position 1 shows run A
    unless swapped. ``human_preference``: idiom -> "a" or "b" where people scored both explanations
    and one higher. Figures are over the idioms read in both orders (``n``).
    """
    by_idiom: dict = {}
    for idiom, swapped, position in verdicts:
        by_idiom.setdefault(idiom, {})[bool(swapped)] = position
    complete = {
        idiom: orders
        for idiom, orders in by_idiom.items()
        if orders.get(False) is not None and orders.get(True) is not None
    }
    n = len(complete)
    first = sum((orders[False] == 1) + (orders[True] == 1) for orders in complete.values())
    winners = {}
    for idiom, orders in complete.items():
        straight = "a" if orders[False] == 1 else "b"
        swapped = "b" if orders[True] == 1 else "a"
        winners[idiom] = straight if straight == swapped else None
    consistent = sum(1 for winner in winners.values() if winner is not None)
    a_wins = sum(1 for winner in winners.values() if winner == "a")
    b_wins = sum(1 for winner in winners.values() if winner == "b")
    out = {
        "first_position_rate": first / (2 * n) if n else None,
        "first_position_ci": list(statistics.wilson_interval(first, 2 * n)) if n else None,
        "consistency": consistent / n if n else None,
        "consistency_ci": list(statistics.wilson_interval(consistent, n)) if n else None,
        "n": n,
        "n_unreadable": sum(1 for _idiom, _swapped, position in verdicts if position is None),
        "n_one_order": len(by_idiom) - n,
        "win_rate": {"a": _rate(a_wins, n), "b": _rate(b_wins, n), "inconsistent": _rate(n - consistent, n)},
        "human_agreement": None,
        "reasons": {},
    }
    if not n:
        out["reasons"]["n"] = "no idiom has a readable verdict in both orders"
    human_preference = human_preference or {}
    compared = [(winners[idiom], human_preference[idiom]) for idiom in winners if idiom in human_preference]
    decided = [(judge, human) for judge, human in compared if judge is not None]
    if decided:
        out["human_agreement"] = _rate(sum(1 for judge, human in decided if judge == human), len(decided))
        out["human_agreement"]["n_inconsistent"] = len(compared) - len(decided)
    else:
        out["reasons"]["human_agreement"] = (
            "no idiom where people scored both explanations differently and the judge chose consistently"
        )
    return out


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None
