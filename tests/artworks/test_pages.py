"""The artwork collection pages and API: list, import, review and edit elements and questions."""

import io
import zipfile

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from PIL import Image

from artworks.models import ArtworkCollection, ArtworkElement, ArtworkQuestion, CollectionArtwork
from artworks.services.editing import ArtworkEditError, element_save, question_save

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
DISTRACTORS = ["Wealth", "Victory", "Mourning", "Winter", "Power"]


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (10, 120, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def artwork(db):
    collection = ArtworkCollection.objects.create(name="Museum")
    artwork = CollectionArtwork(
        collection=collection, key="cn-lotus", title="Lotus Pond", culture="chinese", comment="Lotus flowers on a pond."
    )
    artwork.image.save(f"{collection.pk}/cn-lotus.png", ContentFile(png()), save=False)
    artwork.save()
    lotus = ArtworkElement.objects.create(artwork=artwork, name="lotus", is_symbol=True, meaning="purity", position=1)
    ArtworkElement.objects.create(artwork=artwork, name="pond", is_symbol=False, position=2)
    ArtworkQuestion.objects.create(
        artwork=artwork,
        key="cn-lotus-q1",
        type="attuned",
        symbol=lotus.name,
        question="What does the lotus stand for?",
        answer="Purity",
        distractors=DISTRACTORS,
    )
    return artwork


def page(artwork) -> str:
    return reverse("artworks:artwork_detail", args=[artwork.collection_id, artwork.pk])


def question_post(instance=None, **overrides) -> dict:
    data = {
        "action": "question_save" if instance else "question_add",
        "type": "attuned",
        "symbol": "lotus",
        "question": "What does the lotus mean?",
        "answer": "Purity",
    }
    if instance is not None:
        data["question_pk"] = instance.pk
    for n, text in enumerate(overrides.pop("distractors", DISTRACTORS), start=1):
        data[f"distractor_{n}"] = text
    data.update(overrides)
    return data


def urls(artwork) -> list[str]:
    c, a = artwork.collection_id, artwork.pk
    return [
        reverse("artworks:collection_list"),
        reverse("artworks:collection_import"),
        reverse("artworks:collection_detail", args=[c]),
        reverse("artworks:artwork_detail", args=[c, a]),
        reverse("artworks:artwork_image", args=[c, a]),
    ]


def test_it_refuses_every_page_to_outsiders_and_annotators(artwork, outsider_client, annotator_client):
    for url in urls(artwork):
        assert outsider_client.get(url).status_code == 403, url
        assert annotator_client.get(url).status_code == 403, url
    assert annotator_client.post(page(artwork), {"action": "review"}).status_code == 403
    assert artwork.__class__.objects.get(pk=artwork.pk).reviewed_at is None


def test_it_sends_anonymous_visitors_to_the_login_page(artwork, anonymous_client):
    for url in urls(artwork):
        response = anonymous_client.get(url)
        assert response.status_code == 302 and "/login" in response["Location"], url


def test_it_lists_collections_and_their_artworks_with_counts(artwork, researcher_client):
    listing = researcher_client.get(reverse("artworks:collection_list"))
    assert listing.status_code == 200 and "Museum" in listing.content.decode()

    detail = researcher_client.get(reverse("artworks:collection_detail", args=[artwork.collection_id]))
    html = detail.content.decode()
    assert detail.status_code == 200 and "Lotus Pond" in html
    row = detail.context["artworks"][0]
    assert (row.n_elements, row.n_symbols, row.n_questions) == (2, 1, 1)
    assert "not yet" in html


def test_it_shows_the_artwork_and_serves_its_image(artwork, researcher_client):
    response = researcher_client.get(page(artwork))
    html = response.content.decode()
    assert response.status_code == 200
    for text in ("Lotus Pond", "Lotus flowers on a pond.", "purity", "cn-lotus-q1", "Mark reviewed"):
        assert text in html
    image = researcher_client.get(reverse("artworks:artwork_image", args=[artwork.collection_id, artwork.pk]))
    assert image.status_code == 200 and b"".join(image.streaming_content) == png()


def test_it_imports_an_uploaded_zip(researcher_client, researcher):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("artworks.csv", "id,title,culture,image\nam-1,Eagle,american,img/e.png\n")
        archive.writestr("img/e.png", png())
    upload = SimpleUploadedFile("c.zip", buffer.getvalue(), content_type="application/zip")

    response = researcher_client.post(reverse("artworks:collection_import"), {"name": "Uploaded", "file": upload})

    collection = ArtworkCollection.objects.get(name="Uploaded")
    assert response.status_code == 302 and response["Location"] == reverse(
        "artworks:collection_detail", args=[collection.pk]
    )
    assert collection.created_by == researcher and collection.artworks.get().key == "am-1"


def test_it_lists_every_import_error_and_imports_nothing(researcher_client):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("artworks.csv", "id,title,culture,image\nam-1,,american,img/missing.png\n")
    upload = SimpleUploadedFile("c.zip", buffer.getvalue(), content_type="application/zip")

    response = researcher_client.post(reverse("artworks:collection_import"), {"name": "Broken", "file": upload})

    html = response.content.decode()
    assert response.status_code == 400
    assert "row 2, column &#x27;title&#x27;: required" in html
    assert "row 2, column &#x27;image&#x27;" in html
    assert not ArtworkCollection.objects.filter(name="Broken").exists()


def test_it_edits_an_element_in_place_with_htmx(artwork, researcher_client, researcher):
    pond = artwork.elements.get(name="pond")
    response = researcher_client.post(
        page(artwork), {"action": "element_save", "element": pond.pk, "name": "still pond", "meaning": "calm"}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith(f'<tr id="element-{pond.pk}"')
    assert "Saved." in html
    pond.refresh_from_db()
    assert (pond.name, pond.is_symbol, pond.meaning, pond.edited_by) == ("still pond", False, "calm", researcher)


def test_it_edits_an_element_without_javascript(artwork, researcher_client):
    pond = artwork.elements.get(name="pond")
    response = researcher_client.post(
        page(artwork),
        {"action": "element_save", "element": pond.pk, "name": "lake", "is_symbol": "on", "meaning": "depth"},
    )
    assert response.status_code == 302 and response["Location"].endswith(f"#element-{pond.pk}")
    pond.refresh_from_db()
    assert (pond.name, pond.is_symbol) == ("lake", True)


def test_it_keeps_the_input_and_shows_the_error_of_a_refused_element_edit(artwork, researcher_client):
    pond = artwork.elements.get(name="pond")
    response = researcher_client.post(
        page(artwork), {"action": "element_save", "element": pond.pk, "name": "LOTUS"}, **HTMX
    )
    html = response.content.decode()
    assert "already has an element" in html and 'value="LOTUS"' in html
    pond.refresh_from_db()
    assert pond.name == "pond"


def test_it_refuses_to_drop_a_symbol_that_questions_use(artwork, researcher_client):
    lotus = artwork.elements.get(name="lotus")
    response = researcher_client.post(page(artwork), {"action": "element_delete", "element": lotus.pk}, **HTMX)
    assert "cn-lotus-q1" in response.content.decode()
    assert ArtworkElement.objects.filter(pk=lotus.pk).exists()
    with pytest.raises(ArtworkEditError, match="cn-lotus-q1"):
        element_save(artwork=artwork, element=lotus, name="lotus", is_symbol=False)


def test_renaming_a_symbol_renames_it_in_its_questions(artwork, researcher_client):
    lotus = artwork.elements.get(name="lotus")
    response = researcher_client.post(
        page(artwork), {"action": "element_save", "element": lotus.pk, "name": "pink lotus", "is_symbol": "on"}, **HTMX
    )
    assert response.headers.get("HX-Refresh") == "true"
    assert artwork.questions.get().symbol == "pink lotus"


def test_it_adds_and_deletes_elements(artwork, researcher_client):
    response = researcher_client.post(page(artwork), {"action": "element_add", "name": "dragonfly"}, **HTMX)
    assert response.status_code == 200 and 'id="elements"' in response.content.decode()
    dragonfly = artwork.elements.get(name="dragonfly")
    assert dragonfly.position == 3

    response = researcher_client.post(page(artwork), {"action": "element_delete", "element": dragonfly.pk}, **HTMX)
    assert response.status_code == 200 and response.content == b""
    assert not artwork.elements.filter(name="dragonfly").exists()

    response = researcher_client.post(page(artwork), {"action": "element_add", "name": ""})
    assert response.status_code == 302
    assert artwork.elements.count() == 2


def test_it_saves_a_question_in_place(artwork, researcher_client, researcher):
    question = artwork.questions.get()
    new = ["Gold", "Fire", "Rain", "Jade", "Iron"]
    response = researcher_client.post(
        page(artwork), question_post(question, answer="Purity out of mud", distractors=new), **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith(f'<article id="question-{question.pk}"')
    question.refresh_from_db()
    assert (question.answer, question.distractors, question.edited_by) == ("Purity out of mud", new, researcher)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"distractors": ["A", "B", "C", "D", ""]}, "Give exactly 5 distractors; 4 are filled in."),
        ({"distractors": ["A", "B", "C", "D", "a"]}, "The distractors must all differ."),
        ({"distractors": ["A", "B", "C", "D", "purity"]}, "A distractor equals the answer."),
        ({"symbol": "pond"}, "“pond” is not an element of this artwork marked as a symbol."),
        ({"symbol": ""}, "A culturally attuned question is about one of the artwork"),
        ({"question": ""}, "The question is required."),
        ({"answer": ""}, "The answer is required."),
        ({"type": "other"}, "Choose attuned or agnostic."),
    ],
)
def test_it_refuses_an_invalid_question_and_says_why(artwork, researcher_client, overrides, message):
    question = artwork.questions.get()
    response = researcher_client.post(page(artwork), question_post(question, **overrides), **HTMX)
    html = response.content.decode().replace("&#x27;", "'")
    assert message in html
    question.refresh_from_db()
    assert question.distractors == DISTRACTORS and question.symbol == "lotus" and question.answer == "Purity"

    response = researcher_client.post(page(artwork), question_post(question, **overrides))
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.distractors == DISTRACTORS


def test_it_adds_an_agnostic_question_without_a_symbol_and_deletes_it(artwork, researcher_client):
    response = researcher_client.post(
        page(artwork),
        question_post(None, type="agnostic", symbol="lotus", question="What insect flies?", answer="A dragonfly"),
        **HTMX,
    )
    assert response.status_code == 200 and 'id="questions"' in response.content.decode()
    added = artwork.questions.get(type="agnostic")
    assert (added.key, added.symbol) == ("cn-lotus-q2", "")

    response = researcher_client.post(page(artwork), {"action": "question_delete", "question_pk": added.pk})
    assert response.status_code == 302
    assert not artwork.questions.filter(pk=added.pk).exists()


def test_question_save_refuses_a_missing_distractor_list(artwork):
    with pytest.raises(ArtworkEditError) as caught:
        question_save(artwork=artwork, type="agnostic", text="Q?", answer="A", distractors=["B"])
    assert set(caught.value.errors) == {"distractors"}


def test_it_saves_the_background_and_marks_the_artwork_reviewed(artwork, researcher_client, researcher):
    response = researcher_client.post(page(artwork), {"action": "background", "background": "  Song dynasty ponds.  "})
    assert response.status_code == 302
    response = researcher_client.post(page(artwork), {"action": "review", "reviewed": "1"})
    assert response.status_code == 302
    artwork.refresh_from_db()
    assert artwork.background == "Song dynasty ponds." and artwork.reviewed_by == researcher and artwork.reviewed_at

    detail = researcher_client.get(reverse("artworks:collection_detail", args=[artwork.collection_id]))
    assert "reviewed" in detail.content.decode() and detail.context["n_reviewed"] == 1

    researcher_client.post(page(artwork), {"action": "review", "reviewed": "0"})
    artwork.refresh_from_db()
    assert artwork.reviewed_at is None


def test_it_answers_404_for_an_element_of_another_artwork(artwork, researcher_client):
    other = CollectionArtwork.objects.create(
        collection=artwork.collection, key="x", title="X", culture="american", image="x.png"
    )
    element = ArtworkElement.objects.create(artwork=other, name="thing")
    response = researcher_client.post(page(artwork), {"action": "element_delete", "element": element.pk})
    assert response.status_code == 404
    url = reverse("artworks:artwork_detail", args=[artwork.collection_id + 999, artwork.pk])
    assert researcher_client.get(url).status_code == 404


def test_the_api_lists_collections_and_returns_one_with_everything(artwork, researcher_client):
    listing = researcher_client.get("/api/artworks/collections/")
    assert listing.status_code == 200
    assert listing.json() == [
        {
            "id": artwork.collection_id,
            "name": "Museum",
            "description": "",
            "created_at": listing.json()[0]["created_at"],
            "n_artworks": 1,
            "n_reviewed": 0,
        }
    ]

    detail = researcher_client.get(f"/api/artworks/collections/{artwork.collection_id}/").json()
    (item,) = detail["artworks"]
    assert item["key"] == "cn-lotus" and item["culture"] == "chinese"
    assert item["image_url"] == reverse("artworks:artwork_image", args=[artwork.collection_id, artwork.pk])
    assert [e["name"] for e in item["elements"]] == ["lotus", "pond"]
    assert item["questions"][0]["distractors"] == DISTRACTORS
    assert researcher_client.get("/api/artworks/collections/999999/").status_code == 404


def test_the_api_refuses_outsiders_annotators_and_anonymous_callers(
    artwork, outsider_client, annotator_client, anonymous_client
):
    for url in ("/api/artworks/collections/", f"/api/artworks/collections/{artwork.collection_id}/"):
        assert outsider_client.get(url).status_code == 403
        assert annotator_client.get(url).status_code == 403
        assert anonymous_client.get(url).status_code == 401
