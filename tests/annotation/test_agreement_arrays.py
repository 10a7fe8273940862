"""The agreement and quality figures computed on arrays equal the libraries computed pair by pair.

Kappa, percent agreement and confusion tables come from one ``numpy.bincount`` per label over
every pair or window at once (core.statistics); these tests hold them to scikit-learn's
``cohen_kappa_score`` and ``confusion_matrix`` on random data, to a slow reference written the
obvious way (one library call per pair), and to the rounds' figures saved before the change
(tests/annotation/data/*_reference_*.json, written by ``VIVID_WRITE_REFERENCE=1``).
"""

import datetime
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from annotation.models import Assignment, ItemStatus, RoundItem
from annotation.selectors.quality import _round_quality
from annotation.selectors.stats import _round_agreement_stats
from annotation.services import (
    adjudication_resolve,
    assignment_submit,
    control_item_create,
    round_lock,
    round_quality_update,
    suggested_codes,
)

from .factories import make_annotator, make_dataset, make_researcher, make_round, make_suggestions, numbered_csv

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")

DATA = Path(__file__).parent / "data"
TRAITS = ["literal", "sino_vietnamese", "uncommon_vocabulary", "folk_knowledge", "pragmatic"]
THEMES = ["love", "virtues", "criticism", "work_nature", "social_relationships", "life_lessons", "other"]
BASE_TIME = datetime.datetime(2025, 3, 1, 8, 0, tzinfo=datetime.UTC)


# --- Rounds built through the services, against the figures saved before the arrays ------------

# name: annotators, per item, items, controls (theme, traits), window, hidden share, suggestions,
# the share of answers each annotator gives, whether the round is locked and its disputes resolved,
# and the themes' spread (a low one gives windows of a single category).
SCENARIOS = {
    "five": {
        "annotators": 5,
        "per_item": 2,
        "items": 40,
        "controls": [("love", ["literal"]), ("criticism", []), ("other", ["pragmatic", "literal"])],
        "window": 6,
        "hide": 0.25,
        "suggestions": True,
        "answered": [1.0, 1.0, 0.7, 1.0, 0.0],
        "adjudicate": 0.5,
        "spread": 0.35,
    },
    "three_each": {
        "annotators": 3,
        "per_item": 3,
        "items": 24,
        "controls": [],
        "window": 5,
        "hide": 0.0,
        "suggestions": False,
        "answered": [1.0, 1.0, 0.8],
        "adjudicate": None,
        "spread": 0.12,
    },
    "two": {
        "annotators": 2,
        "per_item": 2,
        "items": 30,
        "controls": [("virtues", ["folk_knowledge"]), ("love", [])],
        "window": 5,
        "hide": 0.5,
        "suggestions": True,
        "answered": [1.0, 1.0],
        "adjudicate": 1.0,
        "spread": 0.5,
    },
}


def _llm_traits(expression) -> list[str]:
    number = int(expression.text.split()[-1])
    return [] if number % 3 == 0 else [TRAITS[number % 5], TRAITS[(number + 2) % 5]]


def build_scenario(name: str):
    """A round of ``SCENARIOS[name]`` answered through the services at fixed, partly equal, times."""
    spec = SCENARIOS[name]
    rng = np.random.RandomState(sum(map(ord, name)))
    researcher = make_researcher(f"{name}_researcher")
    annotators = [make_annotator(f"{name}_{i}") for i in range(spec["annotators"])]
    n_extra = len(spec["controls"])
    dataset = make_dataset(name=f"{name} corpus", csv=numbered_csv(spec["items"] + n_extra, text=f"{name} câu {{n}}"))
    expressions = list(dataset.expressions.order_by("id"))
    options = {}
    if spec["suggestions"]:
        options["suggestion_set"] = make_suggestions(dataset, traits=_llm_traits, name=f"{name} llm")
    round_ = make_round(
        dataset,
        annotators,
        name=f"{name} round",
        seed=17,
        expressions=dataset.expressions.filter(pk__in=[e.pk for e in expressions[: spec["items"]]]),
        annotators_per_item=spec["per_item"],
        hide_suggestions_fraction=spec["hide"],
        **options,
    )
    round_quality_update(
        round=round_,
        user=researcher,
        control_rate=0.1 if spec["controls"] else 0.0,
        quality_window=spec["window"],
        quality_threshold=0.4,
        fast_seconds=3,
    )
    for expression, (theme, traits) in zip(expressions[spec["items"] :], spec["controls"], strict=True):
        control_item_create(round=round_, user=researcher, expression=expression.text, traits=traits, theme=theme)

    # Each item's "true" theme and traits; an annotator keeps them with probability 1 - spread.
    truth = {}
    for expression in expressions:
        number = int(expression.text.split()[-1])
        theme = THEMES[0] if rng.random_sample() < 0.6 - spec["spread"] else THEMES[number % 7]
        truth[expression.pk] = (theme, {t for t in TRAITS if rng.random_sample() < 0.3})
    queues = []
    for user, share in zip(annotators, spec["answered"], strict=True):
        queue = list(Assignment.objects.filter(item__round=round_, annotator=user).order_by("position"))
        queues.append(queue[: int(round(share * len(queue)))])
    moment, order = 0, []
    while any(queues):
        queue = queues[rng.choice([i for i, q in enumerate(queues) if q])]
        order.append(queue.pop(0))
    for assignment in order:
        item = RoundItem.objects.select_related("expression").get(pk=assignment.item_id)
        theme, traits = truth[item.expression_id]
        if rng.random_sample() < spec["spread"]:
            theme = THEMES[rng.randint(7)]
        traits = {t for t in TRAITS if (t in traits) != (rng.random_sample() < spec["spread"] / 2)}
        suggested = suggested_codes(item)
        decisions = {
            code: "unsure" if rng.random_sample() < 0.05 else ("accept" if code in traits else "reject")
            for code in suggested
        }
        seconds = None if rng.random_sample() < 0.15 else float(rng.choice([0.5, 1.5, 2.9, 3.0, 4.2, 8.0, 20.0]))
        assignment_submit(
            assignment=assignment,
            user=assignment.annotator,
            theme=theme,
            trait_decisions=decisions,
            added_traits=sorted(traits - set(suggested)),
            seconds=seconds,
        )
        # A third of the answers arrive in the same microsecond as the one before.
        moment += 0 if rng.random_sample() < 0.33 else 1
        Assignment.objects.filter(pk=assignment.pk).update(submitted_at=BASE_TIME + datetime.timedelta(seconds=moment))
    if spec["adjudicate"] is not None:
        round_lock(round=round_)
        disputed = list(RoundItem.objects.filter(round=round_, status=ItemStatus.NEEDS_ADJUDICATION).order_by("id"))
        for item in disputed[: int(round(spec["adjudicate"] * len(disputed)))]:
            first = item.assignments.filter(status="submitted").order_by("annotator__username").first()
            answer_traits = {c for c, d in first.trait_decisions.items() if d == "accept"} | set(first.added_traits)
            adjudication_resolve(
                item=item, user=researcher, traits=sorted(answer_traits), theme=first.theme.code, revision=item.revision
            )
    round_.refresh_from_db()
    return round_


def _stable_ids(report: dict, round_) -> dict:
    """The quality report with the ids of the fast answers replaced by their rank in the round:
    primary keys depend on what the database handed out before."""
    items = {
        pk: n for n, pk in enumerate(RoundItem.objects.filter(round=round_).order_by("id").values_list("id", flat=True))
    }
    answers = {
        pk: n
        for n, pk in enumerate(
            Assignment.objects.filter(item__round=round_).order_by("id").values_list("id", flat=True)
        )
    }
    for entry in report["fast_items"]:
        entry["item"] = items[entry["item"]]
        entry["assignment"] = answers[entry["assignment"]]
    return report


def reference_outputs(name: str) -> dict:
    round_ = build_scenario(name)
    return json.loads(
        json.dumps(
            {
                "quality": _stable_ids(_round_quality(round=round_), round_),
                "stats": _round_agreement_stats(round=round_, n_resamples=200, seed=20240601),
            },
            allow_nan=False,
        )
    )


def assert_same(actual, expected, path="$"):
    """Equal values with the same keys in the same order; floats equal to 1e-9."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert list(actual) == list(expected), path
        for key in expected:
            assert_same(actual[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for n, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, f"{path}[{n}]")
    elif isinstance(expected, float) and not isinstance(actual, bool):
        assert isinstance(actual, (int, float)) and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9), (
            path,
            actual,
            expected,
        )
    else:
        assert type(actual) is type(expected) and actual == expected, (path, actual, expected)


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_it_gives_the_round_figures_computed_before_the_arrays(name):
    path = DATA / f"agreement_reference_{name}.json"
    outputs = reference_outputs(name)
    if os.environ.get("VIVID_WRITE_REFERENCE") == "1":
        DATA.mkdir(exist_ok=True)
        path.write_text(json.dumps(outputs, indent=1, ensure_ascii=False) + "\n")
    assert_same(outputs, json.loads(path.read_text()))
