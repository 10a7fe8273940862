"""Every create of the annotation app is safe to repeat: a double submit of a form, or an API call retried
with the same ``Idempotency-Key``, gives back what the first request created (core.services.idempotency)."""

import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse

from annotation.models import AnnotationRound, Assignment, Dataset, DatasetVersion, Expression, ImportJob, SuggestionSet
from annotation.services import round_create, round_lock
from annotation.services import rounds as round_services
from tests.concurrency import at_the_same_instant

from .factories import (
    api_client_for,
    client_for,
    make_researcher,
    make_round,
    make_suggestions,
    review_all,
    text_of,
)

KEY = "annotation-key-0001"
SUGGESTIONS = "expression,traits\nĂn cháo đá bát,pragmatic\nTấc đất tấc vàng,3\n"


def rendered_key(client, url: str) -> str:
    """The key a page's form carries, as a browser would send it back."""
    response = client.get(url)
    assert response.status_code == 200
    return re.search(r'name="idempotency_key" value="([^"]+)"', response.content.decode()).group(1)


def round_body(dataset, **extra) -> dict:
    return {"name": "Vòng API", "dataset": dataset.pk, "annotators": ["annotator_a", "annotator_b"], "seed": 3, **extra}


def round_form(dataset, annotators, **extra) -> dict:
    data = {
        "name": "Vòng 1",
        "dataset": dataset.pk,
        "annotators": [a.pk for a in annotators],
        "annotators_per_item": 2,
        "hide_percent": 0,
        "seed": "",
    }
    return {**data, **extra}


def suggestion_upload() -> SimpleUploadedFile:
    return SimpleUploadedFile("goi-y.csv", SUGGESTIONS.encode(), content_type="text/csv")


# --- Rounds ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_creates_one_round_for_a_double_submit_and_sends_the_second_to_it(
    dataset, researcher, annotator_a, annotator_b
):
    client = client_for(researcher)
    url = reverse("annotation:round_new")
    posted = round_form(dataset, [annotator_a, annotator_b], idempotency_key=rendered_key(client, url))

    first = client.post(url, posted)
    second = client.post(url, posted, follow=True)

    round_ = AnnotationRound.objects.get()
    assert first.status_code == 302 and first.url == reverse("annotation:round_detail", args=[round_.pk])
    assert second.redirect_chain == [(first.url, 302)]
    assert "The round “Vòng 1” was already created." in text_of(second)
    assert Assignment.objects.filter(item__round=round_).count() == 12


@pytest.mark.django_db
def test_it_gives_every_rendered_round_form_a_new_key(dataset, researcher, annotator_a, annotator_b):
    client = client_for(researcher)
    url = reverse("annotation:round_new")
    first_key, second_key = rendered_key(client, url), rendered_key(client, url)
    assert first_key != second_key

    client.post(url, round_form(dataset, [annotator_a, annotator_b], name="Một", idempotency_key=first_key))
    client.post(url, round_form(dataset, [annotator_a, annotator_b], name="Hai", idempotency_key=second_key))

    assert sorted(AnnotationRound.objects.values_list("name", flat=True)) == ["Hai", "Một"]


@pytest.mark.django_db
def test_it_answers_a_repeated_round_create_with_the_first_round(api_as, dataset, annotator_a, annotator_b):
    api = api_as("researcher")
    first = api.post(reverse("api:round_list"), round_body(dataset), format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    again = api.post(reverse("api:round_list"), round_body(dataset), format="json", HTTP_IDEMPOTENCY_KEY=KEY)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert AnnotationRound.objects.get().pk == first.json()["id"]


@pytest.mark.django_db
def test_it_keeps_one_researchers_key_apart_from_anothers(dataset, researcher, annotator_a, annotator_b):
    other = make_researcher("researcher_2")
    first = api_client_for(researcher).post(
        reverse("api:round_list"), round_body(dataset, name="Của tôi"), format="json", HTTP_IDEMPOTENCY_KEY=KEY
    )
    second = api_client_for(other).post(
        reverse("api:round_list"), round_body(dataset, name="Của bạn"), format="json", HTTP_IDEMPOTENCY_KEY=KEY
    )

    assert (first.status_code, second.status_code) == (201, 201)
    assert AnnotationRound.objects.count() == 2


@pytest.mark.django_db
def test_it_refuses_a_malformed_idempotency_key_by_name(api_as, dataset, annotator_a, annotator_b):
    response = api_as("researcher").post(
        reverse("api:round_list"), round_body(dataset), format="json", HTTP_IDEMPOTENCY_KEY="no spaces allowed"
    )
    assert response.status_code == 400 and "idempotency_key" in response.json()
    assert not AnnotationRound.objects.exists()


@pytest.mark.django_db
def test_it_frees_the_key_when_the_round_cannot_be_created(api_as, dataset, annotator_a, annotator_b):
    api = api_as("researcher")
    refused = api.post(
        reverse("api:round_list"), round_body(dataset, search="không có"), format="json", HTTP_IDEMPOTENCY_KEY=KEY
    )
    created = api.post(reverse("api:round_list"), round_body(dataset), format="json", HTTP_IDEMPOTENCY_KEY=KEY)

    assert (refused.status_code, created.status_code) == (400, 201)
    assert AnnotationRound.objects.count() == 1


@pytest.mark.services
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_creates_one_round_when_two_requests_with_one_key_arrive_at_the_same_instant(
    dataset, researcher, annotator_a, annotator_b, monkeypatch
):
    if connection.vendor != "postgresql":
        pytest.skip("two connections writing at the same instant need PostgreSQL")
    create = round_services._round_create

    def slow_create(**kwargs):
        # Hold the first claim open long enough that the second request arrives while it runs.
        time.sleep(0.3)
        return create(**kwargs)

    monkeypatch.setattr(round_services, "_round_create", slow_create)

    def request():
        return round_create(
            name="Cùng lúc",
            dataset=dataset,
            annotators=[annotator_a, annotator_b],
            user=researcher,
            seed=1,
            idempotency_key=KEY,
        )

    rounds, errors = at_the_same_instant(request, request)

    assert errors == []
    assert rounds[0].pk == rounds[1].pk
    assert sorted(round_.idempotent_repeat for round_ in rounds) == [False, True]
    assert AnnotationRound.objects.count() == 1
    assert Assignment.objects.count() == 12


# --- Suggestions -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_imports_suggestions_once_for_a_double_submit(dataset, researcher):
    client = client_for(researcher)
    url = reverse("annotation:suggestion_import")
    key = rendered_key(client, url)

    def post():
        data = {"dataset": dataset.pk, "name": "gpt", "model_name": "gpt-4.1", "file": suggestion_upload()}
        return client.post(url, {**data, "idempotency_key": key})

    first, second = post(), post()

    suggestion_set = SuggestionSet.objects.get()
    assert first.status_code == second.status_code == 302
    assert second.url == first.url and f"suggestion_set={suggestion_set.pk}" in first.url
    assert suggestion_set.suggestions.count() == 2


@pytest.mark.django_db
def test_it_answers_a_repeated_suggestion_import_with_the_first_set(api_as, dataset):
    api = api_as("researcher")

    def post():
        data = {"dataset": dataset.pk, "name": "gpt", "model_name": "gpt-4.1", "file": suggestion_upload()}
        return api.post(reverse("api:suggestion_import"), data, format="multipart", HTTP_IDEMPOTENCY_KEY=KEY)

    first, again = post(), post()

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json() and again.json()["n_suggestions"] == 2
    assert SuggestionSet.objects.count() == 1


# --- Corpus: datasets, expressions, import jobs --------------------------------------------------


@pytest.mark.django_db
def test_it_answers_repeated_dataset_and_expression_creates_with_the_first(api_as, dataset):
    api = api_as("researcher")
    created = [
        api.post(reverse("api:dataset-list"), {"name": "Mới"}, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
        for _ in range(2)
    ]
    assert [r.status_code for r in created] == [201, 200] and created[0].json() == created[1].json()
    assert Dataset.objects.filter(name="Mới").count() == 1

    body = {"dataset": dataset.pk, "text": "Uống nước nhớ nguồn", "explanation": "Biết ơn"}
    added = [
        api.post(reverse("api:expression-list"), body, format="json", HTTP_IDEMPOTENCY_KEY=KEY + "-e") for _ in range(2)
    ]
    assert [r.status_code for r in added] == [201, 200] and added[0].json() == added[1].json()
    assert Expression.objects.filter(dataset=dataset, text="Uống nước nhớ nguồn").count() == 1


@pytest.mark.django_db
def test_it_stores_one_import_job_for_a_double_submit_of_the_upload(researcher):
    client = client_for(researcher)
    url = reverse("annotation:import_start")
    key = rendered_key(client, url)

    def post():
        upload = SimpleUploadedFile("tuc-ngu.csv", b"expression,explanation\nNuoc chay da mon,Kien tri\n")
        return client.post(url, {"dataset_name": "Tục ngữ", "file": upload, "idempotency_key": key})

    first, second = post(), post()

    job = ImportJob.objects.get()
    assert first.status_code == second.status_code == 302
    assert first.url == second.url == reverse("annotation:import_detail", args=[job.pk])


# --- Versions ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_answers_a_repeated_freeze_with_the_first_version(api_as, dataset, annotator_a, annotator_b, researcher):
    round_ = make_round(dataset, [annotator_a, annotator_b], suggestion_set=make_suggestions(dataset), user=researcher)
    review_all(round_, annotator_a, annotator_b)
    round_lock(round=round_)
    api = api_as("researcher")
    body = {"round": round_.pk, "name": "v1"}

    first = api.post(reverse("api:version_list"), body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    again = api.post(reverse("api:version_list"), body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json() and first.json()["n_items"] == 6
    assert DatasetVersion.objects.count() == 1
