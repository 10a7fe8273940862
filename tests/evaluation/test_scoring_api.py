"""The human scoring API: researchers' tasks, a rater's own ratings and submits, conflicts and blindness."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from evaluation.models import HumanRating, RatingStatus, ScoringTask
from evaluation.services.scoring import rating_submit

from .factories import (
    GENERATION_MODEL,
    JUDGE_REPLY,
    make_generation_run,
    make_judge_run,
    make_scoring_task,
    numbered_dataset,
)

pytestmark = pytest.mark.django_db


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture
def run(db):
    return make_generation_run(numbered_dataset(220))


@pytest.fixture
def task(run, annotator_a, annotator_b, researcher):
    return make_scoring_task(run, [annotator_a, annotator_b], name="API task", seed=3, user=researcher)


def tasks_url():
    return reverse("evaluation-api:scoring_task_list")


def my_ratings_url(task):
    return reverse("evaluation-api:scoring_my_ratings", args=[task.pk])


def rating_url(rating):
    return reverse("evaluation-api:scoring_rating", args=[rating.pk])


def first_rating(task, user):
    return HumanRating.objects.filter(task=task, rater=user).order_by("position").first()


# --- Permissions ------------------------------------------------------------------------------


def test_it_keeps_the_task_endpoints_from_non_researchers(task, annotator_a, adjudicator, outsider):
    for user in (annotator_a, adjudicator, outsider):
        assert api(user).get(tasks_url()).status_code == 403
        assert api(user).post(tasks_url(), {}, format="json").status_code == 403
        assert api(user).get(reverse("evaluation-api:scoring_task_detail", args=[task.pk])).status_code == 403
    assert api().get(tasks_url()).status_code == 401
    assert api().get(reverse("evaluation-api:scoring_task_detail", args=[task.pk])).status_code == 401


def test_it_keeps_the_rater_endpoints_from_other_roles(task, annotator_a, adjudicator, outsider, researcher):
    rating = first_rating(task, annotator_a)
    for user in (adjudicator, outsider, researcher):
        assert api(user).get(my_ratings_url(task)).status_code == 403
        assert api(user).get(rating_url(rating)).status_code == 403
        assert api(user).post(rating_url(rating), {"score": 1, "revision": 0}, format="json").status_code == 403
    assert api().get(my_ratings_url(task)).status_code == 401
    assert api().post(rating_url(rating), {"score": 1, "revision": 0}, format="json").status_code == 401


def test_it_hides_another_raters_rating(task, annotator_a, annotator_b):
    rating = first_rating(task, annotator_a)
    assert api(annotator_b).get(rating_url(rating)).status_code == 404
    assert api(annotator_b).post(rating_url(rating), {"score": 1, "revision": 0}, format="json").status_code == 404
    rating.refresh_from_db()
    assert rating.status == RatingStatus.PENDING


def test_it_hides_a_task_from_an_annotator_who_does_not_rate_it(task):
    from tests.conftest import make_user

    assert api(make_user("annotator_c", "Annotator")).get(my_ratings_url(task)).status_code == 404


# --- Researchers ------------------------------------------------------------------------------


def test_it_creates_and_lists_tasks(researcher, annotator_a, annotator_b):
    run = make_generation_run(numbered_dataset(230))
    response = api(researcher).post(
        tasks_url(),
        {"name": "Table 1", "run": run.pk, "raters": ["annotator_a", "annotator_b"], "seed": 9},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["n_items"], body["n_shared"], body["seed"], body["raters"]) == (
        200,
        50,
        9,
        ["annotator_a", "annotator_b"],
    )
    assert len(body["sample"]) == 200
    assert body["progress"] == [
        {"rater": "annotator_a", "submitted": 0, "total": 125},
        {"rater": "annotator_b", "submitted": 0, "total": 125},
    ]
    listed = api(researcher).get(tasks_url()).json()
    assert [t["name"] for t in listed] == ["Table 1"]


def test_it_refuses_a_bad_task(researcher, annotator_a, adjudicator, run):
    judge = make_judge_run(run, 3, reply=JUDGE_REPLY)
    response = api(researcher).post(
        tasks_url(),
        {"name": "x", "run": judge.pk, "raters": ["adjudicator"], "n_items": 5, "n_shared": 9},
        format="json",
    )
    assert response.status_code == 400
    assert {"run", "raters"} <= set(response.json())
    response = api(researcher).post(
        tasks_url(), {"name": "x", "run": run.pk, "raters": ["annotator_a"], "n_items": 5, "n_shared": 9}, format="json"
    )
    assert response.status_code == 400 and "n_shared" in response.json()
    assert not ScoringTask.objects.exists()


# --- Raters -----------------------------------------------------------------------------------


def test_it_lists_only_the_raters_own_ratings_in_queue_order(task, annotator_a):
    body = api(annotator_a).get(my_ratings_url(task)).json()
    assert [r["position"] for r in body] == list(range(1, 14))
    mine = set(HumanRating.objects.filter(task=task, rater=annotator_a).values_list("pk", flat=True))
    assert {r["id"] for r in body} == mine
    first = body[0]
    rating = HumanRating.objects.get(pk=first["id"])
    assert first["expression"] == rating.item.expression.text
    assert first["reference_explanation"] == rating.item.expression.explanation
    assert first["explanation"] == rating.item.response


def test_it_submits_scores_and_refuses_a_stale_revision(task, annotator_a):
    rating = first_rating(task, annotator_a)
    client = api(annotator_a)
    response = client.post(rating_url(rating), {"score": 4, "accuracy": 5, "note": "ổn", "revision": 0}, format="json")
    assert response.status_code == 200
    assert (response.json()["score"], response.json()["accuracy"], response.json()["revision"]) == (4, 5, 1)
    # The same scores again (a retried request) are already saved: no new revision.
    again = client.post(rating_url(rating), {"score": 4, "accuracy": 5, "note": "ổn", "revision": 0}, format="json")
    assert again.status_code == 200 and again.json()["revision"] == 1
    # Different scores from the old revision: 409 with the saved ones, nothing changed.
    stale = client.post(rating_url(rating), {"score": 1, "revision": 0}, format="json")
    assert stale.status_code == 409
    assert stale.json()["current"]["score"] == 4
    rating.refresh_from_db()
    assert (rating.score, rating.revision, rating.status) == (4, 1, RatingStatus.SUBMITTED)
    assert client.post(rating_url(rating), {"score": 1, "revision": 1}, format="json").json()["revision"] == 2


def test_it_validates_scores(task, annotator_a):
    rating = first_rating(task, annotator_a)
    client = api(annotator_a)
    assert client.post(rating_url(rating), {"score": 6, "revision": 0}, format="json").status_code == 400
    assert client.post(rating_url(rating), {"accuracy": 3, "revision": 0}, format="json").status_code == 400
    assert (
        client.post(rating_url(rating), {"score": 3, "completeness": -1, "revision": 0}, format="json").status_code
        == 400
    )
    assert client.post(rating_url(rating), {"score": 3}, format="json").status_code == 400
    rating.refresh_from_db()
    assert rating.status == RatingStatus.PENDING


def test_it_never_gives_rater_b_another_raters_score_the_model_or_a_judge_score(task, annotator_a, annotator_b):
    make_judge_run(task.run, 3, reply=JUDGE_REPLY)
    for rating in HumanRating.objects.filter(task=task, rater=annotator_a):
        rating_submit(rating=rating, user=annotator_a, values={"score": 5}, note="GHI-CHU-CUA-A", revision=0)
    client = api(annotator_b)
    b_shared = HumanRating.objects.get(task=task, rater=annotator_b, item_id=task.sample[0])
    responses = [
        client.get(my_ratings_url(task)),
        client.get(rating_url(b_shared)),
        client.post(rating_url(b_shared), {"score": 2, "revision": 0}, format="json"),
        client.post(
            rating_url(b_shared), {"score": 3, "revision": 0}, format="json"
        ),  # a 409 shows B's own scores only
    ]
    assert [r.status_code for r in responses] == [200, 200, 200, 409]
    for response in responses:
        text = json.dumps(response.json(), ensure_ascii=False)
        assert "GHI-CHU-CUA-A" not in text and GENERATION_MODEL not in text and JUDGE_REPLY not in text
        assert "annotator_a" not in text
    scores = {r["score"] for r in responses[0].json()}
    assert 5 not in scores


def test_it_keeps_the_schema_free_of_warnings(tmp_path):
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    assert "/api/evaluation/scoring/ratings/{id}/" in text and "/api/evaluation/scoring/tasks/" in text
