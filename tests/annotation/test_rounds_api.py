"""The API for rounds, suggestions and versions: permissions, blindness, lock/reopen, import, export."""

import io

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import AnnotationRound, Assignment, DatasetVersion, RoundStatus, SuggestionSet

from .factories import make_annotator, make_round, make_suggestions, make_version, submit_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def round_(small_dataset, annotator_a, annotator_b, researcher):
    suggestions = make_suggestions(small_dataset, raw="")
    return make_round(small_dataset, [annotator_a, annotator_b], suggestion_set=suggestions, user=researcher, seed=9)


def frozen(round_, annotator_a, annotator_b, researcher):
    return make_version(round_, annotator_a, annotator_b, user=researcher)


# --- permissions ---------------------------------------------------------------------------------------------------


def endpoints(round_, version_pk):
    return {
        "rounds-list": ("get", reverse("api:round_list"), None),
        "rounds-create": ("post", reverse("api:round_list"), {}),
        "rounds-detail": ("get", reverse("api:round_detail", args=[round_.pk]), None),
        "rounds-lock": ("post", reverse("api:round_lock", args=[round_.pk]), {"action": "lock"}),
        "suggestions": ("post", reverse("api:suggestion_import"), "multipart"),
        "versions-list": ("get", reverse("api:version_list"), None),
        "versions-detail": ("get", reverse("api:version_detail", args=[version_pk]), None),
        "versions-export": ("get", reverse("api:version_export", args=[version_pk]) + "?format=csv", None),
    }


RESEARCHER_ONLY = {"rounds-create", "rounds-lock", "suggestions"}


@pytest.mark.parametrize("persona", ["anonymous", "outsider", "annotator", "adjudicator", "researcher"])
def test_it_answers_401_403_or_200_by_role_on_every_endpoint(
    api_as, round_, annotator_a, annotator_b, researcher, persona
):
    version = frozen(round_, annotator_a, annotator_b, researcher)
    AnnotationRound.objects.filter(pk=round_.pk).update(status=RoundStatus.OPEN)
    for name, (method, url, body) in endpoints(round_, version.pk).items():
        if body == "multipart":
            response = api_as(persona).post(url, {"name": "x"}, format="multipart")
        else:
            response = getattr(api_as(persona), method)(url, body, format="json" if body is not None else None)
        if persona == "anonymous":
            assert response.status_code == 401, name
        elif persona == "outsider" or (name in RESEARCHER_ONLY and persona != "researcher"):
            assert response.status_code == 403, name
        else:
            assert response.status_code in (200, 201, 400), (name, response.status_code)
    if persona != "researcher":
        assert AnnotationRound.objects.get(pk=round_.pk).status == RoundStatus.OPEN


def test_it_hides_other_rounds_and_other_annotators_from_an_annotator(
    api_as, round_, small_dataset, annotator_a, annotator_b
):
    carol, dave = make_annotator("carol"), make_annotator("dave")
    other = make_round(small_dataset, [carol, dave], name="Not mine")
    submit_all(round_, annotator_b)
    client = api_as("annotator")
    assert [r["name"] for r in client.get(reverse("api:round_list")).json()] == ["R1"]
    assert client.get(reverse("api:round_detail", args=[other.pk])).status_code == 404
    data = client.get(reverse("api:round_detail", args=[round_.pk])).json()
    assert data["funnel"] is None and data["annotators"] == ["annotator_a"]
    mine = Assignment.objects.filter(item__round=round_, annotator=annotator_a).count()
    assert data["progress"] == [{"annotator": "annotator_a", "total": mine, "done": 0, "skipped": 0, "percent": 0}]
    assert "annotator_b" not in str(data)


def test_it_gives_researchers_the_funnel_and_everyones_progress(api_as, round_, annotator_b):
    submit_all(round_, annotator_b)
    data = api_as("adjudicator").get(reverse("api:round_detail", args=[round_.pk])).json()
    assert data["annotators"] == ["annotator_a", "annotator_b"] and data["seed"] == 9 and data["n_items"] == 4
    assert (
        data["funnel"]["imported"] == 4 and data["funnel"]["in_round"] == 4 and data["funnel"]["reviewed_by_all"] == 0
    )
    progress = {p["annotator"]: p for p in data["progress"]}
    assert progress["annotator_b"]["done"] == progress["annotator_b"]["total"] > 0
    assert progress["annotator_a"]["done"] == 0


def test_it_locks_and_reopens_through_the_api(api_as, round_):
    client = api_as("researcher")
    url = reverse("api:round_lock", args=[round_.pk])
    response = client.post(url, {"action": "lock"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "locked"
    response = client.post(url, {"action": "lock"}, format="json")
    assert response.status_code == 400 and "not open" in str(response.json())
    assert client.post(url, {"action": "reopen"}, format="json").json()["status"] == "open"
    assert client.post(url, {"action": "freeze"}, format="json").status_code == 400
    assert client.post(reverse("api:round_lock", args=[999]), {"action": "lock"}, format="json").status_code == 404


def test_it_creates_a_round_through_the_api_with_a_filter(api_as, small_dataset, annotator_a, annotator_b, researcher):
    body = {
        "name": "API",
        "dataset": small_dataset.pk,
        "annotators": ["annotator_a", "annotator_b"],
        "theme": "criticism",
        "seed": 4,
    }
    response = api_as("researcher").post(reverse("api:round_list"), body, format="json")
    assert response.status_code == 201
    data = response.json()
    assert data["n_items"] == 2 and data["item_filter"] == {"theme": "criticism"} and data["seed"] == 4
    assert AnnotationRound.objects.get(name="API").created_by == researcher
    response = api_as("researcher").post(
        reverse("api:round_list"), {**body, "annotators": ["annotator_a"]}, format="json"
    )
    assert response.status_code == 400 and "annotators" in response.json()
    response = api_as("researcher").post(
        reverse("api:round_list"), {**body, "annotators": ["adjudicator"]}, format="json"
    )
    assert response.status_code == 400


def test_it_imports_suggestions_through_the_api(api_as, small_dataset, researcher):
    upload = SimpleUploadedFile("s.csv", "expression,traits\nĂn cháo đá bát,pragmatic\nTấc đất tấc vàng,\n".encode())
    response = api_as("researcher").post(
        reverse("api:suggestion_import"),
        {"dataset": small_dataset.pk, "name": "run", "model_name": "m", "file": upload},
        format="multipart",
    )
    assert response.status_code == 201
    assert response.json()["n_suggestions"] == 2 and response.json()["model_name"] == "m"
    bad = SimpleUploadedFile("s.csv", "expression,traits\nKhông có,pragmatic\n".encode())
    response = api_as("researcher").post(
        reverse("api:suggestion_import"),
        {"dataset": small_dataset.pk, "name": "bad", "model_name": "m", "file": bad},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["row"] == 2 and response.json()["errors"][0]["column"] == "expression"
    assert SuggestionSet.objects.count() == 1
    again = SimpleUploadedFile("s.csv", "expression,traits\nĂn cháo đá bát,pragmatic\n".encode())
    response = api_as("researcher").post(
        reverse("api:suggestion_import"),
        {"dataset": small_dataset.pk, "name": "run", "model_name": "m", "file": again},
        format="multipart",
    )
    assert response.status_code == 400 and "name" in response.json()


def test_it_lists_details_and_exports_versions(api_as, round_, annotator_a, annotator_b, researcher):
    version = frozen(round_, annotator_a, annotator_b, researcher)
    # An adjudicator: annotators get the export without the labels (tests/annotation/test_blindness.py).
    client = api_as("adjudicator")
    assert [v["name"] for v in client.get(reverse("api:version_list")).json()] == ["v1"]
    data = client.get(reverse("api:version_detail", args=[version.pk])).json()
    assert data["n_items"] == 4 and data["provenance"] == {"unanimous": 4, "adjudicated": 0}
    assert data["funnel"]["final"] == 4
    response = client.get(reverse("api:version_export", args=[version.pk]) + "?format=csv")
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    frame = pd.read_csv(io.BytesIO(response.content))
    assert list(frame.columns)[:8] == [
        "id",
        "expression",
        "explanation",
        "kind",
        "source",
        "traits",
        "theme",
        "provenance",
    ]
    assert set(frame["provenance"]) == {"unanimous"}
    jsonl = client.get(reverse("api:version_export", args=[version.pk]) + "?format=jsonl")
    assert len(pd.read_json(io.BytesIO(jsonl.content), lines=True)) == 4
    assert client.get(reverse("api:version_export", args=[version.pk]) + "?format=xls").status_code == 400
    assert client.get(reverse("api:version_detail", args=[999])).status_code == 404


def test_it_offers_no_update_or_delete_of_versions(api_as, round_, annotator_a, annotator_b, researcher):
    version = frozen(round_, annotator_a, annotator_b, researcher)
    client = api_as("researcher")
    for url in (reverse("api:version_detail", args=[version.pk]), reverse("api:version_list")):
        for method in ("put", "patch", "delete"):
            assert getattr(client, method)(url, {}, format="json").status_code == 405, (url, method)
    # POST freezes a new version (tests/annotation/test_freeze_guard.py); it never touches an existing one.
    assert client.post(reverse("api:version_list"), {}, format="json").status_code == 400
    assert DatasetVersion.objects.get().name == "v1"
