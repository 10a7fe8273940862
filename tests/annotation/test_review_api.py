"""The review API: own assignments only, 401/403/404 for everyone else, 409 for a stale revision."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, AssignmentStatus, LabelChange
from annotation.services import (
    assignment_submit,
    round_lock,
    suggested_codes,
)

from .factories import (
    api_client_for,
    make_annotator,
    make_dataset,
    make_round,
    make_suggestions,
    numbered_csv,
    queue_of,
)

pytestmark = pytest.mark.django_db

SECRET_NOTE = "ghi-chu-rieng-cua-A-4412"


@pytest.fixture
def review_round(annotator_a, annotator_b, researcher):
    dataset = make_dataset(name="API corpus", csv=numbered_csv(4, text="Thành ngữ {n}", explanation="Nghĩa {n}"))
    suggestions = make_suggestions(dataset, traits=("pragmatic", "literal"))
    return make_round(
        dataset,
        [annotator_a, annotator_b],
        name="API round",
        suggestion_set=suggestions,
        hide_suggestions_fraction=0.5,
        seed=11,
        user=researcher,
    )


def shown(round_, user) -> Assignment:
    return next(a for a in queue_of(round_, user) if not a.item.suggestions_hidden)


def body(assignment, **overrides) -> dict:
    data = {
        "theme": "criticism",
        "trait_decisions": {code: "accept" for code in suggested_codes(assignment.item)},
        "added_traits": [],
        "flagged": False,
        "note": "",
        "revision": assignment.revision,
    }
    return {**data, **overrides}


def list_url(round_) -> str:
    return reverse("api:assignment_list", args=[round_.pk])


def detail_url(assignment) -> str:
    return reverse("api:assignment_detail", args=[assignment.pk])


def submit_url(assignment) -> str:
    return reverse("api:assignment_submit", args=[assignment.pk])


def test_it_lists_only_the_callers_assignments(review_round, annotator_a):
    response = api_client_for(annotator_a).get(list_url(review_round))
    assert response.status_code == 200
    results = response.json()["results"]
    mine = queue_of(review_round, annotator_a)
    assert response.json()["count"] == 4 and [r["id"] for r in results] == [a.pk for a in mine]
    first = results[0]
    assert set(first) >= {
        "id",
        "round",
        "item",
        "position",
        "status",
        "expression",
        "explanation",
        "suggestions_shown",
        "suggested_traits",
        "theme",
        "trait_decisions",
        "added_traits",
        "flagged",
        "note",
        "draft",
        "revision",
    }
    for row, assignment in zip(results, mine, strict=True):
        hidden = assignment.item.suggestions_hidden
        assert row["suggestions_shown"] is (not hidden)
        assert row["suggested_traits"] == ([] if hidden else ["literal", "pragmatic"])
        assert row["expression"] == assignment.item.expression.text and row["status"] == "pending"
        assert row["theme"] is None and row["revision"] == 0
    assert {r["suggestions_shown"] for r in results} == {True, False}


def test_it_guards_the_list(review_round, outsider, researcher, adjudicator):
    url = list_url(review_round)
    assert api_client_for().get(url).status_code == 401
    for user in (outsider, researcher, adjudicator):
        assert api_client_for(user).get(url).status_code == 403
    stranger = make_annotator("annotator_c")
    assert api_client_for(stranger).get(url).status_code == 404
    assert api_client_for(stranger).get(reverse("api:assignment_list", args=[999999])).status_code == 404


def test_it_shows_an_own_assignment_and_hides_everyone_elses(review_round, annotator_a, annotator_b, researcher):
    mine = queue_of(review_round, annotator_a)[0]
    response = api_client_for(annotator_a).get(detail_url(mine))
    assert response.status_code == 200 and response.json()["id"] == mine.pk
    assert api_client_for(annotator_b).get(detail_url(mine)).status_code == 404
    assert api_client_for(annotator_b).get(reverse("api:assignment_detail", args=[999999])).status_code == 404
    assert api_client_for().get(detail_url(mine)).status_code == 401
    assert api_client_for(researcher).get(detail_url(mine)).status_code == 403


def test_it_submits_and_returns_the_saved_assignment(review_round, annotator_a):
    assignment = shown(review_round, annotator_a)
    data = body(
        assignment,
        trait_decisions={"literal": "reject", "pragmatic": "unsure"},
        added_traits=["folk_knowledge"],
        flagged=True,
        note=" xem lại ",
    )
    response = api_client_for(annotator_a).post(submit_url(assignment), data, format="json")
    assert response.status_code == 200, response.json()
    saved = response.json()
    assert saved["status"] == "submitted" and saved["revision"] == 1 and saved["theme"] == "criticism"
    assert saved["trait_decisions"] == {"literal": "reject", "pragmatic": "unsure"}
    assert saved["added_traits"] == ["folk_knowledge"] and saved["flagged"] is True and saved["note"] == "xem lại"
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED and assignment.revision == 1


def test_it_submits_present_traits_when_suggestions_are_hidden(review_round, annotator_a):
    assignment = next(a for a in queue_of(review_round, annotator_a) if a.item.suggestions_hidden)
    response = api_client_for(annotator_a).post(
        submit_url(assignment), body(assignment, trait_decisions={}, added_traits=["pragmatic"]), format="json"
    )
    assert response.status_code == 200 and response.json()["added_traits"] == ["pragmatic"]
    refused = api_client_for(annotator_a).post(
        submit_url(assignment), body(assignment, revision=1, trait_decisions={"pragmatic": "accept"}), format="json"
    )
    assert refused.status_code == 400 and "trait_decisions" in refused.json()


def test_it_answers_400_with_the_field_errors(review_round, annotator_a):
    assignment = shown(review_round, annotator_a)
    client = api_client_for(annotator_a)
    cases = [
        (body(assignment, theme="no-such-theme"), "theme"),
        (body(assignment, trait_decisions={"literal": "accept"}), "trait_decisions"),
        (body(assignment, trait_decisions={"literal": "maybe", "pragmatic": "accept"}), "trait_decisions"),
        (body(assignment, added_traits=["pragmatic"]), "added_traits"),
        (body(assignment, added_traits=["nope"]), "added_traits"),
        ({k: v for k, v in body(assignment).items() if k != "revision"}, "revision"),
        ({k: v for k, v in body(assignment).items() if k != "theme"}, "theme"),
    ]
    for data, field in cases:
        response = client.post(submit_url(assignment), data, format="json")
        assert response.status_code == 400, (data, response.content)
        assert field in response.json(), (field, response.json())
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.PENDING and assignment.revision == 0


def test_it_answers_409_to_a_stale_revision_and_changes_nothing(review_round, annotator_a):
    assignment = shown(review_round, annotator_a)
    client = api_client_for(annotator_a)
    assert (
        client.post(submit_url(assignment), body(assignment, theme="love", note="trước"), format="json").status_code
        == 200
    )
    stale = client.post(
        submit_url(assignment), body(assignment, theme="virtues", note="sau", revision=0), format="json"
    )
    assert stale.status_code == 409
    payload = stale.json()
    assert "another tab" in payload["detail"]
    assert (
        payload["current"]["theme"] == "love"
        and payload["current"]["note"] == "trước"
        and payload["current"]["revision"] == 1
    )
    assignment.refresh_from_db()
    assert assignment.theme.code == "love" and assignment.revision == 1


def test_it_treats_a_repeated_identical_submit_as_one(review_round, annotator_a):
    assignment = shown(review_round, annotator_a)
    client = api_client_for(annotator_a)
    data = body(assignment, note="một lần")
    assert client.post(submit_url(assignment), data, format="json").status_code == 200
    changes = LabelChange.objects.filter(assignment=assignment).count()
    again = client.post(submit_url(assignment), data, format="json")
    assert again.status_code == 200 and again.json()["revision"] == 1
    assert LabelChange.objects.filter(assignment=assignment).count() == changes


def test_it_guards_submit(review_round, annotator_a, annotator_b, outsider, researcher):
    assignment = shown(review_round, annotator_a)
    data = body(assignment)
    assert api_client_for().post(submit_url(assignment), data, format="json").status_code == 401
    assert api_client_for(outsider).post(submit_url(assignment), data, format="json").status_code == 403
    assert api_client_for(researcher).post(submit_url(assignment), data, format="json").status_code == 403
    assert api_client_for(annotator_b).post(submit_url(assignment), data, format="json").status_code == 404
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.PENDING


def test_it_refuses_a_submit_once_the_round_is_locked(review_round, annotator_a):
    assignment = shown(review_round, annotator_a)
    round_lock(round=review_round)
    response = api_client_for(annotator_a).post(submit_url(assignment), body(assignment), format="json")
    assert response.status_code == 400 and "locked" in str(response.json())
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.PENDING


def test_it_keeps_annotator_a_answer_out_of_annotator_b_api(review_round, annotator_a, annotator_b):
    for assignment in queue_of(review_round, annotator_a):
        assignment_submit(
            assignment=assignment,
            user=annotator_a,
            theme="love",
            trait_decisions={c: "unsure" for c in suggested_codes(assignment.item)},
            note=SECRET_NOTE,
            flagged=True,
        )
    client = api_client_for(annotator_b)
    responses = [client.get(list_url(review_round))]
    for assignment in queue_of(review_round, annotator_b):
        responses.append(client.get(detail_url(assignment)))
    theirs = queue_of(review_round, annotator_a)[0]
    responses.append(client.get(detail_url(theirs)))
    responses.append(client.post(submit_url(theirs), body(theirs), format="json"))
    mine = shown(review_round, annotator_b)
    responses.append(client.post(submit_url(mine), body(mine, theme=""), format="json"))
    for response in responses:
        assert SECRET_NOTE not in response.content.decode()
        assert '"love"' not in response.content.decode()
    rows = responses[0].json()["results"]
    assert all(r["theme"] is None and r["note"] == "" and r["flagged"] is False for r in rows)
