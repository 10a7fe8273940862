"""Datasets, expressions and the taxonomy over the REST API, and the corpus services behind them."""

import unicodedata

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from rest_framework.settings import api_settings

from annotation.models import Dataset, Expression, ExpressionKind, normalize_key
from annotation.services import corpus as services_corpus
from annotation.services import dataset_create

from .api_helpers import NFC, NFD, expression_of, snapshot
from .factories import make_dataset, numbered_csv

pytestmark = pytest.mark.django_db


# --- Datasets --------------------------------------------------------------------


def test_it_lists_datasets_with_their_expression_counts(api_as, corpus, other_corpus, researcher):
    dataset_create(name="Rỗng", description="Chưa có gì", user=researcher)
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


def test_it_creates_renames_and_deletes_a_dataset(api, corpus, other_corpus):
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


def test_it_refuses_a_dataset_name_that_is_taken_or_blank(api, corpus, other_corpus):
    before = snapshot()
    taken = api.post(reverse("api:dataset-list"), {"name": "Ca dao"}, format="json")
    assert taken.status_code == 400 and list(taken.json()) == ["name"]
    assert "already exists" in taken.json()["name"][0]
    rename = api.patch(reverse("api:dataset-detail", args=[other_corpus.pk]), {"name": "Ca dao"}, format="json")
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
def test_it_filters_expressions(api_as, corpus, other_corpus, query, expected):
    ids = {"CORPUS": corpus.pk, "OTHER": other_corpus.pk}
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


def test_it_paginates_with_count_next_and_results(api_as, corpus, other_corpus):
    size = api_settings.PAGE_SIZE
    make_dataset(name=other_corpus.name, csv=numbered_csv(size + 1, explanation="-"))
    client = api_as("annotator")
    first = client.get(reverse("api:expression-list"), {"dataset": other_corpus.pk}).json()
    assert first["count"] == size + 2
    assert len(first["results"]) == size and first["previous"] is None
    assert f"dataset={other_corpus.pk}" in first["next"] and "page=2" in first["next"]
    second = client.get(first["next"]).json()
    assert len(second["results"]) == 2 and second["next"] is None and second["previous"]
    ids = [e["id"] for e in first["results"] + second["results"]]
    assert ids == sorted(ids) == sorted(other_corpus.expressions.values_list("id", flat=True))
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
def test_it_refuses_an_expression_already_in_the_dataset_naming_text(api, corpus, other_corpus, text):
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
        reverse("api:expression-list"), {"dataset": other_corpus.pk, "text": text, "explanation": "Khác"}, format="json"
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


def test_it_refuses_to_change_fields_a_service_does_not_own(corpus, other_corpus):
    v1 = expression_of(corpus, "v1")
    with pytest.raises(DjangoValidationError, match="dataset"):
        services_corpus.expression_update(expression=v1, data={"dataset": other_corpus})
    with pytest.raises(DjangoValidationError, match="created_by"):
        services_corpus.dataset_update(dataset=corpus, data={"created_by": None})
    v1.refresh_from_db()
    assert v1.dataset == corpus
