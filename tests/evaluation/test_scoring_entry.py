"""The scoring form's rule for blank dimensions (issue 21): every dimension needs a score or an
explicit "cannot judge"; a blank one is refused by name and nothing is saved. The keyboard side is
tests/browser/test_scoring_keys_browser.py."""

import re
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.models import HumanRating, RatingStatus

from .factories import make_generation_run, make_scoring_task, numbered_dataset

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture
def rating(annotator_a, researcher):
    task = make_scoring_task(make_generation_run(numbered_dataset(12)), [annotator_a], user=researcher)
    return HumanRating.objects.filter(task=task, rater=annotator_a).order_by("position").first()


@pytest.fixture
def client_a(annotator_a):
    client = Client()
    client.force_login(annotator_a)
    return client


def _url(rating) -> str:
    return reverse("evaluation:scoring_item", args=[rating.task_id, rating.pk])


def _text(response) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def test_it_refuses_a_blank_dimension_by_name_and_saves_nothing(rating, client_a):
    # What the old page let through: a dimension skipped by the keyboard, and the overall score set.
    data = {"accuracy": "4", "native_alignment": "5", "score": "2", "note": "", "revision": "0"}
    response = client_a.post(_url(rating), data, headers=HTMX)
    assert response.status_code == 200
    text = _text(response)
    assert "Interpretive completeness: choose a score from 0 to 5, or “cannot judge”." in text
    assert "Semantic accuracy: choose" not in text
    rating.refresh_from_db()
    assert rating.status != RatingStatus.SUBMITTED and rating.score is None
    # Without htmx: a 400 with the same message; what was typed is kept in the form.
    response = client_a.post(_url(rating), {**data, "completeness": ""})
    assert response.status_code == 400
    assert "Interpretive completeness: choose" in _text(response)
    assert re.search(r'name="accuracy" value="4"[^>]*checked', response.content.decode())


def test_it_names_every_blank_dimension(rating, client_a):
    response = client_a.post(_url(rating), {"note": "1", "revision": "0"}, headers=HTMX)
    text = _text(response)
    for name in ("Semantic accuracy", "Interpretive completeness", "Alignment with native speakers' understanding"):
        assert f"{name}: choose a score from 0 to 5, or “cannot judge”." in text
    assert "Overall score: choose a score from 0 to 5 (the overall score is required)." in text


def test_it_stores_cannot_judge_as_no_score_and_shows_it_again(rating, client_a):
    data = {"accuracy": "na", "completeness": "3", "native_alignment": "na", "score": "4", "note": "", "revision": "0"}
    response = client_a.post(_url(rating), data)
    assert response.status_code == 302
    rating.refresh_from_db()
    assert rating.status == RatingStatus.SUBMITTED
    assert (rating.accuracy, rating.completeness, rating.native_alignment, rating.score) == (None, 3, None, 4)
    # Back on the item: "cannot judge" is what it shows, so saving again needs no new choice.
    html = client_a.get(_url(rating)).content.decode()
    assert re.search(r'name="accuracy" value="na"[^>]*checked', html)
    assert re.search(r'name="native_alignment" value="na"[^>]*checked', html)
    assert client_a.post(_url(rating), {**data, "revision": str(rating.revision)}).status_code == 302
    rating.refresh_from_db()
    assert rating.revision == 1  # the same scores resent: nothing new to save


def test_it_offers_no_cannot_judge_for_the_overall_score(rating, client_a):
    html = client_a.get(_url(rating)).content.decode()
    assert 'name="score" value="na"' not in html
    assert html.count('value="na"') == 3
    response = client_a.post(
        _url(rating),
        {"accuracy": "1", "completeness": "1", "native_alignment": "1", "score": "na", "revision": "0"},
        headers=HTMX,
    )
    assert "Select a valid choice" in _text(response)
    rating.refresh_from_db()
    assert rating.status != RatingStatus.SUBMITTED
