"""The blindness rule on every channel.

An annotator learns nothing about the other annotators' labels of a round they
annotate until it is locked, whatever other role they hold; and someone whose
only role is Annotator never sees the gold traits and theme.
"""

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation.models import ItemStatus
from annotation.services import (
    adjudication_resolve,
    assignment_submit,
    round_lock,
    version_freeze,
)
from core.roles import ADJUDICATOR, RESEARCHER

from .factories import add_role, client_for, make_dataset, make_round

pytestmark = pytest.mark.django_db

# Gold labels chosen so that their codes and names appear nowhere else on the pages.
GOLD_CSV = (
    "expression,explanation,traits,theme\n"
    "Ăn quả nhớ kẻ trồng cây,Biết ơn người đi trước,folk_knowledge,work_nature\n"
    "Nước chảy đá mòn,Bền bỉ thắng tất cả,folk_knowledge,work_nature\n"
)


@pytest.fixture
def gold_dataset(db):
    """Two expressions whose gold labels appear nowhere else on the pages."""
    return make_dataset(name="Gold corpus", csv=GOLD_CSV, filename="gold.csv")


@pytest.fixture
def disputed_round(gold_dataset, annotator_a, annotator_b, researcher):
    """An open round in which A and B disagree on the first item and agree on the second."""
    round_ = make_round(gold_dataset, [annotator_a, annotator_b], name="Blind round", user=researcher, seed=1)
    first, second = round_.items.order_by("id")
    for item, theme_b in ((first, "virtues"), (second, "love")):
        assignment_submit(assignment=item.assignments.get(annotator=annotator_a), user=annotator_a, theme="love")
        assignment_submit(assignment=item.assignments.get(annotator=annotator_b), user=annotator_b, theme=theme_b)
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == (ItemStatus.NEEDS_ADJUDICATION, ItemStatus.UNANIMOUS)
    return round_


# --- A round's funnel, progress, statistics and adjudication data ---------------------


def test_it_hides_the_funnel_from_an_annotator_who_adjudicates_the_open_round(disputed_round, annotator_a):
    add_role(annotator_a, ADJUDICATOR)
    client = client_for(annotator_a)

    page = client.get(reverse("annotation:round_detail", args=[disputed_round.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-stage="needs_adjudication"' not in html and 'data-stage="unanimous"' not in html
    assert 'id="blind-notice"' in html
    assert 'data-annotator="annotator_b"' not in html and 'data-annotator="annotator_a"' in html
    assert reverse("annotation:round_stats", args=[disputed_round.pk]) not in html

    api = client.get(reverse("api:round_detail", args=[disputed_round.pk])).json()
    assert api["funnel"] is None
    assert [row["annotator"] for row in api["progress"]] == ["annotator_a"]
    assert api["annotators"] == ["annotator_a"]


def test_it_hides_the_funnel_from_a_researcher_who_annotates_the_open_round(disputed_round, annotator_a):
    add_role(annotator_a, RESEARCHER)
    client = client_for(annotator_a)
    html = client.get(reverse("annotation:round_detail", args=[disputed_round.pk])).content.decode()
    assert 'data-stage="needs_adjudication"' not in html
    # A researcher who annotates can still lock the round.
    assert reverse("annotation:round_lock", args=[disputed_round.pk]) in html
    assert client.get(reverse("api:round_detail", args=[disputed_round.pk])).json()["funnel"] is None
    rows = client.get(reverse("annotation:round_list")).context["rows"]
    assert [row["overall"] for row in rows] == [None]


def test_it_shows_the_funnel_once_the_round_is_locked(disputed_round, annotator_a):
    add_role(annotator_a, ADJUDICATOR)
    round_lock(round=disputed_round)
    client = client_for(annotator_a)
    html = client.get(reverse("annotation:round_detail", args=[disputed_round.pk])).content.decode()
    assert 'data-stage="needs_adjudication"' in html and 'data-annotator="annotator_b"' in html
    assert client.get(reverse("api:round_detail", args=[disputed_round.pk])).json()["funnel"]["needs_adjudication"] == 1


def test_it_shows_the_funnel_of_an_open_round_to_those_who_do_not_annotate_it(disputed_round, researcher, adjudicator):
    for user in (researcher, adjudicator):
        client = client_for(user)
        html = client.get(reverse("annotation:round_detail", args=[disputed_round.pk])).content.decode()
        assert 'data-stage="needs_adjudication"' in html
        assert (
            client.get(reverse("api:round_detail", args=[disputed_round.pk])).json()["funnel"]["needs_adjudication"]
            == 1
        )


def test_it_refuses_statistics_to_an_annotator_who_adjudicates_the_open_round(disputed_round, annotator_a):
    add_role(annotator_a, ADJUDICATOR)
    client = client_for(annotator_a)
    assert client.get(reverse("annotation:round_stats", args=[disputed_round.pk])).status_code == 403
    assert client.get(reverse("annotation:round_stats", args=[disputed_round.pk]) + "?format=json").status_code == 403
    assert client.get(reverse("api:round_stats", args=[disputed_round.pk])).status_code == 403


def test_it_gives_the_same_adjudication_answer_for_every_item_of_an_open_round(disputed_round, annotator_a):
    """A refused decision on an open round must not tell a disputed item from a unanimous one."""
    add_role(annotator_a, ADJUDICATOR)
    client = client_for(annotator_a)
    answers = []
    for item in disputed_round.items.order_by("id"):
        url = reverse("annotation:adjudication_item", args=[disputed_round.pk, item.pk])
        get = client.get(url).content.decode().replace(str(item.pk), "ID").replace(item.expression.text, "X")
        post = client.post(url, {"action": "resolve", "revision": item.revision, "theme": "nope"})
        posted = post.content.decode().replace(str(item.pk), "ID").replace(item.expression.text, "X")
        answers.append((get.count("disabled"), posted.count("disabled"), post.status_code))
        assert client.get(reverse("api:item_history", args=[item.pk])).json()["outcome"] is None
    assert answers[0] == answers[1]
    assert client.get(reverse("api:adjudication_list", args=[disputed_round.pk])).status_code == 409


# --- Gold traits and theme ------------------------------------------------------------


def test_it_hides_gold_labels_on_the_dataset_page_from_annotators(gold_dataset, annotator_a, adjudicator):
    url = reverse("annotation:dataset_detail", args=[gold_dataset.pk])
    html = client_for(annotator_a).get(url).content.decode()
    assert "Folk knowledge" not in html and "work_nature" not in html and 'name="theme"' not in html
    # A filter by gold theme would reveal it too: it is ignored.
    filtered = client_for(annotator_a).get(url + "?theme=love").context["page"].paginator.count
    assert filtered == 2
    assert client_for(adjudicator).get(url + "?theme=love").context["page"].paginator.count == 0
    assert 'name="theme"' in client_for(adjudicator).get(url).content.decode()


def test_it_hides_gold_labels_in_the_expressions_api_from_annotators(gold_dataset, annotator_a, researcher):
    rows = client_for(annotator_a).get(reverse("api:expression-list")).json()["results"]
    assert {(row["traits"], row["theme"]) for row in rows} == {(None, None)}
    one = client_for(annotator_a).get(reverse("api:expression-detail", args=[rows[0]["id"]])).json()
    assert one["traits"] is None and one["theme"] is None
    for param in ("theme=love", "trait=literal"):
        refused = client_for(annotator_a).get(reverse("api:expression-list") + "?" + param)
        assert refused.status_code == 403 and param.split("=")[0] in refused.json()["detail"]

    rows = client_for(researcher).get(reverse("api:expression-list")).json()["results"]
    assert {(tuple(row["traits"]), row["theme"]) for row in rows} == {(("folk_knowledge",), "work_nature")}


def test_it_hides_gold_labels_from_an_adjudicator_while_they_annotate_an_open_round(disputed_round, annotator_a):
    add_role(annotator_a, ADJUDICATOR)
    client = client_for(annotator_a)
    rows = client.get(reverse("api:expression-list")).json()["results"]
    assert {(row["traits"], row["theme"]) for row in rows} == {(None, None)}
    page = client.get(reverse("annotation:dataset_detail", args=[disputed_round.dataset_id])).content.decode()
    assert "work_nature" not in page

    round_lock(round=disputed_round, user=disputed_round.created_by)
    rows = client.get(reverse("api:expression-list")).json()["results"]
    assert {row["theme"] for row in rows} == {"work_nature"}


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_it_leaves_gold_labels_out_of_the_dataset_export_for_annotators(gold_dataset, annotator_a, adjudicator, fmt):
    for url in (
        reverse("annotation:dataset_export", args=[gold_dataset.pk]) + f"?format={fmt}",
        reverse("api:dataset-export", args=[gold_dataset.pk]) + f"?format={fmt}",
    ):
        body = client_for(annotator_a).get(url).content.decode()
        assert "folk_knowledge" not in body and "work_nature" not in body
        if fmt == "csv":
            assert next(csv.reader(io.StringIO(body))) == ["id", "expression", "explanation", "kind", "source"]
        else:
            assert "theme" not in json.loads(body.splitlines()[0])
        assert "work_nature" in client_for(adjudicator).get(url).content.decode()


def test_it_hides_a_gold_filter_of_a_round_from_annotators(gold_dataset, annotator_a, annotator_b, researcher):
    make_round(
        gold_dataset,
        [annotator_a, annotator_b],
        name="Filtered",
        user=researcher,
        item_filter={"theme": "work_nature"},
        seed=1,
    )
    listed = client_for(annotator_a).get(reverse("api:round_list")).json()
    assert listed[0]["item_filter"] == {}
    detail = client_for(annotator_a).get(reverse("api:round_detail", args=[listed[0]["id"]])).json()
    assert detail["item_filter"] == {}
    assert client_for(researcher).get(reverse("api:round_list")).json()[0]["item_filter"] == {"theme": "work_nature"}


def test_it_leaves_final_labels_out_of_a_version_for_annotators(disputed_round, annotator_a, researcher):
    round_lock(round=disputed_round)
    disputed = disputed_round.items.get(status=ItemStatus.NEEDS_ADJUDICATION)
    adjudication_resolve(item=disputed, user=researcher, traits=[], theme="love", revision=disputed.revision)
    version = version_freeze(round=disputed_round, name="v-blind")
    for url in (
        reverse("annotation:version_export", args=[version.pk]) + "?format=csv",
        reverse("api:version_export", args=[version.pk]) + "?format=csv",
    ):
        body = client_for(annotator_a).get(url).content.decode()
        assert next(csv.reader(io.StringIO(body)))[:6] == [
            "id",
            "expression",
            "explanation",
            "kind",
            "source",
            "provenance",
        ]
        assert "love" in client_for(researcher).get(url).content.decode()
    page = client_for(annotator_a).get(reverse("annotation:version_detail", args=[version.pk]))
    assert not page.context["gold"]
