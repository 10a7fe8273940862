"""The artwork pipeline pages: the list and new-run form, progress, one artwork's candidates, and 403s."""

import pytest
from django.urls import reverse

from artworks.models import ArtworkPipelineRun
from artworks.services.pipeline import artwork_run_execute, artwork_run_start
from evaluation.models import ItemStatus, RunStatus
from tests.artworks.test_pipeline import collection, media  # noqa: F401 - fixtures
from tests.evaluation.factories import stored_model
from tests.evaluation.fake_openai import FakeOpenAI, pipeline_reply, pipeline_top_tokens


@pytest.fixture
def server():
    with FakeOpenAI(reply=pipeline_reply) as fake:
        fake.top_tokens = pipeline_top_tokens
        yield fake


@pytest.fixture
def model(db, server):
    return stored_model(server, name="fake-vlm", model_id="fake-vlm", max_concurrency=2)


@pytest.fixture
def finished(collection, model):  # noqa: F811
    run = artwork_run_start(collection=collection, speaker=model, listener=model, samples=2, enqueue=False)
    return artwork_run_execute(run_id=run.pk)


def test_it_starts_a_run_from_the_list_page(
    researcher_client,
    collection,  # noqa: F811
    model,
    eager,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    page = researcher_client.get(reverse("artworks:run_list"))
    assert page.status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            reverse("artworks:run_list"),
            {
                "collection": collection.pk,
                "speaker": model.pk,
                "listener": model.pk,
                "samples": 2,
                "lam": 0,
                "limit": 1,
            },
        )
    run = ArtworkPipelineRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("artworks:run_detail", args=[run.pk])
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.samples == 2 and run.limit == 1
    listing = researcher_client.get(reverse("artworks:run_list"))
    assert f'data-run="{run.pk}"' in listing.content.decode()


def test_it_shows_form_errors(researcher_client, collection, model):  # noqa: F811
    response = researcher_client.post(
        reverse("artworks:run_list"),
        {"collection": collection.pk, "speaker": model.pk, "listener": model.pk, "samples": 0, "lam": 2},
    )
    assert response.status_code == 400
    assert not ArtworkPipelineRun.objects.exists()


def test_it_shows_progress_per_step_and_polls_while_active(researcher_client, collection, model):  # noqa: F811
    run = artwork_run_start(collection=collection, speaker=model, listener=model, samples=2, enqueue=False)
    page = researcher_client.get(reverse("artworks:run_detail", args=[run.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in page and 'data-step="symbols"' in page and 'data-step="listener"' in page
    partial = researcher_client.get(reverse("artworks:run_detail", args=[run.pk]), HTTP_HX_REQUEST="true")
    assert partial.status_code == 200 and "<html" not in partial.content.decode()

    researcher_client.post(reverse("artworks:run_detail", args=[run.pk]), {"action": "cancel"})
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert "Resume" in researcher_client.get(reverse("artworks:run_detail", args=[run.pk])).content.decode()


def test_it_lists_failed_items_with_their_kept_reply(researcher_client, collection, model, server):  # noqa: F811
    server.reply = lambda body: "not json at all" if "classify them" in str(body) else pipeline_reply(body)
    run = artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)
    run = artwork_run_execute(run_id=run.pk)
    assert run.items.filter(status=ItemStatus.FAILED).exists()
    page = researcher_client.get(reverse("artworks:run_detail", args=[run.pk])).content.decode()
    assert "not json at all" in page and "no valid JSON" in page


def test_it_offers_to_retry_failed_items_only_when_some_failed(researcher_client, finished):
    assert finished.status == RunStatus.DONE and not finished.items.filter(status=ItemStatus.FAILED).exists()
    url = reverse("artworks:run_detail", args=[finished.pk])
    assert "Retry the failed items" not in researcher_client.get(url).content.decode()
    finished.items.filter(pk=finished.items.order_by("id").first().pk).update(status=ItemStatus.FAILED, error="x")
    assert "Retry the failed items" in researcher_client.get(url).content.decode()


def test_it_shows_candidates_and_scores_for_one_artwork(researcher_client, finished):
    artwork = finished.collection.artworks.get()
    page = researcher_client.get(reverse("artworks:run_artwork", args=[finished.pk, artwork.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count('data-candidate="') == 4  # two samples for each of two groups
    assert html.count('data-chosen="true"') == 2
    assert 'data-testid="base"' in html
    assert 'data-condition="no_description"' in html and 'data-condition="pragmatic"' in html
    assert "P(Correct)" in html


@pytest.mark.parametrize("name", ["run_list", "run_detail", "run_artwork"])
def test_it_forbids_non_researchers(outsider_client, annotator_client, finished, name):
    args = {
        "run_list": [],
        "run_detail": [finished.pk],
        "run_artwork": [finished.pk, finished.collection.artworks.get().pk],
    }[name]
    url = reverse(f"artworks:{name}", args=args)
    assert outsider_client.get(url).status_code == 403
    assert annotator_client.get(url).status_code == 403
    assert outsider_client.post(url, {"action": "cancel"}).status_code in (403, 405)


def test_it_lists_runs_with_their_progress_in_a_fixed_number_of_queries(researcher_client, collection, model):  # noqa: F811
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert researcher_client.get(reverse("artworks:run_list")).status_code == 200
        return len(captured.captured_queries)

    artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)
    one = queries()
    for _ in range(4):
        artwork_run_start(collection=collection, speaker=model, listener=model, samples=1, enqueue=False)
    assert queries() == one
