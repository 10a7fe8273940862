"""The home page: one card per role held, the datasets for anyone with a role, nothing else without one."""

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Dataset
from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER
from tests.conftest import PASSWORD, make_user

NO_ROLE = "Your account has no role yet; ask a researcher or administrator."


def text_of(response) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", response.content.decode(), flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def cards(response) -> list[str]:
    return re.findall(r'<h2 id="role-[a-z]+">(.*?)</h2>', response.content.decode())


@pytest.fixture
def described_dataset(researcher):
    """An empty dataset with a description, as the home page lists it."""
    return Dataset.objects.create(name="Ca dao Nam Bộ", description="Ca dao sưu tầm", created_by=researcher)


def test_it_sends_anonymous_visitors_to_the_login_page(anonymous_client):
    response = anonymous_client.get(reverse("home"))
    assert response.status_code == 302
    assert response.url == reverse("login") + "?next=/"


def test_it_tells_a_user_without_a_role_whom_to_ask_and_nothing_else(outsider_client, described_dataset):
    response = outsider_client.get(reverse("home"))
    assert response.status_code == 200
    page = text_of(response)
    assert NO_ROLE in page
    assert cards(response) == []
    assert "Ca dao Nam Bộ" not in page
    html = response.content.decode()
    for name in ("annotation:dataset_list", "annotation:import_start"):
        assert reverse(name) not in html


def test_it_tells_an_annotator_they_are_in_no_round_yet(annotator_client, described_dataset):
    response = annotator_client.get(reverse("home"))
    assert cards(response) == ["Annotator"]
    page = text_of(response)
    assert "You are not in any round yet. A researcher will add you to one." in page
    assert NO_ROLE not in page
    # Datasets are readable by every role; importing is not offered.
    assert reverse("annotation:dataset_detail", args=[described_dataset.pk]) in response.content.decode()
    assert reverse("annotation:import_start") not in response.content.decode()


def test_it_shows_an_adjudicator_their_card(adjudicator_client, described_dataset):
    response = adjudicator_client.get(reverse("home"))
    assert cards(response) == ["Adjudicator"]
    assert "No locked round has items waiting for adjudication." in text_of(response)
    assert "Ca dao Nam Bộ" in text_of(response)


def test_it_shows_a_researcher_datasets_import_export_and_the_api(researcher_client, described_dataset):
    response = researcher_client.get(reverse("home"))
    assert cards(response) == ["Researcher"]
    html = response.content.decode()
    for url in (reverse("annotation:dataset_list"), reverse("annotation:import_start"), reverse("api-docs")):
        assert f'href="{url}"' in html
    page = text_of(response)
    assert "Export a dataset as CSV or JSONL from its page." in page
    assert f"For an API token, POST your username and password to {reverse('api:token')}" in page
    # Not staff: no admin links.
    assert reverse("admin:index") not in html
    assert "Ca dao Nam Bộ Ca dao sưu tầm 0 researcher" in page


def test_it_shows_every_card_and_the_admin_to_a_superuser(db):
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.org", "x-long-password-1"))
    response = client.get(reverse("home"))
    assert cards(response) == ["Annotator", "Adjudicator", "Researcher"]
    html = response.content.decode()
    assert f'href="{reverse("admin:index")}"' in html
    assert f'href="{reverse("admin:authtoken_tokenproxy_changelist")}"' in html


def test_it_shows_one_card_per_role_held(db):
    client = Client()
    client.force_login(make_user("both", ANNOTATOR, ADJUDICATOR))
    assert cards(client.get(reverse("home"))) == ["Annotator", "Adjudicator"]
    client.force_login(make_user("all_three", ANNOTATOR, ADJUDICATOR, RESEARCHER))
    assert cards(client.get(reverse("home"))) == ["Annotator", "Adjudicator", "Researcher"]


def test_it_shows_at_most_ten_datasets_with_a_link_to_all(researcher_client, researcher):
    Dataset.objects.bulk_create([Dataset(name=f"Bộ {n:02d}", created_by=researcher) for n in range(12)])
    response = researcher_client.get(reverse("home"))
    shown = re.findall(r'<th scope="row"><a [^>]*>(.*?)</a></th>', response.content.decode())
    assert shown == [f"Bộ {n:02d}" for n in range(10)]
    assert "All datasets" in text_of(response)


def test_it_speaks_vietnamese_after_the_switch(annotator_client):
    annotator_client.post(reverse("set_language"), {"language": "vi", "next": "/"})
    response = annotator_client.get(reverse("home"))
    assert cards(response) == ["Người gán nhãn"]
    page = text_of(response)
    assert "Bạn chưa tham gia vòng gán nhãn nào." in page
    assert "Chưa có bộ dữ liệu nào." in page


def test_it_signs_in_through_the_login_page(researcher, anonymous_client):
    page = anonymous_client.get(reverse("login") + "?next=/datasets/")
    assert page.status_code == 200
    assert "Please sign in to see this page." in text_of(page)
    assert 'autocomplete="current-password"' in page.content.decode()
    response = anonymous_client.post(
        reverse("login"), {"username": "researcher", "password": "wrong", "next": "/datasets/"}
    )
    assert response.status_code == 200 and 'role="alert"' in response.content.decode()
    response = anonymous_client.post(
        reverse("login"), {"username": "researcher", "password": PASSWORD, "next": "/datasets/"}
    )
    assert response.status_code == 302 and response.url == "/datasets/"
