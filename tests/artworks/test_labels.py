"""Listener groups, cultures and the report's comparisons by their labels, never their codes (#23 item 11)."""

import pytest
from django.urls import reverse
from django.utils import translation

from artworks.labels import group_label
from artworks.models import ArtworkPipelineRun
from tests.artworks.report_factories import make_pipeline_run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_it_names_known_groups_in_the_readers_language_and_capitalises_others():
    assert group_label("american") == "American"
    assert group_label("chinese") == "Chinese"
    assert group_label("south_asian") == "South asian"
    with translation.override("vi"):
        assert group_label("chinese") == translation.gettext("Chinese")


def test_it_names_the_listener_group_without_an_article_and_the_comparisons_in_words(researcher_client):
    run = make_pipeline_run(per_culture=1)
    ArtworkPipelineRun.objects.filter(pk=run.pk).update(limit=1, samples=1)
    artwork = run.collection.artworks.order_by("position").first()

    page = researcher_client.get(reverse("artworks:run_artwork", args=[run.pk, artwork.pk])).content.decode()
    assert "Listener group: American" in page and "Listener group: Chinese" in page
    assert "For a american" not in page

    detail = researcher_client.get(reverse("artworks:run_detail", args=[run.pk])).content.decode()
    assert "groups: American, Chinese" in detail
    assert "only the first artwork" in detail and "first 1 artworks" not in detail
    assert "1 sample, lambda" in detail and "1 samples" not in detail

    report = researcher_client.get(reverse("artworks:report", args=[run.pk])).content.decode()
    assert "Pragmatic speaker against base speaker" in report
    assert "pragmatic_vs_base" not in report
