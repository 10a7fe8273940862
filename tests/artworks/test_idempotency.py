"""Double submits of the artwork create forms and repeated API calls make one run or one collection."""

import io
import re
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from artworks.models import ArtworkCollection, ArtworkPipelineRun
from artworks.services import imports as import_services
from artworks.services.pipeline import artwork_run_start
from artworks.services.pipeline import lifecycle as pipeline_lifecycle
from tests.artworks.test_pages import png
from tests.artworks.test_pipeline import collection, media  # noqa: F401 - fixtures
from tests.artworks.test_run_pages import model, server  # noqa: F401 - fixtures
from tests.concurrency import at_the_same_instant

KEY = "artwork-key-0123456789"


def _form_key(html: str) -> str:
    return re.search(r'name="idempotency_key" value="([^"]+)"', html).group(1)


def _run_post(collection, model, key):  # noqa: F811
    return {
        "idempotency_key": key,
        "collection": collection.pk,
        "speaker": model.pk,
        "listener": model.pk,
        "samples": 2,
        "lam": 0,
        "limit": 1,
    }


def _collection_zip(*, broken: bool = False) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        title = "" if broken else "Eagle"
        archive.writestr("artworks.csv", f"id,title,culture,image\nam-1,{title},american,img/e.png\n")
        archive.writestr("img/e.png", png())
    return SimpleUploadedFile("c.zip", buffer.getvalue(), content_type="application/zip")


@pytest.fixture
def queued(monkeypatch):
    """Runs stay queued: what matters here is how many were created, not their execution."""
    monkeypatch.setattr(pipeline_lifecycle, "artwork_run_enqueue", lambda run_id: None)


def test_it_starts_one_run_when_the_run_form_is_submitted_twice(researcher_client, collection, model, queued):  # noqa: F811
    key = _form_key(researcher_client.get(reverse("artworks:run_list")).content.decode())

    first = researcher_client.post(reverse("artworks:run_list"), _run_post(collection, model, key))
    second = researcher_client.post(reverse("artworks:run_list"), _run_post(collection, model, key), follow=True)

    run = ArtworkPipelineRun.objects.get()
    assert first.status_code == 302 and first["Location"] == reverse("artworks:run_detail", args=[run.pk])
    assert second.redirect_chain[-1][0] == reverse("artworks:run_detail", args=[run.pk])
    assert "This form was already submitted: here is the run it started." in second.content.decode()


def test_it_starts_a_new_run_for_a_newly_rendered_run_form(researcher_client, collection, model, queued):  # noqa: F811
    for _ in range(2):
        key = _form_key(researcher_client.get(reverse("artworks:run_list")).content.decode())
        researcher_client.post(reverse("artworks:run_list"), _run_post(collection, model, key))

    assert ArtworkPipelineRun.objects.count() == 2


def test_it_answers_an_api_repeat_with_the_run_the_first_request_started(researcher, collection, model, queued):  # noqa: F811
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    body = {"collection": collection.name, "speaker": model.name, "listener": model.name, "samples": 2}

    first = api.post(reverse("artworks-api:run_list"), body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    again = api.post(reverse("artworks-api:run_list"), body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    other = api.post(reverse("artworks-api:run_list"), body, format="json")

    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert again.json()["id"] == first.json()["id"] != other.json()["id"]
    assert ArtworkPipelineRun.objects.count() == 2


def test_it_refuses_a_malformed_api_key_by_name(researcher, collection, model, queued):  # noqa: F811
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    body = {"collection": collection.name, "speaker": model.name, "listener": model.name}

    response = api.post(reverse("artworks-api:run_list"), body, format="json", HTTP_IDEMPOTENCY_KEY="no")

    assert response.status_code == 400 and "idempotency_key" in response.json()
    assert not ArtworkPipelineRun.objects.exists()


def test_it_imports_one_collection_when_the_import_form_is_submitted_twice(researcher_client, media):  # noqa: F811
    url = reverse("artworks:collection_import")
    key = _form_key(researcher_client.get(url).content.decode())

    first = researcher_client.post(url, {"idempotency_key": key, "name": "Twice", "file": _collection_zip()})
    second = researcher_client.post(url, {"idempotency_key": key, "name": "Twice", "file": _collection_zip()})

    imported = ArtworkCollection.objects.get()
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] == reverse("artworks:collection_detail", args=[imported.pk])


def test_it_leaves_the_key_free_when_the_import_fails(researcher_client, media):  # noqa: F811
    url = reverse("artworks:collection_import")

    refused = researcher_client.post(
        url, {"idempotency_key": KEY, "name": "Fixed", "file": _collection_zip(broken=True)}
    )
    fixed = researcher_client.post(url, {"idempotency_key": KEY, "name": "Fixed", "file": _collection_zip()})

    assert refused.status_code == 400
    assert fixed.status_code == 302 and ArtworkCollection.objects.get().name == "Fixed"


def test_the_import_service_returns_the_first_collection_for_a_repeated_key(researcher, media):  # noqa: F811
    first = import_services.artworks_import(
        name="Once", source=_collection_zip().read(), user=researcher, idempotency_key=KEY
    )
    again = import_services.artworks_import(
        name="Once", source=_collection_zip().read(), user=researcher, idempotency_key=KEY
    )

    assert again.pk == first.pk and again.idempotent_repeat and not first.idempotent_repeat


@pytest.mark.services
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_starts_one_run_when_two_requests_with_one_key_arrive_at_the_same_instant(
    researcher,
    collection,  # noqa: F811
    model,  # noqa: F811
    queued,
    monkeypatch,
):
    if connection.vendor != "postgresql":
        pytest.skip("two connections writing at the same instant need PostgreSQL")
    create = pipeline_lifecycle._artwork_run_create

    def slow_create(**kwargs):
        # Hold the first claim open long enough that the second request arrives while it runs.
        time.sleep(0.3)
        return create(**kwargs)

    monkeypatch.setattr(pipeline_lifecycle, "_artwork_run_create", slow_create)

    def request():
        return artwork_run_start(
            collection=collection, speaker=model, listener=model, user=researcher, idempotency_key=KEY
        )

    results, errors = at_the_same_instant(request, request)

    assert errors == []
    assert sorted(run.idempotent_repeat for run in results) == [False, True]
    assert results[0].pk == results[1].pk
    assert ArtworkPipelineRun.objects.count() == 1
