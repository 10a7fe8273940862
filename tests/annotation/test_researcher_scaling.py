"""The researcher's pages and API lists run as many queries for a large round as for a small one (issue 29).

Each page is asked as its first visit after an answer (the shared cache emptied before it), for a
round of 12 items and 3 annotators and one of 150 items and 8 annotators, and for both states a
researcher works in: the open round (statistics, quality, progress) and the locked round with
its adjudication queue and a frozen version. Nothing here is timed: ``benchmarks/scale.py`` times
the same pages at a research team's size.
"""

import random

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment, Theme
from annotation.services import assignment_submit, round_lock
from core.roles import ANNOTATOR

from .factories import alternating_traits, api_client_for, client_for, make_dataset, make_round, make_suggestions
from .factories import numbered_csv as corpus_csv

pytestmark = pytest.mark.django_db


def _world(*, name: str, n_items: int, n_annotators: int):
    """A round with every answer in: two annotators an item, a third of the answers straying."""
    dataset = make_dataset(name=f"{name} corpus", csv=corpus_csv(n_items, text=f"{name} câu {{n}}"))
    suggestions = make_suggestions(dataset, traits=alternating_traits)
    users = User.objects.bulk_create([User(username=f"{name}_{i:02d}") for i in range(n_annotators)])
    Group.objects.get(name=ANNOTATOR).user_set.add(*users)
    annotators = list(User.objects.filter(username__startswith=f"{name}_").order_by("username"))
    round_ = make_round(dataset, annotators, name=name, suggestion_set=suggestions, hide_suggestions_fraction=0.2)
    rng = random.Random(29)
    themes = list(Theme.objects.order_by("number").values_list("code", flat=True))
    by_pk = {user.pk: user for user in annotators}
    for n, assignment in enumerate(
        Assignment.objects.filter(round=round_).select_related("item__round").order_by("id")
    ):
        item = assignment.item
        theme = themes[item.pk % 3] if rng.random() > 0.33 else rng.choice(themes)
        decisions = {code: "accept" for code in item.suggested or []} if not item.suggestions_hidden else {}
        assignment_submit(
            assignment=assignment,
            user=by_pk[assignment.annotator_id],
            theme=theme,
            trait_decisions=decisions,
            # Every size has answers under the round's fast threshold (the Quality tab lists them).
            seconds=1.0 if n % 5 == 0 else rng.uniform(4, 30),
        )
    return round_


def _open_round_pages(round_) -> list[tuple[str, str]]:
    pk = round_.pk
    return [
        ("home", reverse("home")),
        ("round list", reverse("annotation:round_list")),
        ("round page", reverse("annotation:round_detail", args=[pk])),
        ("statistics", reverse("annotation:round_stats", args=[pk])),
        ("statistics figure", reverse("annotation:round_stats_figure", args=[pk, "themes", "svg"])),
        ("quality tab", reverse("annotation:round_quality", args=[pk])),
        ("quality figure", reverse("annotation:round_quality_figure", args=[pk, "drift-pairs", "svg"])),
        ("dataset list", reverse("annotation:dataset_list")),
        ("dataset page", reverse("annotation:dataset_detail", args=[round_.dataset_id])),
        ("dataset export", reverse("annotation:dataset_export", args=[round_.dataset_id]) + "?format=csv"),
        ("api rounds", reverse("api:round_list")),
        ("api round", reverse("api:round_detail", args=[pk])),
        ("api statistics", reverse("api:round_stats", args=[pk])),
        ("api quality", reverse("api:round_quality", args=[pk])),
        ("api datasets", reverse("api:dataset-list")),
        ("api expressions", reverse("api:expression-list") + f"?dataset={round_.dataset_id}"),
    ]


def _locked_round_pages(round_) -> list[tuple[str, str]]:
    pk = round_.pk
    return [
        ("round page (locked)", reverse("annotation:round_detail", args=[pk])),
        ("adjudication queue", reverse("annotation:adjudication_queue", args=[pk])),
        ("api adjudication list", reverse("api:adjudication_list", args=[pk])),
        ("statistics (locked)", reverse("annotation:round_stats", args=[pk])),
    ]


def _visit(clients: dict, pages) -> dict[str, int]:
    counts = {}
    for name, url in pages:
        cache.clear()
        role = "adjudicator" if "adjudication" in name else "researcher"
        kind = "api" if name.startswith("api") else "page"
        with CaptureQueriesContext(connection) as captured:
            response = clients[role, kind].get(url)
            if getattr(response, "streaming", False):
                b"".join(response.streaming_content)
        assert response.status_code == 200, (name, response.status_code)
        counts[name] = len(captured)
    return counts


def _walk(round_, researcher, adjudicator) -> dict[str, int]:
    clients = {}
    for role, user in (("researcher", researcher), ("adjudicator", adjudicator)):
        clients[role, "page"], clients[role, "api"] = client_for(user), api_client_for(user)
    counts = _visit(clients, _open_round_pages(round_))
    round_lock(round=round_, user=researcher)
    counts |= _visit(clients, _locked_round_pages(round_))
    return counts


def test_it_runs_the_same_queries_for_a_small_and_a_large_round(researcher, adjudicator):
    small = _walk(_world(name="small", n_items=12, n_annotators=3), researcher, adjudicator)
    large = _walk(_world(name="large", n_items=150, n_annotators=8), researcher, adjudicator)
    assert small == large
