"""The agreement statistics page, its downloads and its API: who may see them and what they show."""

import io
import json
import re

import pandas as pd
import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.services import round_lock
from core.roles import RESEARCHER
from tests.annotation.test_agreement import TRAITS, build_round

from .factories import add_role, api_client_for, client_for

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning"),
]


@pytest.fixture
def stats_round(annotator_a, annotator_b):
    round_, _labels = build_round(annotators=[annotator_a, annotator_b], name="Vòng một", n_items=16)
    return round_


def page_url(round_, fmt: str = "") -> str:
    url = reverse("annotation:round_stats", args=[round_.pk])
    return f"{url}?format={fmt}" if fmt else url


def api_url(round_) -> str:
    return reverse("api:round_stats", args=[round_.pk])


# --- Permissions --------------------------------------------------------------------------


def test_it_sends_anonymous_visitors_to_the_login_page(stats_round, anonymous_client):
    for fmt in ("", "json", "csv"):
        response = anonymous_client.get(page_url(stats_round, fmt))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("fmt", ["", "json", "csv"])
def test_it_refuses_annotators_and_outsiders_the_page_and_downloads(
    stats_round, annotator_client, outsider_client, fmt
):
    """The statistics reveal the other annotator's labels: no annotator sees them, not even as a download."""
    for client in (annotator_client, outsider_client):
        response = client.get(page_url(stats_round, fmt))
        assert response.status_code == 403
        assert b"cohen_kappa" not in response.content and b"kappa" not in response.content.lower()


def test_it_refuses_the_stats_to_a_researcher_who_annotates_the_open_round(stats_round, annotator_a):
    add_role(annotator_a, RESEARCHER)
    client = client_for(annotator_a)
    assert client.get(page_url(stats_round)).status_code == 403
    assert client.get(page_url(stats_round, "json")).status_code == 403
    api = api_client_for(annotator_a)
    assert api.get(api_url(stats_round)).status_code == 403
    round_lock(round=stats_round)
    assert client.get(page_url(stats_round)).status_code == 200
    assert api.get(api_url(stats_round)).status_code == 200


def test_it_shows_the_page_to_researchers_and_adjudicators(stats_round, researcher_client, adjudicator_client):
    for client in (researcher_client, adjudicator_client):
        response = client.get(page_url(stats_round))
        assert response.status_code == 200
        assert "annotation/round_stats.html" in [t.name for t in response.templates]


def test_it_answers_404_for_an_unknown_round(researcher_client):
    assert researcher_client.get(reverse("annotation:round_stats", args=[999999])).status_code == 404


@pytest.mark.parametrize(
    "persona, status",
    [("anonymous", 401), ("outsider", 403), ("annotator", 403), ("adjudicator", 200), ("researcher", 200)],
)
def test_it_guards_the_api(stats_round, api_as, persona, status):
    response = api_as(persona).get(api_url(stats_round))
    assert response.status_code == status
    if status != 200:
        assert "theme" not in response.json() and "traits" not in response.json()


def test_it_serves_the_api_with_a_token(stats_round, researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    response = client.get(api_url(stats_round))
    assert response.status_code == 200
    assert client.get(reverse("api:round_stats", args=[999999])).status_code == 404


# --- Content ------------------------------------------------------------------------------


def test_it_returns_the_json_contract_from_the_api(stats_round, researcher):
    client = api_client_for(researcher)
    data = client.get(api_url(stats_round)).json()
    assert data["n_items"] == 16
    assert data["annotators"] == ["annotator_a", "annotator_b"]
    assert list(data["traits"]) == TRAITS
    for values in [data["theme"], *data["traits"].values()]:
        assert {"cohen_kappa", "krippendorff_alpha", "percent_agreement", "n"} <= set(values)
    assert data["theme"]["n"] == 16 and data["theme"]["percent_agreement"] == 75.0


def test_it_renders_the_tables_intervals_matrix_and_charts(stats_round, researcher_client):
    response = researcher_client.get(page_url(stats_round))
    html = response.content.decode()
    stats = response.context["stats"]
    kappa = stats["theme"]["cohen_kappa"]
    ci = stats["theme"]["cohen_kappa_ci"]
    assert f"{kappa:.3f}" in html
    assert f"[{ci['low']:.3f}, {ci['high']:.3f}]" in html
    assert "75.0%" in html  # percent agreement on the theme
    for heading in (
        "Agreement per label",
        "Theme confusion matrix",
        "Each annotator against the final labels",
        "Annotators against the LLM suggestions",
        "How much the suggestions shifted labels",
        "Percent of items per trait",
        "Percent of items per theme",
    ):
        assert heading in html
    # The theme names of the taxonomy label the matrix and the charts, with the numbers as text.
    assert "Literal expression" in html and "Love" in html
    assert html.count('class="bar"') == 5 + 7
    assert 'href="?format=json"' in html and 'href="?format=csv"' in html
    # Before adjudication: says so.
    assert "before adjudication" in html
    assert "cdn" not in html.lower() and '<script src="http' not in html


def test_it_explains_undefined_figures_instead_of_printing_nan(annotator_a, annotator_b, researcher_client):
    round_, _labels = build_round(annotators=[annotator_a, annotator_b], name="Tiny", n_items=1, hide=0)
    response = researcher_client.get(page_url(round_))
    html = response.content.decode()
    assert response.status_code == 200
    assert not re.search(r"\bnan\b", html, re.IGNORECASE)
    assert "chance agreement is total" in html and "no interval" in html
    data = json.loads(researcher_client.get(page_url(round_, "json")).content)
    # Nobody marked this trait on the only item: kappa is undefined, not NaN.
    trait = data["traits"]["uncommon_vocabulary"]
    assert trait["cohen_kappa"] is None and trait["reasons"]["cohen_kappa"] == "single_category"
    assert data["theme"]["cohen_kappa_ci"] is None and data["theme"]["reasons"]["cohen_kappa_ci"] == "too_few_items"


def test_it_downloads_json_and_csv_that_pandas_reads(stats_round, researcher_client):
    response = researcher_client.get(page_url(stats_round, "json"))
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert "attachment" in response["Content-Disposition"] and ".json" in response["Content-Disposition"]
    data = json.loads(response.content.decode("utf-8"))
    assert data["round"] == "Vòng một"
    assert "Vòng một" in response.content.decode("utf-8")  # not \u-escaped
    frame = pd.json_normalize(data["theme"])
    assert frame.loc[0, "cohen_kappa"] == pytest.approx(data["theme"]["cohen_kappa"])

    response = researcher_client.get(page_url(stats_round, "csv"))
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    table = pd.read_csv(io.BytesIO(response.content))
    assert list(table["label"]) == ["theme", *TRAITS]
    assert table.loc[0, "cohen_kappa"] == pytest.approx(data["theme"]["cohen_kappa"])
    assert table.loc[0, "percent_agreement"] == pytest.approx(75.0)
    assert table.loc[0, "n"] == 16
    assert {
        "cohen_kappa_ci_low",
        "cohen_kappa_ci_high",
        "krippendorff_alpha",
        "pabak",
        "prevalence_index",
        "bias_index",
    } <= set(table.columns)


def test_it_rejects_an_unknown_download_format(stats_round, researcher_client):
    response = researcher_client.get(page_url(stats_round, "xlsx"))
    assert response.status_code == 400 and "xlsx" in response.content.decode()
