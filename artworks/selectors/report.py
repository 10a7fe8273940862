"""The Table 1 report of an artwork pipeline run (*Pragmatics Meets Culture* §6.1).

QA accuracy of the simulated listener by condition (no description, base, pragmatic speaker),
by the listener's familiarity with the artwork's culture and by question type, with Wilson 95%
intervals, and Welch two-sample t-tests on per-question correctness between the conditions.

The paper's † marks a pragmatic speaker significantly *better* than the base one; a test only says
the two differ, so each keeps its direction and p-value, and a pragmatic speaker significantly
*worse* than the base one is marked ‡ (never †).
"""

import warnings

from django.db.models import Avg, Count

from core import statistics
from core.csv_writer import csv_frame_text

from ..models import (
    ArtworkPipelineRun,
    ArtworkQuestionType,
    ListenerAnswer,
    ListenerCondition,
    PipelineItem,
    SpeakerCandidate,
    SpeakerKind,
)
from .pipeline import artwork_run_usage

CONDITIONS = (ListenerCondition.NO_DESCRIPTION.value, ListenerCondition.BASE.value, ListenerCondition.PRAGMATIC.value)
FAMILIARITY = ("familiar", "unfamiliar")
QUESTION_TYPES = (ArtworkQuestionType.ATTUNED.value, ArtworkQuestionType.AGNOSTIC.value)
# (a, b) pairs compared in every familiarity x type cell; the key names a minus b.
COMPARISONS = (
    ("pragmatic", "base"),
    ("pragmatic", "no_description"),
    ("base", "no_description"),
)
ALPHA = 0.05
# The pragmatic speaker against the base one: † significantly better (the paper's mark), ‡ significantly worse.
MARKS = {"better": "†", "worse": "‡"}
CSV_COLUMNS = [
    "condition",
    "familiarity",
    "type",
    "accuracy",
    "n",
    "ci_low",
    "ci_high",
    "vs_base_t",
    "vs_base_p_value",
    "vs_base_direction",
    "mark",
]


def accuracy_cell(outcomes: list[bool]) -> dict:
    """Accuracy with its Wilson 95% interval; an empty cell has no accuracy rather than 0."""
    n = len(outcomes)
    if not n:
        return {"accuracy": None, "n": 0, "ci": None}
    successes = sum(outcomes)
    low, high = statistics.wilson_interval(successes, n, confidence=1 - ALPHA)
    return {"accuracy": successes / n, "n": n, "ci": [low, high]}


def welch_test(a: list[bool], b: list[bool]) -> dict:
    """Welch's t-test of a against b. Undefined (None, never NaN) when a side has fewer than two
    answers or both sides are constant: then there is no variance to test against. One constant
    side (say every pragmatic answer right) still gives a test, from the other side's variance."""
    from scipy.stats import ttest_ind

    result = {"t": None, "p_value": None, "significant": False, "direction": None, "n_a": len(a), "n_b": len(b)}
    if len(a) < 2 or len(b) < 2 or (len(set(a)) == 1 and len(set(b)) == 1):
        return result
    with warnings.catch_warnings():
        # One constant side is fine for Welch (its variance is exactly 0), but scipy warns about it.
        warnings.simplefilter("ignore", RuntimeWarning)
        statistic, p_value = ttest_ind([float(x) for x in a], [float(x) for x in b], equal_var=False)
    statistic, p_value = statistics.finite(statistic), statistics.finite(p_value)
    if statistic is None or p_value is None:
        return result
    significant = p_value < ALPHA
    # The sign of t is the sign of mean(a) - mean(b): a is better when it answers more questions right.
    direction = ("better" if statistic > 0 else "worse") if significant and statistic != 0 else None
    result.update(t=statistic, p_value=p_value, significant=significant, direction=direction)
    return result


def pragmatic_mark(test: dict) -> str:
    """† when the pragmatic speaker is significantly better than the base one, ‡ when significantly worse."""
    return MARKS.get(test.get("direction") or "", "")


def _image_seen(run: ArtworkPipelineRun):
    """True when every step that could show the image did; False when any step went without it."""
    seen = set(PipelineItem.objects.filter(run=run, image_seen__isnull=False).values_list("image_seen", flat=True))
    if seen:
        return False not in seen
    value = (run.reproducibility or {}).get("image_seen")
    return value if isinstance(value, bool) else None


def _speaker_scores(run: ArtworkPipelineRun) -> dict:
    def summary(queryset) -> dict:
        row = queryset.filter(listener_score__isnull=False).aggregate(mean=Avg("listener_score"), n=Count("id"))
        return {"mean": statistics.finite(row["mean"]), "n": row["n"]}

    candidates = SpeakerCandidate.objects.filter(run=run)
    return {
        # The base speaker writes one description per artwork and group, chosen or not.
        "base": summary(candidates.filter(speaker=SpeakerKind.BASE)),
        "pragmatic": summary(candidates.filter(speaker=SpeakerKind.PRAGMATIC, chosen=True)),
        "pragmatic_all_samples": summary(candidates.filter(speaker=SpeakerKind.PRAGMATIC)),
    }


def artwork_report(*, run: ArtworkPipelineRun) -> dict:
    rows = ListenerAnswer.objects.filter(run=run).values_list(
        "condition", "familiar", "question__type", "group", "correct"
    )
    cells: dict[tuple, list[bool]] = {}
    groups: dict[tuple, list[bool]] = {}
    for condition, familiar, qtype, group, correct in rows:
        familiarity = "familiar" if familiar else "unfamiliar"
        cells.setdefault((condition, familiarity, qtype), []).append(bool(correct))
        groups.setdefault((group, condition, qtype), []).append(bool(correct))

    qa_accuracy = {
        condition: {
            familiarity: {
                qtype: accuracy_cell(cells.get((condition, familiarity, qtype), [])) for qtype in QUESTION_TYPES
            }
            for familiarity in FAMILIARITY
        }
        for condition in CONDITIONS
    }
    t_test = {
        familiarity: {
            qtype: {
                f"{a}_vs_{b}": welch_test(
                    cells.get((a, familiarity, qtype), []), cells.get((b, familiarity, qtype), [])
                )
                for a, b in COMPARISONS
            }
            for qtype in QUESTION_TYPES
        }
        for familiarity in FAMILIARITY
    }
    group_names = list(run.groups or [])
    group_names += sorted({group for group, _, _ in groups} - set(group_names))
    by_group = {
        group: {
            condition: {qtype: accuracy_cell(groups.get((group, condition, qtype), [])) for qtype in QUESTION_TYPES}
            for condition in CONDITIONS
        }
        for group in group_names
    }
    return {
        "run": {
            "id": run.pk,
            "collection": run.collection.name,
            "speaker": run.speaker.name,
            "builder": run.construction_model.name,
            "listener": run.listener.name,
            "status": run.status,
            "groups": list(run.groups or []),
            "samples": run.samples,
            "temperature": run.temperature,
            "lambda": run.lam,
            "word_limit": run.word_limit,
            "image_seen": _image_seen(run),
            "n_answers": sum(len(v) for v in cells.values()),
            # What the providers reported the requests used, and the estimate made before the run started.
            "cost": {**artwork_run_usage(run=run), "estimate": run.estimate or None},
        },
        "qa_accuracy": qa_accuracy,
        "t_test": t_test,
        "by_group": by_group,
        "speaker_scores": _speaker_scores(run),
        "marks": {
            MARKS["better"]: "pragmatic speaker significantly better than the base speaker (Welch, p < 0.05)",
            MARKS["worse"]: "pragmatic speaker significantly worse than the base speaker (Welch, p < 0.05)",
        },
    }


def artwork_report_frame(report: dict):
    """The accuracy cells in long form: one row per condition x familiarity x question type."""
    import pandas as pd

    records = []
    for condition in CONDITIONS:
        for familiarity in FAMILIARITY:
            for qtype in QUESTION_TYPES:
                cell = report["qa_accuracy"][condition][familiarity][qtype]
                ci = cell["ci"] or [None, None]
                # The pragmatic row carries its test against the base speaker; the other rows have none.
                test = report["t_test"][familiarity][qtype]["pragmatic_vs_base"] if condition == "pragmatic" else {}
                records.append(
                    {
                        "condition": condition,
                        "familiarity": familiarity,
                        "type": qtype,
                        "accuracy": cell["accuracy"],
                        "n": cell["n"],
                        "ci_low": ci[0],
                        "ci_high": ci[1],
                        "vs_base_t": test.get("t"),
                        "vs_base_p_value": test.get("p_value"),
                        "vs_base_direction": test.get("direction") or "",
                        "mark": pragmatic_mark(test) if test else "",
                    }
                )
    return pd.DataFrame.from_records(records, columns=CSV_COLUMNS)


def artwork_report_csv(report: dict) -> str:
    return csv_frame_text(artwork_report_frame(report))
