"""An annotator cannot pick out the control items (issue #22, item 2).

Many small rounds, each with its own seed, are read the way their annotators read them, through
the test client: the review API in the order it serves the queue, the expressions API that turns
an item's text into its expression id, the round's counts and the review pages. Everything an
annotator can compare (ids and their ranks, ids out of order, positions, timestamps, suggestions,
counts, the page's skeleton and its queries) becomes a feature; neither a logistic regression over
all of them nor any single one tells the controls from the ordinary items better than chance.

The researcher draws the controls at random from the round's own dataset here, so that an
expression's own id says nothing by construction: what is measured is what the round adds.
"""

import math
import random
import re

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from scipy.stats import rankdata
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from annotation.models import RoundItem
from annotation.services import control_items_add, round_lock, round_quality_update, version_freeze
from core.roles import ADJUDICATOR

from . import factories
from .factories import api_client_for, client_for, make_round, queue_of, submit

pytestmark = pytest.mark.django_db

DATASET_SIZE = 36
CONTROLS = 8
# 28 regular items at 20%: 7 controls in each queue of 35.
CONTROL_RATE = 0.2
ROUNDS = 40
# How far from 0.5 an AUC may stray by chance: this many standard errors.
CHANCE_SE = 4


@pytest.fixture
def people(db):
    return factories.make_researcher(), factories.make_annotator("blind_a"), factories.make_annotator("blind_b")


def _rounds(people, n_rounds: int):
    """``n_rounds`` rounds over one dataset, each with its seed and its own random choice of controls."""
    researcher, a, b = people
    dataset = factories.make_dataset(name="Blind controls", csv=factories.numbered_csv(DATASET_SIZE))
    suggestions = factories.make_suggestions(dataset, traits=factories.alternating_traits)
    expressions = list(dataset.expressions.order_by("id"))
    rounds = []
    for n in range(n_rounds):
        picked = random.Random(n).sample(expressions, CONTROLS)
        regular = [e.pk for e in expressions if e not in picked]
        round_ = make_round(
            dataset,
            [a, b],
            name=f"Blind {n}",
            seed=1000 + n,
            suggestion_set=suggestions,
            hide_suggestions_fraction=0.25,
            expressions=dataset.expressions.filter(pk__in=regular),
        )
        round_quality_update(
            round=round_,
            user=researcher,
            control_rate=CONTROL_RATE,
            quality_window=10,
            quality_threshold=0.4,
            fast_seconds=3,
        )
        control_items_add(
            round=round_,
            user=researcher,
            entries=[{"expression": e, "traits": ["pragmatic"], "theme": "love"} for e in picked],
        )
        rounds.append(round_)
    return dataset, rounds


def _served(api, round_) -> list[dict]:
    """The annotator's queue as the API serves it (one page holds it)."""
    page = api.get(reverse("api:assignment_list", args=[round_.pk])).json()
    assert page["next"] is None
    return page["results"]


def _expression_ids(api, dataset) -> dict[str, tuple[int, int]]:
    """{text: (expression id, dataset id)}, as an annotator reads them from the expressions API."""
    found, url = {}, reverse("api:expression-list") + f"?dataset={dataset.pk}"
    while url:
        page = api.get(url).json()
        found |= {row["text"]: (row["id"], row["dataset"]) for row in page["results"]}
        url = page["next"]
    return found


def _rank(values) -> np.ndarray:
    """Ranks scaled to [0, 1] (ties share theirs)."""
    ranks = rankdata(values)
    return (ranks - 1) / max(len(values) - 1, 1)


def _off_neighbours(values: list) -> list[bool]:
    """Whether each value breaks the rising order of its neighbours in the list."""
    flags = []
    for i, value in enumerate(values):
        before = i == 0 or values[i - 1] < value
        after = i == len(values) - 1 or value < values[i + 1]
        flags.append(not (before and after))
    return flags


def _off_longest_run(values: list) -> list[bool]:
    """Whether each value is left out of a longest rising subsequence of the list."""
    n = len(values)
    length, previous = [1] * n, [-1] * n
    for i in range(n):
        for j in range(i):
            if values[j] < values[i] and length[j] + 1 > length[i]:
                length[i], previous[i] = length[j] + 1, j
    kept, i = set(), max(range(n), key=length.__getitem__)
    while i != -1:
        kept.add(i)
        i = previous[i]
    return [i not in kept for i in range(n)]


def _in_order(rows: list[dict], key: str, then: str) -> list[bool]:
    """Sorted by ``key``, whether each row's ``then`` breaks the order, flagged back in queue order."""
    order = sorted(range(len(rows)), key=lambda i: rows[i][key])
    flags = _off_neighbours([rows[i][then] for i in order])
    by_row = [False] * len(rows)
    for flag, i in zip(flags, order, strict=True):
        by_row[i] = flag
    return by_row


def _queue_features(rows: list[dict], expressions: dict, dataset_id: int, total: int) -> list[list[float]]:
    """One row of numbers per item, from what the annotator read of their queue."""
    for row in rows:
        row["expression_id"], row["dataset_id"] = expressions[row["expression"]]
    n = len(rows)
    position = np.array([row["position"] for row in rows], dtype=float)
    position_rank = _rank(position)
    assignment_rank = _rank([row["id"] for row in rows])
    item_rank = _rank([row["item"] for row in rows])
    expression_rank = _rank([row["expression_id"] for row in rows])
    updated_rank = _rank([row["updated_at"] for row in rows])
    by_item = sorted(range(n), key=lambda i: rows[i]["item"])
    longest = _off_longest_run([rows[i]["expression_id"] for i in by_item])
    off_longest = [False] * n
    for flag, i in zip(longest, by_item, strict=True):
        off_longest[i] = flag
    item_gap = [0.0] * n
    for before, i in zip(by_item, by_item[1:], strict=False):
        item_gap[i] = rows[i]["item"] - rows[before]["item"]
    expression_off = _in_order(rows, "item", "expression_id")
    item_off = _in_order(rows, "expression_id", "item")
    return [
        [
            position[i] / total,
            assignment_rank[i] - position_rank[i],
            updated_rank[i] - position_rank[i],
            item_rank[i],
            expression_rank[i],
            item_rank[i] - expression_rank[i],
            abs(item_rank[i] - expression_rank[i]),
            float(off_longest[i]),
            float(expression_off[i]),
            float(item_off[i]),
            item_gap[i],
            float(rows[i]["suggestions_shown"]),
            float(len(rows[i]["suggested_traits"])),
            float(rows[i]["dataset_id"] == dataset_id),
        ]
        for i in range(n)
    ]


FEATURES = (
    "position",
    "assignment id rank - position rank",
    "updated_at rank - position rank",
    "item id rank",
    "expression id rank",
    "item id rank - expression id rank",
    "|item id rank - expression id rank|",
    "expression id off the longest rising run by item id",
    "expression id out of order by item id",
    "item id out of order by expression id",
    "item id gap",
    "suggestions shown",
    "suggested traits",
    "in the round's dataset",
)


def _chance_margin(y: np.ndarray) -> float:
    """How far an AUC strays from 0.5 when nothing tells the classes apart (Hanley and McNeil's
    standard error under the null), widened because both annotators of a round share its items."""
    n1, n0 = int(y.sum()), int(len(y) - y.sum())
    return CHANCE_SE * math.sqrt(2) * math.sqrt((n1 + n0 + 1) / (12 * n1 * n0))


def test_it_gives_a_classifier_of_everything_an_annotator_reads_no_better_than_chance(people):
    _researcher, a, b = people
    dataset, rounds = _rounds(people, ROUNDS)
    truth = dict(RoundItem.objects.filter(round__in=rounds).values_list("pk", "control_id"))
    X, y, groups = [], [], []
    for user in (a, b):
        api = api_client_for(user)
        expressions = _expression_ids(api, dataset)
        for round_ in rounds:
            rows = _served(api, round_)
            detail = api.get(reverse("api:round_detail", args=[round_.pk])).json()
            assert detail["n_items"] == detail["progress"][0]["total"] == len(rows)
            X += _queue_features(rows, expressions, dataset.pk, detail["progress"][0]["total"])
            y += [truth[row["item"]] is not None for row in rows]
            groups += [round_.pk] * len(rows)
    X, y = np.array(X), np.array(y)
    assert y.sum() == ROUNDS * 2 * 7 and len(y) == ROUNDS * 2 * 35
    margin = _chance_margin(y)

    single = {name: roc_auc_score(y, X[:, k]) for k, name in enumerate(FEATURES) if np.ptp(X[:, k])}
    telling = {name: round(auc, 3) for name, auc in single.items() if abs(auc - 0.5) > margin}
    assert not telling, f"features that tell controls apart (AUC, chance within 0.5 ± {margin:.3f}): {telling}"

    # Rounds are kept whole within a fold: both annotators of a round share its items.
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    scores = cross_val_predict(model, X, y, groups=groups, cv=GroupKFold(n_splits=5), method="predict_proba")[:, 1]
    auc = roc_auc_score(y, scores)
    assert auc < 0.5 + margin, (
        f"a logistic regression finds the controls: AUC {auc:.3f} (chance below {0.5 + margin:.3f})"
    )


def _skeleton(html: str, text: str, explanation: str) -> str:
    """The page without what differs from item to item: its text, explanation, ids and numbers."""
    html = html.replace(text, "TEXT").replace(explanation, "EXPL")
    html = re.sub(r"csrfmiddlewaretoken\" value=\"[^\"]+\"", "", html)
    html = re.sub(r"\"X-CSRFToken\": \"[^\"]+\"", "", html)
    return re.sub(r"\d+", "N", html)


def test_it_serves_each_control_a_page_an_ordinary_item_gets_too(people):
    """Page for page: a control's review page (its skeleton and its number of queries) is one an
    ordinary item gets too, and its position and count are the API's."""
    _researcher, a, b = people
    _dataset, rounds = _rounds(people, 3)
    controls = set(RoundItem.objects.filter(round__in=rounds, control__isnull=False).values_list("pk", flat=True))
    skeletons, costs = {True: set(), False: set()}, {True: set(), False: set()}
    for round_ in rounds:
        for user in (a, b):
            client, api = client_for(user), api_client_for(user)
            rows = _served(api, round_)
            # A session's first item reads the queue's pause and notes into the shared cache.
            client.get(reverse("annotation:review_item", args=[round_.pk, rows[0]["id"]]))
            for row in rows:
                url = reverse("annotation:review_item", args=[round_.pk, row["id"]])
                with CaptureQueriesContext(connection) as queries:
                    html = client.get(url).content.decode()
                assert f'data-assignment="{row["id"]}"' in html
                assert f"Item {row['position']} of {len(rows)}" in html
                # The last item's "next item" link wraps around the queue: one query more, for any item.
                last = row["position"] == len(rows)
                kind = row["item"] in controls
                skeletons[kind].add(_skeleton(html, row["expression"], row["explanation"]))
                costs[kind].add((len(queries), last))
    assert len(skeletons[True]) > 1 and skeletons[True] <= skeletons[False]
    assert costs[True] <= costs[False]


def test_it_keeps_the_seed_and_the_regular_item_count_from_those_who_annotate(people):
    """The seed would let an annotator lay their own queue out again without its controls; every
    count they read is their own queue's, controls included."""
    researcher, a, b = people
    _dataset, (round_,) = _rounds(people, 1)
    factories.add_role(b, ADJUDICATOR)
    for user in (a, b):
        api = api_client_for(user)
        queue = len(_served(api, round_))
        detail = api.get(reverse("api:round_detail", args=[round_.pk])).json()
        listed = next(r for r in api.get(reverse("api:round_list")).json() if r["id"] == round_.pk)
        assert detail["seed"] is None and listed["seed"] is None
        assert detail["n_items"] == listed["n_items"] == detail["progress"][0]["total"] == queue == 35
        rows = client_for(user).get(reverse("annotation:round_list")).context["rows"]
        assert [row["round"].n_items for row in rows] == [35]
    page = client_for(b).get(reverse("annotation:round_detail", args=[round_.pk])).content.decode()
    assert 'data-testid="seed"' not in page
    # Those who do not annotate the round still read its seed and its count of regular items.
    researcher_api = api_client_for(researcher)
    assert researcher_api.get(reverse("api:round_detail", args=[round_.pk])).json()["seed"] == round_.seed
    assert researcher_api.get(reverse("api:round_detail", args=[round_.pk])).json()["n_items"] == 28


def test_it_shows_a_controls_known_labels_only_once_the_round_is_frozen(people):
    """At the lock no item is adjudicated yet: a control shown "adjudicated" with its labels then would be
    found, its answer in sight, by an annotator who could change theirs if the round were reopened."""
    researcher, a, b = people
    _dataset, (round_,) = _rounds(people, 1)
    for user in (a, b):
        for assignment in queue_of(round_, user):
            submit(assignment, user, theme="criticism")
    round_lock(round=round_)
    url = reverse("annotation:review_outcomes", args=[round_.pk])

    def control_rows():
        rows = client_for(a).get(url + "?page=1").context["rows"]
        return [row for row in rows if row["assignment"].item.control_id]

    assert control_rows() and not any(row["resolved"] or row["final_theme"] for row in control_rows())
    version_freeze(round=round_, name="blind-v1", user=researcher)
    assert all(row["resolved"] and row["final_theme"].code == "love" for row in control_rows())
