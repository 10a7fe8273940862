"""Artwork pipeline runs over the API: start, list with progress, detail, cancel, resume, and who may."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from artworks.models import ArtworkPipelineRun
from artworks.services.pipeline import artwork_run_start
from evaluation.models import RunStatus
from tests.artworks.test_pipeline import collection, media  # noqa: F401 - fixtures
from tests.artworks.test_run_pages import model, server  # noqa: F401 - fixtures


def url(name: str, *args) -> str:
    return reverse(f"artworks-api:{name}", args=args)


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def test_it_starts_a_run_that_a_worker_executes_and_reports_its_progress(
    api,
    collection,  # noqa: F811
    model,  # noqa: F811
    eager,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            url("run_list"),
            {"collection": collection.name, "speaker": "fake-vlm", "listener": "fake-vlm", "samples": 2, "limit": 1},
            format="json",
        )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["builder"] == "fake-vlm" and body["samples"] == 2 and body["limit"] == 1
    run = ArtworkPipelineRun.objects.get(pk=body["id"])
    assert run.status == RunStatus.DONE  # the eager "worker" ran it on commit
    detail = api.get(url("run_detail", run.pk)).json()
    assert detail["status"] == "done" and detail["progress"]["percent"] == 100
    assert {step["step"] for step in detail["progress"]["steps"]} >= {"base", "pragmatic", "listener"}
    listed = api.get(url("run_list")).json()
    assert [row["id"] for row in listed["results"]] == [run.pk]
    assert listed["results"][0]["progress"]["n_items"] == detail["progress"]["n_items"]


def test_it_refuses_unknown_models_and_bad_parameters(api, collection, model):  # noqa: F811
    response = api.post(
        url("run_list"),
        {"collection": collection.name, "speaker": "nope", "listener": "fake-vlm", "samples": 0},
        format="json",
    )
    assert response.status_code == 400
    assert set(response.json()) >= {"speaker", "samples"}
    assert not ArtworkPipelineRun.objects.exists()


def test_it_cancels_a_queued_run_and_resumes_it(api, collection, model):  # noqa: F811
    run = artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)
    cancelled = api.post(url("run_cancel", run.pk))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert api.post(url("run_cancel", run.pk)).status_code == 400
    resumed = api.post(url("run_resume", run.pk), {"retry_failed": True}, format="json")
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"


def test_it_cancels_through_the_address_before_artworks_had_its_own_as_a_post(api, collection, model):  # noqa: F811
    run = artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)
    old = f"/api/evaluation/artwork-runs/{run.pk}/cancel/"
    moved = api.post(old)
    assert moved.status_code == 308 and moved["Location"] == url("run_cancel", run.pk)
    cancelled = api.post(old, follow=True)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"


def test_it_answers_only_researchers(collection, model, annotator_client, outsider_client, anonymous_client):  # noqa: F811
    run = artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)
    for client, expected in ((annotator_client, 403), (outsider_client, 403), (anonymous_client, 401)):
        assert client.get(url("run_list")).status_code == expected
        assert client.get(url("run_detail", run.pk)).status_code == expected
        assert client.post(url("run_cancel", run.pk)).status_code == expected
        assert client.post(url("run_resume", run.pk)).status_code == expected
    assert ArtworkPipelineRun.objects.get(pk=run.pk).status == RunStatus.QUEUED


def test_it_answers_404_for_a_missing_run(api):
    assert api.get(url("run_detail", 999)).status_code == 404


def test_it_says_the_run_page_answers_htmx_differently(researcher_client, collection, model):  # noqa: F811
    """A cache in between must not give the poll's fragment to a page load, or the page to a poll."""
    run = artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)
    page = researcher_client.get(reverse("artworks:run_detail", args=[run.pk]))
    poll = researcher_client.get(reverse("artworks:run_detail", args=[run.pk]), HTTP_HX_REQUEST="true")
    assert page.status_code == poll.status_code == 200
    assert page.content != poll.content
    assert "HX-Request" in page["Vary"] and "HX-Request" in poll["Vary"]
