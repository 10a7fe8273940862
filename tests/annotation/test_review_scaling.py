"""The review path costs the same whatever the size of the team or the round (issue 29).

Every request an annotator makes all day (the round list, the queue entry, an item, a save, a
draft, a skip, the finished page, their outcomes, the API) runs the same number of queries for a
round of 5 and of 60 annotators, and of 50 and 2,000 items; on PostgreSQL, EXPLAIN ANALYZE shows
that no query of theirs reads more than the annotator's own rows plus a constant, so nothing is
counted over the round while they work. Nothing here is timed.
"""

import json

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment, AssignmentStatus, Theme
from annotation.selectors.corpus import taxonomy_rows, theme_ids, trait_codes, trait_numbers
from annotation.services import round_lock, suggested_codes
from core.roles import ANNOTATOR

from .factories import alternating_traits, api_client_for, client_for, make_dataset, make_round, make_suggestions
from .factories import numbered_csv as corpus_csv
from .test_review import HTMX, answer

pytestmark = pytest.mark.django_db


def _annotators(prefix: str, n: int) -> list[User]:
    users = User.objects.bulk_create([User(username=f"{prefix}{i:03d}") for i in range(n)])
    Group.objects.get(name=ANNOTATOR).user_set.add(*users)
    return list(User.objects.filter(username__startswith=prefix).order_by("username"))


def _world(*, name: str, n_items: int, n_annotators: int):
    """A round of ``n_items`` items, two annotators each, with about a third of every queue answered."""
    dataset = make_dataset(name=f"{name} corpus", csv=corpus_csv(n_items, text=f"{name} câu {{n}}"))
    suggestions = make_suggestions(dataset, traits=alternating_traits)
    annotators = _annotators(f"{name}_", n_annotators)
    round_ = make_round(dataset, annotators, name=name, suggestion_set=suggestions, seed=29)
    theme = Theme.objects.order_by("number").first()
    answered = [
        pk
        for pk, position in Assignment.objects.filter(item__round=round_).values_list("pk", "position")
        if position % 3 == 0
    ]
    Assignment.objects.filter(pk__in=answered).update(status=AssignmentStatus.SUBMITTED, theme=theme)
    return round_, annotators[0]


def _own_rows(round_, user) -> int:
    return Assignment.objects.filter(item__round=round_, annotator=user).count()


def _requests(round_, user):
    """(name, callable) of every request on the review path, in the order a working day makes them."""
    client = client_for(user)
    api = api_client_for(user)
    # Items whose other annotator has not answered yet: a save then leaves the item pending in both
    # worlds (a second answer decides the item, which writes more, whatever the size).
    answered_by_others = Assignment.objects.filter(item__round=round_, status=AssignmentStatus.SUBMITTED).exclude(
        annotator=user
    )
    queue = list(
        Assignment.objects.filter(item__round=round_, annotator=user, status=AssignmentStatus.PENDING)
        .exclude(item__in=answered_by_others.values("item"))
        .order_by("position")
    )
    first, second = queue[:2]
    # The skipped item has two open items after it in both worlds: with fewer, the next-two read wraps
    # to the queue's start, a query more whatever the size, and which world that happens in is chance.
    open_positions = set(
        Assignment.objects.filter(
            item__round=round_, annotator=user, status__in=[AssignmentStatus.PENDING, AssignmentStatus.DRAFT]
        ).values_list("position", flat=True)
    ) - {first.position, second.position}
    third = next(a for a in queue[2:] if sum(p > a.position for p in open_positions) >= 2)
    api_item = next(a for a in queue[2:] if a != third)

    def item(assignment):
        return reverse("annotation:review_item", args=[round_.pk, assignment.pk])

    def draft_data(assignment):
        return {"theme": "love", "note": "nháp", "revision": assignment.revision}

    def api_answer(assignment):
        decisions = {code: "accept" for code in suggested_codes(assignment.item)}
        return {"theme": "love", "trait_decisions": decisions, "revision": assignment.revision}

    return [
        ("home", lambda: client.get(reverse("home"))),
        ("round list", lambda: client.get(reverse("annotation:round_list"))),
        ("queue entry", lambda: client.get(reverse("annotation:review_queue", args=[round_.pk]))),
        ("item", lambda: client.get(item(first))),
        ("item (htmx)", lambda: client.get(item(first), headers=HTMX)),
        (
            "draft",
            lambda: client.post(reverse("annotation:review_draft", args=[round_.pk, first.pk]), draft_data(first)),
        ),
        ("save (htmx)", lambda: client.post(item(first), answer(first, theme="love"), headers=HTMX)),
        ("save", lambda: client.post(item(second), answer(second, theme="love"))),
        ("skip", lambda: client.post(reverse("annotation:review_skip", args=[round_.pk, third.pk]), headers=HTMX)),
        ("outcomes", lambda: client.get(reverse("annotation:review_outcomes", args=[round_.pk]))),
        ("api list", lambda: api.get(reverse("api:assignment_list", args=[round_.pk]))),
        ("api item", lambda: api.get(reverse("api:assignment_detail", args=[api_item.pk]))),
        (
            "api submit",
            lambda: api.post(reverse("api:assignment_submit", args=[api_item.pk]), api_answer(api_item), format="json"),
        ),
        (
            "finished page",
            lambda: (round_lock(round=round_), client.get(reverse("annotation:review_queue", args=[round_.pk])))[1],
        ),
        ("outcomes (locked)", lambda: client.get(reverse("annotation:review_outcomes", args=[round_.pk]))),
    ]


def _walk(round_, user) -> dict[str, tuple[int, list[str]]]:
    """{request: (queries, their SQL)} for every request of the review path."""
    # The taxonomy's rows are read once per process and kept for a while: read them now, so that
    # which world is walked first does not decide who pays for them.
    taxonomy_rows()
    trait_codes()
    trait_numbers()
    theme_ids()
    result = {}
    for name, request in _requests(round_, user):
        with CaptureQueriesContext(connection) as captured:
            response = request()
        assert response.status_code in (200, 302), (name, response.status_code)
        result[name] = (len(captured), [q["sql"] for q in captured.captured_queries])
    return result


def _counts(walk: dict) -> dict[str, int]:
    return {name: n for name, (n, _sql) in walk.items()}


def test_it_runs_the_same_queries_for_5_and_60_annotators():
    small = _counts(_walk(*_world(name="few", n_items=600, n_annotators=5)))
    large = _counts(_walk(*_world(name="many", n_items=600, n_annotators=60)))
    assert small == large


def test_it_runs_the_same_queries_for_50_and_2000_items():
    small = _counts(_walk(*_world(name="short", n_items=50, n_annotators=5)))
    large = _counts(_walk(*_world(name="long", n_items=2000, n_annotators=5)))
    assert small == large


# --- What each query reads (PostgreSQL's plans) ---------------------------------------------------

SCAN_SLACK = 60  # taxonomy, the user, the session: rows that do not grow with the round


def _rows_read(node: dict) -> float:
    """Rows a plan node and those under it took from tables or indexes, over all its loops."""
    loops = node.get("Actual Loops", 1)
    own = 0.0
    if "Relation Name" in node or node.get("Node Type", "").startswith(("Index", "Bitmap Index")):
        own = (
            node.get("Actual Rows", 0)
            + node.get("Rows Removed by Filter", 0)
            + node.get("Rows Removed by Index Recheck", 0)
        ) * loops
    return own + sum(_rows_read(child) for child in node.get("Plans", []))


def _subplan_loops(node: dict) -> int:
    """The most times any subplan ran in this plan (once per outer row would grow with the round)."""
    here = node.get("Actual Loops", 1) if node.get("Parent Relationship") == "SubPlan" else 0
    return max([here, *(_subplan_loops(child) for child in node.get("Plans", []))])


def _plans(sql_list: list[str]) -> list[tuple[str, dict]]:
    plans = []
    with connection.cursor() as cursor:
        for sql in sql_list:
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            # In a savepoint: a SELECT ... FOR UPDATE explained with ANALYZE takes its locks.
            cursor.execute("SAVEPOINT explain_it")
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
            explained = cursor.fetchone()[0]
            explained = json.loads(explained) if isinstance(explained, str) else explained
            plans.append((sql, explained[0]["Plan"]))
            cursor.execute("ROLLBACK TO SAVEPOINT explain_it")
    return plans


def test_it_reads_only_the_annotators_own_rows_on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("EXPLAIN ANALYZE's plans are PostgreSQL's")
    round_, user = _world(name="pg", n_items=2000, n_annotators=40)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    own = _own_rows(round_, user)
    assert own * 10 < round_.item_count  # the round is far larger than one annotator's queue
    walk = _walk(round_, user)
    too_much = []
    for name, (_n, sql_list) in walk.items():
        for sql, plan in _plans(sql_list):
            read, loops = _rows_read(plan), _subplan_loops(plan)
            if read > 2 * own + SCAN_SLACK or loops > own + SCAN_SLACK:
                too_much.append((name, int(read), loops, sql[:300]))
    assert too_much == []
