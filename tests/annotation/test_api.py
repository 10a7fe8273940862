"""The REST API under /api/: every endpoint as every persona, token auth, filters, imports, exports, schema."""

import io
import json
import re
import unicodedata

import pandas as pd
import pytest
from django.contrib.staticfiles import finders
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.settings import api_settings
from rest_framework.test import APIClient

from annotation.models import Dataset, Expression, ExpressionKind, normalize_key
from annotation.services import corpus as services_corpus
from annotation.services import expression_import
from core.permissions import HasAnyRole, ReadAnyRoleWriteResearcher
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

NFC = unicodedata.normalize("NFC", "Chưa đủ lông đủ cánh")
NFD = unicodedata.normalize("NFD", NFC)
SOURCE = (
    "id,expression,explanation,kind,traits,theme,note\n"
    f'v1,{NFC},"Còn non nớt, chưa tự lập",idiom,"pragmatic,literal",criticism,chim non\n'
    "v2,Nước chảy đá mòn,Kiên trì thì việc khó cũng xong,proverb,,life_lessons,\n"
    "v3,Ăn quả nhớ kẻ trồng cây,Biết ơn người đi trước,proverb,folk_knowledge,virtues,\n"
)
OTHER = "expression,explanation,kind,traits,theme\nĂn cháo đá bát,Vô ơn bạc nghĩa,idiom,pragmatic,criticism\n"
PERSONAS = ("anonymous", "outsider", "annotator", "adjudicator", "researcher")
BOM = b"\xef\xbb\xbf"


@pytest.fixture
def corpus(db):
    expression_import(dataset_name="Ca dao", filename="seed.csv", content=SOURCE.encode())
    return Dataset.objects.get(name="Ca dao")


@pytest.fixture
def other(db):
    expression_import(dataset_name="Khác", filename="other.csv", content=OTHER.encode())
    return Dataset.objects.get(name="Khác")


@pytest.fixture
def api_as(annotator_a, adjudicator, researcher, outsider):
    users = {"annotator": annotator_a, "adjudicator": adjudicator, "researcher": researcher, "outsider": outsider}

    def client_for(persona: str) -> APIClient:
        client = APIClient()
        if persona != "anonymous":
            client.force_login(users[persona])
        return client

    return client_for


@pytest.fixture
def api(api_as):
    return api_as("researcher")


def snapshot():
    """Everything a write could change, to prove a refused or failed request changed nothing."""
    return (
        sorted(Dataset.objects.values_list("name", "description")),
        sorted(Expression.objects.values_list("id", "dataset__name", "text", "explanation", "kind", "theme__code")),
        Expression.traits.through.objects.count(),
    )


def csv_upload(text: str, name="nhap.csv", *, bom=False) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (BOM if bom else b"") + text.encode("utf-8"), content_type="text/csv")


def detail(response) -> str:
    if response["Content-Type"].startswith("application/json"):
        return response.json()["detail"]
    return response.content.decode()


def expression_of(dataset, external_id) -> Expression:
    return dataset.expressions.get(external_id=external_id)


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


# --- Datasets --------------------------------------------------------------------


def test_it_lists_datasets_with_their_expression_counts(api_as, corpus, other, researcher):
    Dataset.objects.create(name="Rỗng", description="Chưa có gì", created_by=researcher)
    body = api_as("annotator").get(reverse("api:dataset-list")).json()
    assert body["count"] == 3 and body["next"] is None and body["previous"] is None
    rows = {d["name"]: d for d in body["results"]}
    assert [d["name"] for d in body["results"]] == sorted(rows)
    assert {name: d["n_expressions"] for name, d in rows.items()} == {"Ca dao": 3, "Khác": 1, "Rỗng": 0}
    assert rows["Rỗng"]["created_by"] == "researcher" and rows["Ca dao"]["created_by"] is None
    assert rows["Rỗng"]["description"] == "Chưa có gì"
    assert set(rows["Ca dao"]) == {"id", "name", "description", "created_by", "created_at", "n_expressions"}
    one = api_as("adjudicator").get(reverse("api:dataset-detail", args=[corpus.pk])).json()
    assert one == rows["Ca dao"]


def test_it_creates_renames_and_deletes_a_dataset(api, corpus, other):
    created = api.post(reverse("api:dataset-list"), {"name": "  Thành ngữ  ", "description": "Mới"}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["name"] == "Thành ngữ" and body["created_by"] == "researcher" and body["n_expressions"] == 0
    dataset = Dataset.objects.get(pk=body["id"])
    assert dataset.created_by.username == "researcher"

    renamed = api.patch(reverse("api:dataset-detail", args=[corpus.pk]), {"name": "Ca dao cũ"}, format="json")
    assert renamed.status_code == 200
    assert renamed.json()["name"] == "Ca dao cũ" and renamed.json()["n_expressions"] == 3
    corpus.refresh_from_db()
    assert corpus.name == "Ca dao cũ" and corpus.description == ""

    deleted = api.delete(reverse("api:dataset-detail", args=[corpus.pk]))
    assert deleted.status_code == 204
    assert not Dataset.objects.filter(pk=corpus.pk).exists()
    assert list(Expression.objects.values_list("dataset__name", flat=True)) == ["Khác"]
    assert api.get(reverse("api:dataset-detail", args=[corpus.pk])).status_code == 404


def test_it_refuses_a_dataset_name_that_is_taken_or_blank(api, corpus, other):
    before = snapshot()
    taken = api.post(reverse("api:dataset-list"), {"name": "Ca dao"}, format="json")
    assert taken.status_code == 400 and list(taken.json()) == ["name"]
    assert "already exists" in taken.json()["name"][0]
    rename = api.patch(reverse("api:dataset-detail", args=[other.pk]), {"name": "Ca dao"}, format="json")
    assert rename.status_code == 400 and "already exists" in rename.json()["name"][0]
    blank = api.post(reverse("api:dataset-list"), {"name": "   "}, format="json")
    assert blank.status_code == 400 and list(blank.json()) == ["name"]
    assert snapshot() == before


# --- Expressions -------------------------------------------------------------


def test_it_returns_expressions_with_codes_for_traits_and_theme(api_as, corpus):
    v1 = expression_of(corpus, "v1")
    body = api_as("adjudicator").get(reverse("api:expression-detail", args=[v1.pk])).json()
    created_at = body.pop("created_at")
    assert created_at.startswith(str(v1.created_at.year))
    assert body == {
        "id": v1.pk,
        "dataset": corpus.pk,
        "text": NFC,
        "explanation": "Còn non nớt, chưa tự lập",
        "kind": "idiom",
        "source": "",
        "external_id": "v1",
        "traits": ["literal", "pragmatic"],
        "theme": "criticism",
        "metadata": {"note": "chim non"},
    }
    v2 = api_as("adjudicator").get(reverse("api:expression-detail", args=[expression_of(corpus, "v2").pk])).json()
    assert v2["traits"] == [] and v2["theme"] == "life_lessons" and v2["metadata"] == {}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, ["v1", "v2", "v3", "other"]),
        ({"dataset": "CORPUS"}, ["v1", "v2", "v3"]),
        ({"dataset": "OTHER"}, ["other"]),
        ({"trait": "pragmatic"}, ["v1", "other"]),
        ({"trait": "pragmatic", "dataset": "CORPUS"}, ["v1"]),
        ({"theme": "criticism"}, ["v1", "other"]),
        ({"kind": "proverb"}, ["v2", "v3"]),
        ({"kind": "proverb", "theme": "virtues"}, ["v3"]),
        ({"search": "đá"}, ["v2", "other"]),
        ({"search": "kiên trì"}, ["v2"]),
        ({"search": "bạc nghĩa", "dataset": "CORPUS"}, []),
        ({"trait": "", "theme": "", "kind": "", "search": ""}, ["v1", "v2", "v3", "other"]),
    ],
)
def test_it_filters_expressions(api_as, corpus, other, query, expected):
    ids = {"CORPUS": corpus.pk, "OTHER": other.pk}
    params = {k: ids.get(v, v) for k, v in query.items()}
    body = api_as("adjudicator").get(reverse("api:expression-list"), params).json()
    labels = {e.pk: e.external_id or "other" for e in Expression.objects.all()}
    assert [labels[e["id"]] for e in body["results"]] == expected
    assert body["count"] == len(expected)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"trait": "nope"}, "trait"),
        ({"theme": "nope"}, "theme"),
        ({"kind": "poem"}, "kind"),
        ({"dataset": "999999"}, "dataset"),
        ({"dataset": "abc"}, "dataset"),
    ],
)
def test_it_answers_400_to_an_unknown_filter_value(api_as, corpus, params, field):
    response = api_as("annotator").get(reverse("api:expression-list"), params)
    assert response.status_code == 400 and list(response.json()) == [field]


def test_it_paginates_with_count_next_and_results(api_as, corpus, other):
    size = api_settings.PAGE_SIZE
    Expression.objects.bulk_create(
        Expression(dataset=other, text=f"Câu số {n}", normalized_key=normalize_key(f"Câu số {n}"), explanation="-")
        for n in range(size + 1)
    )
    client = api_as("annotator")
    first = client.get(reverse("api:expression-list"), {"dataset": other.pk}).json()
    assert first["count"] == size + 2
    assert len(first["results"]) == size and first["previous"] is None
    assert f"dataset={other.pk}" in first["next"] and "page=2" in first["next"]
    second = client.get(first["next"]).json()
    assert len(second["results"]) == 2 and second["next"] is None and second["previous"]
    ids = [e["id"] for e in first["results"] + second["results"]]
    assert ids == sorted(ids) == sorted(other.expressions.values_list("id", flat=True))
    assert client.get(reverse("api:expression-list"), {"page": 99}).status_code == 404


def test_it_creates_an_expression_with_trait_and_theme_codes(api, corpus):
    decomposed = unicodedata.normalize("NFD", "Ếch ngồi  đáy giếng ")
    response = api.post(
        reverse("api:expression-list"),
        {
            "dataset": corpus.pk,
            "text": decomposed,
            "explanation": "Hiểu biết hạn hẹp",
            "kind": "idiom",
            "traits": ["pragmatic", "literal"],
            "theme": "criticism",
            "source": " Dân gian ",
            "external_id": "v9",
            "metadata": {"gloss": "frog at the bottom of a well"},
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["text"] == unicodedata.normalize("NFC", "Ếch ngồi đáy giếng")
    assert body["traits"] == ["literal", "pragmatic"] and body["theme"] == "criticism"
    assert body["source"] == "Dân gian" and body["metadata"] == {"gloss": "frog at the bottom of a well"}
    stored = Expression.objects.get(pk=body["id"])
    assert stored.dataset == corpus and stored.kind == ExpressionKind.IDIOM and stored.external_id == "v9"
    assert stored.normalized_key == normalize_key(decomposed)
    assert sorted(stored.traits.values_list("code", flat=True)) == ["literal", "pragmatic"]


@pytest.mark.parametrize("text", [NFD, NFC, f"  {NFC.upper()}  ", NFD.replace(" ", "   ")])
def test_it_refuses_an_expression_already_in_the_dataset_naming_text(api, corpus, other, text):
    before = snapshot()
    response = api.post(
        reverse("api:expression-list"), {"dataset": corpus.pk, "text": text, "explanation": "Lặp"}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["text"]
    message = response.json()["text"][0]
    assert "already in the dataset “Ca dao”" in message and f"expression {expression_of(corpus, 'v1').pk}" in message
    assert snapshot() == before
    # The same text is welcome in another dataset.
    elsewhere = api.post(
        reverse("api:expression-list"), {"dataset": other.pk, "text": text, "explanation": "Khác"}, format="json"
    )
    assert elsewhere.status_code == 201


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"traits": ["nope"]}, "traits"),
        ({"theme": "nope"}, "theme"),
        ({"kind": "poem"}, "kind"),
        ({"explanation": ""}, "explanation"),
        ({"text": "   "}, "text"),
        ({"dataset": 999999}, "dataset"),
        ({"metadata": ["not", "an", "object"]}, "metadata"),
    ],
)
def test_it_refuses_an_invalid_expression_naming_the_field(api, corpus, payload, field):
    data = {"dataset": corpus.pk, "text": "Mới tinh", "explanation": "Giải thích", **payload}
    before = snapshot()
    response = api.post(reverse("api:expression-list"), data, format="json")
    assert response.status_code == 400 and list(response.json()) == [field]
    assert snapshot() == before


def test_it_updates_an_expression_and_checks_duplicates_against_the_others(api, corpus):
    v1, v2 = expression_of(corpus, "v1"), expression_of(corpus, "v2")
    url = reverse("api:expression-detail", args=[v2.pk])
    clash = api.patch(url, {"text": NFD}, format="json")
    assert clash.status_code == 400 and f"expression {v1.pk}" in clash.json()["text"][0]
    v2.refresh_from_db()
    assert v2.text == "Nước chảy đá mòn"

    same = api.patch(url, {"text": "NƯỚC chảy đá mòn", "traits": ["literal"], "theme": None}, format="json")
    assert same.status_code == 200
    assert same.json()["text"] == "NƯỚC chảy đá mòn" and same.json()["traits"] == ["literal"]
    assert same.json()["theme"] is None and same.json()["explanation"] == "Kiên trì thì việc khó cũng xong"
    v2.refresh_from_db()
    assert v2.normalized_key == normalize_key("Nước chảy đá mòn") and v2.theme is None

    cleared = api.patch(reverse("api:expression-detail", args=[v1.pk]), {"traits": []}, format="json")
    assert cleared.json()["traits"] == [] and v1.traits.count() == 0
    moved = api.patch(url, {"dataset": 999}, format="json")
    assert moved.status_code == 200 and moved.json()["dataset"] == corpus.pk  # the dataset cannot change


def test_it_deletes_an_expression_with_its_trait_links(api, corpus):
    v1 = expression_of(corpus, "v1")
    assert v1.traits.count() == 2
    response = api.delete(reverse("api:expression-detail", args=[v1.pk]))
    assert response.status_code == 204
    assert not Expression.objects.filter(pk=v1.pk).exists()
    assert Expression.traits.through.objects.count() == 1  # v3's folk_knowledge
    assert api.get(reverse("api:expression-detail", args=[v1.pk])).status_code == 404


# --- Taxonomy ------------------------------------------------------------------


def test_it_lists_the_taxonomy_in_prompt_order(api_as):
    client = api_as("annotator")
    traits = client.get(reverse("api:trait-list")).json()
    assert [t["code"] for t in traits] == [
        "literal",
        "sino_vietnamese",
        "uncommon_vocabulary",
        "folk_knowledge",
        "pragmatic",
    ]
    assert [t["number"] for t in traits] == [1, 2, 3, 4, 5]
    assert set(traits[0]) == {"number", "code", "aspect", "name_en", "name_vi", "description_en", "description_vi"}
    assert traits[0]["aspect"] == "Meaning" and traits[0]["name_vi"] == "Không mang nghĩa bóng"
    themes = client.get(reverse("api:theme-list")).json()
    assert [t["number"] for t in themes] == list(range(1, 8)) and themes[-1]["code"] == "other"
    assert set(themes[0]) == {"number", "code", "name_en", "name_vi", "description_en", "description_vi"}
    assert client.get(reverse("api:theme-detail", args=["virtues"])).json()["name_en"] == "Virtues"
    assert client.get(reverse("api:trait-detail", args=["nope"])).status_code == 404


# --- Imports ---------------------------------------------------------------------


def test_it_imports_a_csv_with_a_bom_and_a_column_map(api, researcher):
    upload = csv_upload(
        f"Idiom,Meaning,Vùng\n{NFD},Non nớt,Bắc Bộ\nĂn cháo đá bát,Vô ơn,\n", name="thanh-ngu.csv", bom=True
    )
    response = api.post(
        reverse("api:import"),
        {"dataset": "Thành ngữ", "file": upload, "map": "expression=Idiom,explanation=Meaning"},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    report = response.json()
    assert report["ok"] is True and report["dry_run"] is False and report["errors"] == []
    assert (report["rows"], report["created"], report["skipped_duplicates"]) == (2, 2, 0)
    assert report["columns"] == ["Idiom", "Meaning", "Vùng"] and report["metadata_columns"] == ["Vùng"]
    assert report["summary"] == "created 2, skipped_duplicates 0" and report["filename"] == "thanh-ngu.csv"
    dataset = Dataset.objects.get(name="Thành ngữ")
    assert dataset.created_by == researcher
    texts = list(dataset.expressions.order_by("id").values_list("text", "metadata"))
    assert texts == [(NFC, {"Vùng": "Bắc Bộ"}), ("Ăn cháo đá bát", {})]


def test_it_reports_duplicates_of_an_import_and_adds_to_an_existing_dataset(api, corpus):
    upload = csv_upload(f"expression,explanation\n{NFD},Lặp\nMột mới,Mới\n")
    response = api.post(reverse("api:import"), {"dataset": "Ca dao", "file": upload}, format="multipart")
    assert response.status_code == 201
    report = response.json()
    assert (report["created"], report["skipped_duplicates"]) == (1, 1)
    assert report["duplicates"] == [{"row": 2, "expression": NFC, "reason": "already in the dataset"}]
    assert corpus.expressions.count() == 4


@pytest.mark.parametrize("dataset_name", ["Ca dao", "Chưa có"])
def test_it_refuses_an_invalid_file_naming_row_and_column_and_writes_nothing(api, corpus, dataset_name):
    upload = csv_upload("expression,explanation,traits\nHợp lệ,Tốt,\nThiếu giải thích,,\nSai nét,Có,nope\n")
    datasets, expressions = Dataset.objects.count(), Expression.objects.count()
    before = snapshot()
    response = api.post(reverse("api:import"), {"dataset": dataset_name, "file": upload}, format="multipart")
    assert response.status_code == 400
    report = response.json()
    assert report["ok"] is False and report["created"] == 0
    located = [(e["row"], e["column"]) for e in report["errors"]]
    assert located == [(3, "explanation"), (4, "traits")]
    assert report["errors"][0]["text"] == "row 3, column 'explanation': the explanation is empty"
    assert "unknown trait 'nope'" in report["errors"][1]["message"]
    assert (Dataset.objects.count(), Expression.objects.count()) == (datasets, expressions)
    assert snapshot() == before


def test_it_writes_nothing_on_a_dry_run(api, corpus):
    before = snapshot()
    upload = csv_upload("expression,explanation,theme\nMột,Giải thích một,love\nHai,Giải thích hai,\n")
    response = api.post(
        reverse("api:import"), {"dataset": "Thử", "file": upload, "dry_run": "true"}, format="multipart"
    )
    assert response.status_code == 200
    report = response.json()
    assert report["dry_run"] is True and report["created"] == 2 and report["ok"] is True
    assert [(p["row"], p["expression"], p["theme"]) for p in report["preview"]] == [(2, "Một", "love"), (3, "Hai", "")]
    assert snapshot() == before and not Dataset.objects.filter(name="Thử").exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"map": "expression"}, "map"),
        ({"map": "colour=Màu"}, "map"),
        ({"file": None}, "file"),
        ({"dataset": ""}, "dataset"),
        ({"dry_run": "maybe"}, "dry_run"),
    ],
)
def test_it_answers_400_to_a_malformed_import_request(api, data, field):
    payload = {"dataset": "Nhập", "file": csv_upload("expression,explanation\nA,B\n"), **data}
    payload = {k: v for k, v in payload.items() if v is not None}
    response = api.post(reverse("api:import"), payload, format="multipart")
    assert response.status_code == 400 and list(response.json()) == [field]
    assert not Dataset.objects.exists() and not Expression.objects.exists()


def test_it_reports_an_unsupported_file_as_an_import_error(api):
    response = api.post(
        reverse("api:import"), {"dataset": "Nhập", "file": csv_upload("a,b\n", name="notes.txt")}, format="multipart"
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["row"] is None and "supported are .csv, .tsv, .json, .jsonl, .xlsx" in error["message"]
    assert not Dataset.objects.exists()


def test_it_refuses_an_import_over_the_size_limit_before_reading_it(api, settings):
    settings.VIVID_IMPORT_MAX_BYTES = 1024
    upload = csv_upload("expression,explanation\n" + "Dài,Rất dài\n" * 200)
    response = api.post(reverse("api:import"), {"dataset": "Nhập", "file": upload}, format="multipart")
    assert response.status_code == 400 and "the limit is 1,024 bytes" in response.json()["file"][0]
    assert not Dataset.objects.exists()


# --- Exports -----------------------------------------------------------------------


def test_it_exports_csv_that_pandas_reads(api_as, corpus):
    response = api_as("adjudicator").get(reverse("api:dataset-export", args=[corpus.pk]), {"format": "csv"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="ca-dao.csv"'
    frame = pd.read_csv(io.BytesIO(response.content), dtype=str, keep_default_na=False)
    assert list(frame.columns) == ["id", "expression", "explanation", "kind", "source", "traits", "theme", "note"]
    assert frame["expression"].tolist() == [NFC, "Nước chảy đá mòn", "Ăn quả nhớ kẻ trồng cây"]
    assert frame["traits"].tolist() == ["literal,pragmatic", "", "folk_knowledge"]
    assert frame.iloc[0]["explanation"] == "Còn non nớt, chưa tự lập" and frame.iloc[0]["note"] == "chim non"
    default = api_as("adjudicator").get(reverse("api:dataset-export", args=[corpus.pk]))
    assert default.status_code == 200 and default.content == response.content  # csv unless told otherwise


def test_it_exports_jsonl_that_pandas_reads(api_as, corpus):
    response = api_as("adjudicator").get(reverse("api:dataset-export", args=[corpus.pk]) + "?format=jsonl")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="ca-dao.jsonl"'
    frame = pd.read_json(io.BytesIO(response.content), lines=True, dtype=False)
    assert frame["id"].tolist() == ["v1", "v2", "v3"]
    assert frame["traits"].tolist() == [["literal", "pragmatic"], [], ["folk_knowledge"]]
    assert json.loads(response.content.decode().splitlines()[0])["expression"] == NFC


def test_it_names_an_export_file_after_a_vietnamese_dataset_name(api, researcher):
    dataset = Dataset.objects.create(name="Tục ngữ / Đạo đức", created_by=researcher)
    response = api.get(reverse("api:dataset-export", args=[dataset.pk]), {"format": "csv"})
    assert response.status_code == 200 and response.content.decode().startswith("id,expression,explanation")
    assert (
        response["Content-Disposition"]
        == "attachment; filename*=utf-8''t%E1%BB%A5c-ng%E1%BB%AF-%C4%91%E1%BA%A1o-%C4%91%E1%BB%A9c.csv"
    )


def test_it_answers_400_to_an_unknown_export_format_and_404_to_a_missing_dataset(api, corpus):
    response = api.get(reverse("api:dataset-export", args=[corpus.pk]), {"format": "xml"})
    assert response.status_code == 400
    assert response.json() == {"format": ["“xml” is not an export format; use one of csv, jsonl."]}
    missing = api.get(reverse("api:dataset-export", args=[999999]), {"format": "csv"})
    assert missing.status_code == 404 and missing.json() == {"detail": "No Dataset matches the given query."}


def test_it_round_trips_an_export_through_the_import_api(api, corpus):
    exported = api.get(reverse("api:dataset-export", args=[corpus.pk]), {"format": "csv"}).content
    upload = SimpleUploadedFile("ca-dao.csv", exported, content_type="text/csv")
    response = api.post(reverse("api:import"), {"dataset": "Bản sao", "file": upload}, format="multipart")
    assert response.status_code == 201 and response.json()["created"] == 3

    def shape(dataset):
        return [
            (
                e.text,
                e.explanation,
                e.kind,
                e.external_id,
                e.theme.code,
                sorted(t.code for t in e.traits.all()),
                e.metadata,
            )
            for e in dataset.expressions.order_by("id")
        ]

    assert shape(Dataset.objects.get(name="Bản sao")) == shape(corpus)


# --- Schema and docs ---------------------------------------------------------------


def test_it_serves_an_openapi_schema_of_every_endpoint(api_as):
    response = api_as("annotator").get(reverse("api-schema"), {"format": "json"})
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.") and schema["info"]["title"] == "VIVID Studio API"
    paths = schema["paths"]
    expected = {
        "/api/datasets/": {"get", "post"},
        "/api/datasets/{id}/": {"get", "patch", "delete"},
        "/api/datasets/{id}/export/": {"get"},
        "/api/expressions/": {"get", "post"},
        "/api/expressions/{id}/": {"get", "patch", "delete"},
        "/api/traits/": {"get"},
        "/api/traits/{code}/": {"get"},
        "/api/themes/": {"get"},
        "/api/themes/{code}/": {"get"},
        "/api/imports/": {"post"},
        "/api/token/": {"post"},
    }
    for path, methods in expected.items():
        assert set(paths[path]) == methods, path
    assert set(schema["components"]["securitySchemes"]) == {"tokenAuth", "cookieAuth"}
    filters = {p["name"] for p in paths["/api/expressions/"]["get"]["parameters"]}
    assert filters == {"dataset", "search", "trait", "theme", "kind", "page"}
    export = paths["/api/datasets/{id}/export/"]["get"]
    assert set(export["responses"]["200"]["content"]) == {"text/csv", "application/x-ndjson"}
    assert "multipart/form-data" in paths["/api/imports/"]["post"]["requestBody"]["content"]


def test_it_generates_a_schema_without_warnings(tmp_path):
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/imports/" in out.read_text()


def test_it_renders_swagger_ui_from_local_assets_only(api_as):
    response = api_as("annotator").get(reverse("api-docs"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    hosts = set(re.findall(r"(?:https?:)?//([A-Za-z0-9.-]+(?::\d+)?)", html))
    assert hosts <= {"testserver"}, hosts
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in assets
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css" in assets
    # The start-up script is a file of its own (the CSP runs no inline script).
    assert "/api/docs/?script=" in assets and "<script>" not in html
    for asset in set(assets) - {"/api/docs/?script="}:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), asset
    script = api_as("annotator").get(reverse("api-docs"), {"script": ""})
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert '"/api/schema/"' in script.content.decode()


# --- The corpus services behind the API (annotation/services/corpus.py) --------------


def test_it_turns_a_duplicate_that_slips_past_the_check_into_a_field_error(corpus, monkeypatch):
    """Two writers at once: the unique constraint still reports the field, and nothing is half-written."""
    monkeypatch.setattr(services_corpus, "_expression_check_unique", lambda expression: None)
    monkeypatch.setattr(services_corpus, "_dataset_check_name", lambda dataset: None)
    before = snapshot()
    with pytest.raises(DjangoValidationError) as caught:
        services_corpus.expression_create(dataset=corpus, text=NFD, explanation="Lặp", traits=[])
    assert list(caught.value.message_dict) == ["text"]
    with pytest.raises(DjangoValidationError) as caught:
        services_corpus.dataset_create(name="Ca dao")
    assert list(caught.value.message_dict) == ["name"]
    assert snapshot() == before
    assert Dataset.objects.filter(name="Ca dao").count() == 1  # the database is still usable


def test_it_refuses_to_change_fields_a_service_does_not_own(corpus, other):
    v1 = expression_of(corpus, "v1")
    with pytest.raises(DjangoValidationError, match="dataset"):
        services_corpus.expression_update(expression=v1, data={"dataset": other})
    with pytest.raises(DjangoValidationError, match="created_by"):
        services_corpus.dataset_update(dataset=corpus, data={"created_by": None})
    v1.refresh_from_db()
    assert v1.dataset == corpus
