"""Issue 23, item 12: every page names its icon, and /favicon.ico, which browsers ask for on their own, finds it."""

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.urls import reverse

from tests.study.factories import make_study

ICON = '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'


def test_it_redirects_favicon_ico_to_the_static_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == static("favicon.svg")
    icon = finders.find("favicon.svg")
    assert icon is not None
    with open(icon, encoding="utf-8") as svg:
        assert svg.read().startswith("<svg")


@pytest.mark.django_db
def test_it_links_the_icon_from_the_site_and_the_participant_pages(client):
    assert ICON in client.get(reverse("login")).content.decode()
    study = make_study()
    # The participant's pages have their own base template: a link without Prolific's ids.
    page = client.get(reverse("study:entry", args=[study.slug]))
    assert page.status_code == 400
    assert ICON in page.content.decode()
