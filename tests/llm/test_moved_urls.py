"""The artwork pipeline's old addresses under /evaluation/ answer 308 with the new ones under
/artworks/ (issue #24): bookmarks and scripts keep working, a POST stays a POST."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "old, new",
    [
        ("/evaluation/artwork-runs/", "/artworks/runs/"),
        ("/evaluation/artwork-runs/12/report/?format=csv", "/artworks/runs/12/report/?format=csv"),
        ("/evaluation/collections/3/artworks/4/", "/artworks/collections/3/artworks/4/"),
        ("/api/evaluation/artwork-runs/7/cancel/", "/api/artworks/runs/7/cancel/"),
        ("/api/evaluation/collections/", "/api/artworks/collections/"),
    ],
)
def test_it_sends_an_old_address_to_the_new_one(client, old, new):
    response = client.get(old)
    assert response.status_code == 308 and response["Location"] == new


def test_it_keeps_the_new_addresses_where_the_url_names_say():
    assert reverse("artworks:run_detail", args=[5]) == "/artworks/runs/5/"
    assert reverse("artworks-api:run_resume", args=[5]) == "/api/artworks/runs/5/resume/"
    # The model registry stays where it was.
    assert reverse("llm:model_list") == "/evaluation/models/"
    assert reverse("llm-api:model_list") == "/api/evaluation/models/"
