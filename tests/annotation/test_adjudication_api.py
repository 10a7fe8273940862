"""Adjudication and item history through the REST API."""

import json

import pytest
from django.urls import reverse

from annotation.models import ItemStatus, RoundItem
from annotation.services import adjudication_resolve

from .factories import A_NOTE, B_NOTE, api_client_for, make_adjudication_round, make_adjudicator, make_annotator

pytestmark = pytest.mark.django_db


@pytest.fixture
def open_round(annotator_a, annotator_b, researcher):
    return make_adjudication_round(annotator_a, annotator_b, researcher, lock=False)


@pytest.fixture
def locked_round(annotator_a, annotator_b, researcher):
    return make_adjudication_round(annotator_a, annotator_b, researcher)


def list_url(round_):
    return reverse("api:adjudication_list", args=[round_.pk])


def resolve_url(item):
    return reverse("api:adjudication_resolve", args=[item.pk])


def history_url(item):
    return reverse("api:item_history", args=[item.pk])


def status_of(item) -> str:
    return RoundItem.objects.get(pk=item.pk).status


# --- Permissions --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("anonymous", 401), ("outsider", 403), ("annotator", 403), ("researcher", 200), ("adjudicator", 200)],
)
def test_it_lets_only_adjudicators_and_researchers_list_disputed_items(locked_round, api_as, persona, expected):
    round_, _items = locked_round
    response = api_as(persona).get(list_url(round_))
    assert response.status_code == expected
    if expected != 200:
        assert B_NOTE not in response.content.decode()


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("anonymous", 401), ("outsider", 403), ("annotator", 403), ("researcher", 403), ("adjudicator", 200)],
)
def test_it_lets_only_adjudicators_resolve(locked_round, api_as, persona, expected):
    round_, items = locked_round
    response = api_as(persona).post(
        resolve_url(items[0]), {"action": "resolve", "theme": "love", "revision": items[0].revision}, format="json"
    )
    assert response.status_code == expected
    assert status_of(items[0]) == (ItemStatus.ADJUDICATED if expected == 200 else ItemStatus.NEEDS_ADJUDICATION)


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("anonymous", 401), ("outsider", 403), ("annotator", 200), ("researcher", 200), ("adjudicator", 200)],
)
def test_it_shows_item_history_to_staff_and_assigned_annotators(locked_round, api_as, persona, expected):
    round_, items = locked_round
    assert api_as(persona).get(history_url(items[0])).status_code == expected


def test_it_hides_an_item_from_an_annotator_it_was_not_given_to(locked_round):
    round_, items = locked_round
    api = api_client_for(make_annotator("annotator_c"), session=False)
    response = api.get(history_url(items[0]))
    assert response.status_code == 404 and B_NOTE not in response.content.decode()


def test_it_answers_404_for_unknown_rounds_and_items(locked_round, api_as):
    round_, _items = locked_round
    api = api_as("adjudicator")
    assert api.get(reverse("api:adjudication_list", args=[round_.pk + 1000])).status_code == 404
    assert (
        api.post(
            reverse("api:adjudication_resolve", args=[999999]), {"action": "resolve", "revision": 0}, format="json"
        ).status_code
        == 404
    )
    assert api.get(reverse("api:item_history", args=[999999])).status_code == 404


# --- Listing --------------------------------------------------------------------------


def test_it_lists_nothing_before_the_round_is_locked(open_round, api_as):
    round_, _items = open_round
    for persona in ("adjudicator", "researcher"):
        response = api_as(persona).get(list_url(round_))
        body = response.content.decode()
        assert response.status_code == 409 and "locks the round" in response.json()["detail"]
        assert response.json()["round_status"] == "open"
        assert A_NOTE not in body and B_NOTE not in body and "annotator_b" not in body


def test_it_lists_disputed_items_with_both_annotators_labels(locked_round, api_as):
    round_, items = locked_round
    response = api_as("adjudicator").get(list_url(round_))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3 and [r["id"] for r in body["results"]] == [items[0].pk, items[1].pk, items[3].pk]
    first = body["results"][0]
    assert first["expression"] == items[0].expression.text and first["revision"] == items[0].revision
    assert first["llm_traits"] == ["literal", "folk_knowledge"] and first["suggestions_hidden"] is False
    assert [(a["annotator"], a["theme"], a["traits"], a["note"]) for a in first["annotations"]] == [
        ("annotator_a", "love", ["literal"], A_NOTE),
        ("annotator_b", "virtues", ["folk_knowledge", "literal"], B_NOTE),
    ]
    assert first["annotations"][0]["trait_decisions"] == {"literal": "accept", "folk_knowledge": "reject"}
    assert first["differences"] == {"theme": True, "traits": ["folk_knowledge"], "unsure": [], "flagged": False}
    assert first["agreed"] == {"traits": ["literal"], "theme": None}
    second = body["results"][1]
    assert second["differences"] == {
        "theme": False,
        "traits": ["folk_knowledge"],
        "unsure": ["folk_knowledge"],
        "flagged": True,
    }
    assert second["agreed"]["theme"] == "love"
    third = body["results"][2]
    assert third["annotations"][0]["added_traits"] == ["pragmatic"] and third["differences"]["traits"] == ["pragmatic"]


# --- Resolving ------------------------------------------------------------------------


def test_it_resolves_and_removes_items(locked_round, api_as, adjudicator):
    round_, items = locked_round
    api = api_as("adjudicator")
    response = api.post(
        resolve_url(items[0]),
        {
            "action": "resolve",
            "traits": ["literal", "pragmatic"],
            "theme": "virtues",
            "note": "settled",
            "revision": items[0].revision,
        },
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "adjudicated" and body["final_traits"] == ["literal", "pragmatic"]
    assert body["final_theme"] == "virtues" and body["resolution_note"] == "settled"
    assert body["resolved_by"] == "adjudicator" and body["revision"] == items[0].revision + 1
    response = api.post(
        resolve_url(items[1]),
        {"action": "remove", "reason": "inaccurate", "revision": items[1].revision},
        format="json",
    )
    assert response.status_code == 200 and response.json()["status"] == "removed"
    assert response.json()["removal_reason"] == "inaccurate"
    assert api.get(list_url(round_)).json()["count"] == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"action": "resolve", "traits": ["literal"]}, "theme"),
        ({"action": "resolve", "theme": "love", "traits": ["nonsense"]}, "traits"),
        ({"action": "resolve", "theme": "nonsense"}, "theme"),
        ({"action": "remove"}, "reason"),
        ({"action": "remove", "reason": "other", "note": " "}, "note"),
        ({"action": "remove", "reason": "because"}, "reason"),
        ({"action": "approve", "theme": "love"}, "action"),
        ({"action": "resolve", "theme": "love", "revision": None}, "revision"),
    ],
)
def test_it_answers_400_with_the_field_at_fault(locked_round, api_as, payload, field):
    round_, items = locked_round
    response = api_as("adjudicator").post(
        resolve_url(items[0]), {"revision": items[0].revision, **payload}, format="json"
    )
    assert response.status_code == 400 and field in response.json(), response.json()
    assert status_of(items[0]) == ItemStatus.NEEDS_ADJUDICATION


def test_it_refuses_to_resolve_before_the_lock(open_round, api_as):
    round_, items = open_round
    response = api_as("adjudicator").post(
        resolve_url(items[0]), {"action": "resolve", "theme": "love", "revision": items[0].revision}, format="json"
    )
    assert response.status_code == 400 and "locked" in json.dumps(response.json())
    assert A_NOTE not in response.content.decode() and B_NOTE not in response.content.decode()


def test_it_lets_the_first_of_two_adjudicators_win_and_names_them_to_the_second(locked_round, adjudicator):
    round_, items = locked_round
    second = make_adjudicator("adjudicator_2")
    first_api, second_api = api_client_for(adjudicator, session=False), api_client_for(second, session=False)
    seen = {r["id"]: r["revision"] for r in second_api.get(list_url(round_)).json()["results"]}
    won = first_api.post(
        resolve_url(items[0]), {"action": "resolve", "theme": "love", "revision": seen[items[0].pk]}, format="json"
    )
    assert won.status_code == 200
    lost = second_api.post(
        resolve_url(items[0]),
        {"action": "remove", "reason": "inaccurate", "revision": seen[items[0].pk]},
        format="json",
    )
    assert lost.status_code == 409
    body = lost.json()
    assert body["detail"].startswith("adjudicator resolved this item first")
    assert body["current"]["status"] == "adjudicated" and body["current"]["final_theme"] == "love"
    assert body["current"]["resolved_by"] == "adjudicator"
    assert status_of(items[0]) == ItemStatus.ADJUDICATED


# --- History --------------------------------------------------------------------------


def test_it_gives_an_annotator_only_their_own_history_before_the_lock(open_round, api_as):
    round_, items = open_round
    response = api_as("annotator").get(history_url(items[0]))
    body = response.content.decode()
    assert response.status_code == 200
    data = response.json()
    assert data["outcome"] is None
    assert {c["actor"] for c in data["changes"]} == {"annotator_a"}
    assert A_NOTE in body and B_NOTE not in body and "annotator_b" not in body and "virtues" not in body
    # The researcher does not see the labels before the lock either.
    assert api_as("researcher").get(history_url(items[0])).json()["changes"] == []


def test_it_gives_the_full_history_and_outcome_after_resolution(locked_round, api_as, adjudicator):
    round_, items = locked_round
    adjudication_resolve(
        item=items[0], user=adjudicator, traits=["literal"], theme="criticism", revision=items[0].revision
    )
    data = api_as("adjudicator").get(history_url(items[0])).json()
    changes = {(c["actor"], c["field"]): c for c in data["changes"]}
    assert changes[("annotator_b", "note")]["new_value"] == B_NOTE
    assert (
        changes[("annotator_a", "theme")]["old_value"] is None
        and changes[("annotator_a", "theme")]["new_value"] == "love"
    )
    assert changes[("adjudicator", "status")]["old_value"] == "needs_adjudication"
    assert changes[("adjudicator", "status")]["by_annotator"] is False
    assert all(c["at"] for c in data["changes"])
    annotator_view = api_as("annotator").get(history_url(items[0])).json()
    assert (
        annotator_view["outcome"]["final_theme"] == "criticism" and annotator_view["outcome"]["status"] == "adjudicated"
    )
    assert {c["actor"] for c in annotator_view["changes"]} == {"annotator_a", "adjudicator"}


def test_it_documents_every_endpoint_in_the_schema(api_as):
    paths = api_as("annotator").get(reverse("api-schema"), {"format": "json"}).json()["paths"]
    assert set(paths["/api/rounds/{round_pk}/adjudication/"]) == {"get"}
    assert set(paths["/api/items/{id}/resolve/"]) == {"post"}
    assert set(paths["/api/items/{id}/history/"]) == {"get"}
    assert "409" in paths["/api/items/{id}/resolve/"]["post"]["responses"]
