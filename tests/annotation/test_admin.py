"""The Django admin of the corpus."""

import unicodedata

import pytest
from django.contrib import admin
from django.urls import reverse

from annotation.models import Dataset, Expression, ImportJob, ImportJobStatus, Theme, Trait, normalize_key
from annotation.services import dataset_create
from tests.conftest import make_user

from .factories import client_for, make_dataset

ANNOTATION_MODELS = [Trait, Theme, Dataset, Expression, ImportJob]
SECRET_UPLOAD = b"expression,explanation\nsecret-upload-bytes,do not show\n"
ADMIN_CSV = (
    "expression,explanation,kind,traits,theme\n"
    'Ăn quả nhớ kẻ trồng cây,Biết ơn người đã gây dựng.,proverb,"pragmatic,folk_knowledge",virtues\n'
)


def _url(model, view, *args):
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


@pytest.fixture
def superuser(db):
    return make_user("root", is_staff=True, is_superuser=True)


@pytest.fixture
def superuser_client(superuser):
    return client_for(superuser)


@pytest.fixture
def admin_corpus(superuser):
    dataset = make_dataset(name="Admin corpus", csv=ADMIN_CSV, user=superuser)
    expression = dataset.expressions.get()
    job = ImportJob.objects.create(
        dataset_name="Admin corpus",
        dataset=dataset,
        filename="upload.csv",
        content=SECRET_UPLOAD,
        status=ImportJobStatus.DONE,
        report={"summary": "created 1, skipped_duplicates 0"},
        created_by=superuser,
    )
    return {
        Dataset: dataset,
        Expression: expression,
        ImportJob: job,
        Trait: Trait.objects.first(),
        Theme: Theme.objects.first(),
    }


def test_it_registers_every_annotation_model():
    from django.apps import apps

    registered = {model for model in admin.site._registry if model._meta.app_label == "annotation"}
    assert registered == set(apps.get_app_config("annotation").get_models())


@pytest.mark.django_db
def test_it_shows_workflow_records_read_only(superuser_client):
    from annotation.models import (
        AnnotationRound,
        Assignment,
        DatasetVersion,
        DatasetVersionItem,
        LabelChange,
        RoundItem,
        Suggestion,
        SuggestionSet,
    )

    for model in (
        SuggestionSet,
        Suggestion,
        AnnotationRound,
        RoundItem,
        Assignment,
        LabelChange,
        DatasetVersion,
        DatasetVersionItem,
    ):
        assert superuser_client.get(_url(model, "changelist")).status_code == 200
        assert superuser_client.get(_url(model, "add")).status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize("model", ANNOTATION_MODELS, ids=lambda m: m.__name__)
def test_it_opens_the_changelist_and_change_page_for_a_superuser(superuser_client, admin_corpus, model):
    response = superuser_client.get(_url(model, "changelist"))
    assert response.status_code == 200
    assert superuser_client.get(_url(model, "changelist"), {"q": "a"}).status_code == 200
    response = superuser_client.get(_url(model, "change", admin_corpus[model].pk))
    assert response.status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("model", [Dataset, Expression], ids=lambda m: m.__name__)
def test_it_opens_the_add_form_for_a_superuser(superuser_client, model):
    assert superuser_client.get(_url(model, "add")).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("model", [Trait, Theme, ImportJob], ids=lambda m: m.__name__)
def test_it_forbids_adding_taxonomy_or_import_jobs_by_hand(superuser_client, model):
    assert superuser_client.get(_url(model, "add")).status_code == 403


@pytest.mark.django_db
def test_it_lets_a_superuser_edit_a_trait_description_but_not_its_code(superuser_client):
    trait = Trait.objects.get(code="literal")
    data = {
        "aspect": trait.aspect,
        "name_en": trait.name_en,
        "name_vi": trait.name_vi,
        "description_en": "Edited description.",
        "description_vi": trait.description_vi,
        "code": "hacked",
        "number": "99",
    }
    response = superuser_client.post(_url(Trait, "change", trait.pk), data)
    assert response.status_code == 302
    trait.refresh_from_db()
    assert trait.description_en == "Edited description."
    assert (trait.code, trait.number) == ("literal", 1)


@pytest.mark.django_db
def test_it_shows_expression_counts_and_traits_in_lists(superuser_client, admin_corpus):
    response = superuser_client.get(_url(Dataset, "changelist"))
    assert response.context["cl"].result_list[0].n_expressions == 1
    response = superuser_client.get(_url(Expression, "changelist"))
    assert "folk_knowledge, pragmatic" in response.content.decode()


@pytest.mark.django_db
def test_it_never_shows_the_uploaded_bytes_of_an_import_job(superuser_client, admin_corpus):
    response = superuser_client.get(_url(ImportJob, "change", admin_corpus[ImportJob].pk))
    body = response.content.decode()
    assert "upload.csv" in body and "created 1, skipped_duplicates 0" in body
    assert "secret-upload-bytes" not in body
    assert superuser_client.get(_url(ImportJob, "changelist"), {"status__exact": "done"}).status_code == 200


@pytest.mark.django_db
def test_it_sends_a_non_staff_researcher_to_the_admin_login(researcher_client):
    for url in (reverse("admin:index"), _url(Expression, "changelist"), _url(Dataset, "add")):
        response = researcher_client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))


def _expression_form(dataset, text, **extra):
    return {
        "dataset": dataset.pk,
        "text": text,
        "explanation": "Khi yêu thì cái gì cũng thấy đẹp.",
        "kind": "proverb",
        "source": "",
        "external_id": "",
        "traits": [Trait.objects.get(code="pragmatic").pk],
        "theme": Theme.objects.get(code="love").pk,
        "metadata": "{}",
        **extra,
    }


@pytest.mark.django_db
def test_it_sets_normalized_key_from_nfd_input_when_saving_an_expression(superuser_client, admin_corpus):
    nfc = "Thương nhau củ ấu cũng tròn"
    nfd = unicodedata.normalize("NFD", "  THƯƠNG nhau   củ ấu cũng tròn ")
    assert nfd != nfc
    response = superuser_client.post(_url(Expression, "add"), _expression_form(admin_corpus[Dataset], nfd))
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response
    expression = Expression.objects.get(
        dataset=admin_corpus[Dataset], external_id="", kind="proverb", theme__code="love"
    )
    assert expression.normalized_key == normalize_key(nfc) == "thương nhau củ ấu cũng tròn"
    assert unicodedata.is_normalized("NFC", expression.normalized_key)
    assert list(expression.traits.values_list("code", flat=True)) == ["pragmatic"]

    # Editing the text recomputes the key.
    response = superuser_client.post(
        _url(Expression, "change", expression.pk),
        _expression_form(admin_corpus[Dataset], unicodedata.normalize("NFD", "Ghét nhau quả bồ hòn cũng méo")),
    )
    assert response.status_code == 302
    expression.refresh_from_db()
    assert expression.normalized_key == "ghét nhau quả bồ hòn cũng méo"


@pytest.mark.django_db
def test_it_rejects_a_duplicate_expression_in_the_admin_form(superuser_client, admin_corpus):
    duplicate = unicodedata.normalize("NFD", "ăn quả  nhớ kẻ trồng CÂY")
    response = superuser_client.post(_url(Expression, "add"), _expression_form(admin_corpus[Dataset], duplicate))
    assert response.status_code == 200
    assert "text" in response.context["adminform"].form.errors
    assert admin_corpus[Dataset].expressions.count() == 1
    # The same text is fine in another dataset.
    other = dataset_create(name="Other corpus")
    response = superuser_client.post(_url(Expression, "add"), _expression_form(other, duplicate))
    assert response.status_code == 302
    assert other.expressions.get().normalized_key == admin_corpus[Expression].normalized_key
