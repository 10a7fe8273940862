"""The REST API under /api/ as every persona: who may read and write, CSRF for sessions, tokens for scripts."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Dataset
from core.permissions import HasAnyRole, ReadAnyRoleWriteResearcher
from tests.conftest import PASSWORD

from .api_helpers import PERSONAS, csv_upload, detail, expression_of, snapshot

pytestmark = pytest.mark.django_db


# --- Every endpoint as every persona ---------------------------------------

READS = {
    "datasets-list": lambda c: reverse("api:dataset-list"),
    "datasets-detail": lambda c: reverse("api:dataset-detail", args=[c.pk]),
    "datasets-export": lambda c: reverse("api:dataset-export", args=[c.pk]) + "?format=jsonl",
    "expressions-list": lambda c: reverse("api:expression-list") + f"?dataset={c.pk}",
    "expressions-detail": lambda c: reverse("api:expression-detail", args=[expression_of(c, "v1").pk]),
    "traits-list": lambda c: reverse("api:trait-list"),
    "traits-detail": lambda c: reverse("api:trait-detail", args=["literal"]),
    "themes-list": lambda c: reverse("api:theme-list"),
    "themes-detail": lambda c: reverse("api:theme-detail", args=["love"]),
    "schema": lambda c: reverse("api-schema"),
    "docs": lambda c: reverse("api-docs"),
}


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("endpoint", READS)
def test_it_lets_every_role_read_and_answers_401_or_403_to_others(api_as, corpus, endpoint, persona):
    response = api_as(persona).get(READS[endpoint](corpus))
    expected = {"anonymous": 401, "outsider": 403}.get(persona, 200)
    if endpoint == "docs" and persona == "anonymous":
        # A page for people: the sign-in page, then back to the docs.
        assert response.status_code == 302
        assert response["Location"] == f"{reverse('login')}?next=/api/docs/"
        return
    assert response.status_code == expected, response.content[:300]
    if persona == "anonymous":
        assert response["WWW-Authenticate"] == "Token"
        if endpoint != "docs":
            assert "Authentication credentials were not provided." in detail(response)
    elif persona == "outsider" and endpoint != "docs":
        assert HasAnyRole.message in detail(response)


def test_it_answers_401_to_anonymous_at_the_api_root(api_as):
    assert api_as("anonymous").get("/api/").status_code == 401
    assert api_as("annotator").get("/api/").json()["datasets"].endswith("/api/datasets/")


def _dataset_url(c, e):
    return reverse("api:dataset-detail", args=[c.pk])


def _expression_url(c, e):
    return reverse("api:expression-detail", args=[e.pk])


WRITES = {
    "datasets-create": ("post", lambda c, e: reverse("api:dataset-list"), lambda c, e: {"name": "Mới"}, 201),
    "datasets-update": ("patch", _dataset_url, lambda c, e: {"description": "Đã sửa"}, 200),
    "datasets-delete": ("delete", _dataset_url, lambda c, e: None, 204),
    "expressions-create": (
        "post",
        lambda c, e: reverse("api:expression-list"),
        lambda c, e: {"dataset": c.pk, "text": "Có công mài sắt có ngày nên kim", "explanation": "Kiên trì"},
        201,
    ),
    "expressions-update": ("patch", _expression_url, lambda c, e: {"explanation": "Đã sửa"}, 200),
    "expressions-delete": ("delete", _expression_url, lambda c, e: None, 204),
    "imports": (
        "post",
        lambda c, e: reverse("api:import"),
        lambda c, e: {"dataset": "Nhập", "file": csv_upload("expression,explanation\nĂn ốc nói mò,Nói không căn cứ\n")},
        201,
    ),
}


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("endpoint", WRITES)
def test_it_lets_only_researchers_write(api_as, corpus, endpoint, persona):
    method, url, payload, researcher_status = WRITES[endpoint]
    expression = expression_of(corpus, "v2")
    data = payload(corpus, expression)
    fmt = "multipart" if endpoint == "imports" else "json"
    before = snapshot()
    response = getattr(api_as(persona), method)(url(corpus, expression), data, format=fmt)
    expected = {"anonymous": 401, "outsider": 403, "researcher": researcher_status}.get(persona, 403)
    assert response.status_code == expected, response.content[:300]
    if persona == "researcher":
        assert snapshot() != before
        return
    assert snapshot() == before
    if persona == "anonymous":
        assert response["WWW-Authenticate"] == "Token"
    elif persona == "outsider":
        assert response.json()["detail"] == HasAnyRole.message
    elif endpoint == "imports":
        assert response.json()["detail"] == "Only researchers can do this."
    else:
        assert response.json()["detail"] == ReadAnyRoleWriteResearcher.message


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("post", lambda c: reverse("api:trait-list")),
        ("patch", lambda c: reverse("api:theme-detail", args=["love"])),
        ("delete", lambda c: reverse("api:trait-detail", args=["literal"])),
        ("put", lambda c: reverse("api:dataset-detail", args=[c.pk])),
        ("put", lambda c: reverse("api:expression-detail", args=[expression_of(c, "v1").pk])),
        ("get", lambda c: reverse("api:import")),
    ],
)
def test_it_refuses_methods_an_endpoint_does_not_offer_even_to_researchers(api, corpus, method, url):
    before = snapshot()
    response = getattr(api, method)(url(corpus), {"name": "x", "text": "x", "explanation": "x"}, format="json")
    assert response.status_code == 405
    assert snapshot() == before


def test_it_requires_a_csrf_token_for_session_writes_but_not_for_token_writes(researcher):
    session = APIClient(enforce_csrf_checks=True)
    session.force_login(researcher)
    refused = session.post(reverse("api:dataset-list"), {"name": "Không CSRF"}, format="json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert not Dataset.objects.exists()

    scripted = APIClient(enforce_csrf_checks=True)
    scripted.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    assert scripted.post(reverse("api:dataset-list"), {"name": "Có token"}, format="json").status_code == 201
    assert list(Dataset.objects.values_list("name", flat=True)) == ["Có token"]


# --- Token authentication -----------------------------------------------------


def test_it_issues_a_token_for_username_and_password_that_scripts_can_use(researcher, corpus):
    response = APIClient().post(reverse("api:token"), {"username": "researcher", "password": PASSWORD}, format="json")
    assert response.status_code == 200
    key = response.json()["token"]
    assert key == Token.objects.get(user=researcher).key and len(key) == 40
    again = APIClient().post(reverse("api:token"), {"username": "researcher", "password": PASSWORD})
    # Form-encoded works too, and the token is stable until it expires.
    assert again.json() == {"token": key, "expires": response.json()["expires"]}

    script = APIClient()
    script.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    listed = script.get(reverse("api:dataset-list"))
    assert listed.status_code == 200 and [d["name"] for d in listed.json()["results"]] == ["Ca dao"]
    created = script.post(reverse("api:dataset-list"), {"name": "Từ script"}, format="json")
    assert created.status_code == 201 and created.json()["created_by"] == "researcher"


def test_it_refuses_a_token_for_a_wrong_password_and_answers_401_to_a_bad_token(researcher):
    response = APIClient().post(reverse("api:token"), {"username": "researcher", "password": "nope"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"non_field_errors": ["Unable to log in with provided credentials."]}
    assert not Token.objects.exists()

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    bad = client.get(reverse("api:dataset-list"))
    assert bad.status_code == 401 and bad.json() == {"detail": "Invalid token."}
    assert bad["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize(("persona", "read", "write"), [("outsider", 403, 403), ("annotator", 200, 403)])
def test_it_applies_roles_to_token_users(annotator_a, outsider, persona, read, write):
    user = {"outsider": outsider, "annotator": annotator_a}[persona]
    key = APIClient().post(reverse("api:token"), {"username": user.username, "password": PASSWORD}).json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(reverse("api:expression-list")).status_code == read
    assert client.post(reverse("api:dataset-list"), {"name": "X"}, format="json").status_code == write
    assert not Dataset.objects.exists()
