"""The results page, its downloads and the results API: researchers only."""

import io
import json

import pandas as pd
import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from study.selectors.results import EXPORT_COLUMNS, study_export_rows, study_results

from .factories import make_study, package_dict
from .test_results import PRAGMATIC_CHOSEN, _expected, _media, build_scenario  # noqa: F401  (_media: by name)

pytestmark = pytest.mark.django_db


@pytest.fixture
def scenario(_media):  # noqa: F811
    study = make_study(package_dict(slug="page-study"))
    build_scenario(study)
    return study


def streamed(response) -> str:
    """The text of a download sent as it is written."""
    return b"".join(response.streaming_content).decode()


def page_urls(study) -> list[str]:
    results = reverse("study:results", args=[study.slug])
    export = reverse("study:export", args=[study.slug])
    return [results, results + "?format=json", results + "?include_test=1", export, export + "?raw_pid=1"]


def api_urls(study) -> list[str]:
    return [
        reverse("study_api:results", args=[study.slug]),
        reverse("study_api:responses", args=[study.slug]),
        reverse("study_api:responses", args=[study.slug]) + "?format=csv&raw_pid=1",
    ]


def test_it_shows_results_and_exports_only_to_researchers(
    scenario, annotator_client, adjudicator_client, outsider_client, anonymous_client
):
    for url in page_urls(scenario):
        for client in (annotator_client, adjudicator_client, outsider_client):
            assert client.get(url).status_code == 403, url
        response = anonymous_client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url


def test_it_answers_the_api_only_to_researchers(scenario, annotator_client, outsider_client, anonymous_client):
    for url in api_urls(scenario):
        for client in (annotator_client, outsider_client):
            assert client.get(url).status_code == 403, url
        response = anonymous_client.get(url)
        assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Token"), url


def test_it_renders_counts_figure_and_tables(scenario, researcher_client):
    response = researcher_client.get(reverse("study:results", args=[scenario.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html and 'id="results-body"' in html
    assert '<tr data-group="all">' in html and 'data-count="valid">3<' in html
    assert 'data-count="excluded_qc">1<' in html and 'data-count="returned">3<' in html
    # Figure 3: a bar per question and group, with its rate and interval as text too.
    assert html.count('data-criterion="comprehension"') == 3
    assert '<svg role="img"' in html and 'width="240.00"' in html  # 0.8 of the 300-unit scale
    # The interval over participants of 4 of 5 choices, from the reference bootstrap, rounded as the page does.
    _rate, _n, (low, high) = _expected(scenario, PRAGMATIC_CHOSEN["comprehension"])
    assert f"[{floatformat(low, 3)}, {floatformat(high, 3)}]" in html
    # One Chinese participant: the rate, and a dash for the interval (none over a single person).
    chinese = html.split('data-criterion="comprehension" data-bar="2"', 1)[1].split("</tr>", 1)[0]
    assert ">0.500<" in chinese and ">—<" in chinese and "[, ]" not in html
    assert 'data-position="left"' in html and "0.667" in html
    assert all(f'data-qa="{key}"' in html for key in ("all", "pragmatic", "base", "group-american", "group-chinese"))
    assert 'data-kendall="qa_gain"' in html
    assert "personal data" in html
    assert reverse("study:export", args=[scenario.slug]) + "?raw_pid=1" in html
    assert "https://cdn" not in html


def test_it_swaps_only_the_fragment_when_test_responses_are_toggled(scenario, researcher_client):
    url = reverse("study:results", args=[scenario.slug])
    response = researcher_client.get(url + "?include_test=1", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "Test responses are included" in html
    assert 'data-count="completed">4<' in html
    assert "?include_test=1" in html  # the downloads follow the toggle
    plain = researcher_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert 'data-count="completed">3<' in plain and "Test responses are included" not in plain


def test_it_downloads_results_as_json(scenario, researcher_client):
    response = researcher_client.get(reverse("study:results", args=[scenario.slug]) + "?format=json")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    assert "page-study-results.json" in response["Content-Disposition"]
    data = json.loads(response.content)
    assert data["preferences"]["comprehension"] == study_results(study=scenario)["preferences"]["comprehension"]
    bad = researcher_client.get(reverse("study:results", args=[scenario.slug]) + "?format=xml")
    assert bad.status_code == 400


def test_it_downloads_the_long_format_csv(scenario, researcher_client):
    response = researcher_client.get(reverse("study:export", args=[scenario.slug]))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert 'filename="page-study-responses.csv"' in response["Content-Disposition"]
    assert response.streaming and response["X-Content-Type-Options"] == "nosniff"
    frame = pd.read_csv(io.StringIO(streamed(response)))
    assert list(frame.columns) == EXPORT_COLUMNS and len(frame) == len(study_export_rows(study=scenario))
    raw = pd.read_csv(
        io.StringIO(
            streamed(researcher_client.get(reverse("study:export", args=[scenario.slug]) + "?raw_pid=1&include_test=1"))
        )
    )
    assert "P9" in set(raw["prolific_pid"]) and len(raw) == len(frame) + 7


def test_it_answers_404_for_an_unknown_study(researcher_client):
    assert researcher_client.get(reverse("study:results", args=["nope"])).status_code == 404
    assert researcher_client.get(reverse("study:export", args=["nope"])).status_code == 404
    assert researcher_client.get(reverse("study_api:results", args=["nope"])).status_code == 404


def test_it_serves_results_over_the_api(scenario, researcher_client):
    response = researcher_client.get(reverse("study_api:results", args=[scenario.slug]))
    assert response.status_code == 200
    data = response.json()
    assert data["participants"]["valid"] == 3 and data["include_test"] is False
    assert data["position_bias"]["n"] == 15
    with_test = researcher_client.get(reverse("study_api:results", args=[scenario.slug]) + "?include_test=1").json()
    assert with_test["participants"]["completed"] == 4


def test_it_pages_the_responses_over_the_api(scenario, researcher_client):
    url = reverse("study_api:responses", args=[scenario.slug])
    total = len(study_export_rows(study=scenario))
    first = researcher_client.get(url + "?page_size=10").json()
    assert first["count"] == total and len(first["results"]) == 10 and first["next"]
    assert list(first["results"][0]) == EXPORT_COLUMNS
    raw = researcher_client.get(url + "?raw_pid=1&page_size=1000").json()
    assert len(raw["results"]) == total and {row["prolific_pid"] for row in raw["results"]} == {"P1", "P2", "P3", "P4"}
    csv = researcher_client.get(url + "?format=csv")
    assert csv.status_code == 200 and csv["Content-Type"].startswith("text/csv")
    assert len(pd.read_csv(io.StringIO(streamed(csv)))) == total
    assert researcher_client.get(url + "?format=xml").status_code == 400
    # DRF's "last" stays a page; other words and zero are not.
    last = researcher_client.get(url + "?page_size=10&page=last").json()
    assert last["results"] == researcher_client.get(url + f"?page_size=10&page={-(-total // 10)}").json()["results"]
    for bad in ("first", "0", "-1"):
        assert researcher_client.get(url + f"?page={bad}").status_code == 404, bad


def test_it_refuses_flags_and_page_sizes_the_schema_does_not_allow(scenario, researcher_client):
    results = reverse("study_api:results", args=[scenario.slug])
    responses = reverse("study_api:responses", args=[scenario.slug])
    for bad in (results + "?include_test=maybe", responses + "?raw_pid=2", responses + "?include_test="):
        response = researcher_client.get(bad)
        assert response.status_code == 400, bad
    for bad in ("0", "1001", "0.5", "ten"):
        response = researcher_client.get(responses + f"?page_size={bad}")
        assert response.status_code == 400 and "page_size" in response.json(), bad
    assert researcher_client.get(results + "?include_test=yes").json()["participants"]["completed"] == 4


def test_it_says_what_the_intervals_resampled_on_the_page_and_in_the_json(scenario, researcher_client):
    url = reverse("study:results", args=[scenario.slug])
    html = researcher_client.get(url).content.decode()
    assert 'data-interval-method="participants"' in html
    assert "95% intervals: bootstrap over participants (2,000 resamples)" in html
    # Next to each figure and table with intervals: Figure 3, Table 3 and Kendall's tau.
    for section in ("preferences", "qa", "kendall"):
        body = html.split(f'data-section="{section}"', 1)[1].split("</section>", 1)[0]
        assert 'data-interval-method="participants"' in body, section
    figure = html.split('data-chart="preferences"', 1)[1].split("</figure>", 1)[0]
    assert "bootstrap over participants" in figure.split("<figcaption", 1)[1]
    assert "Wilson" not in html and "Every interval is a 95% percentile bootstrap over participants" in html
    method = {"bootstrap": "participants", "resamples": 2000, "confidence": 0.95, "method": "percentile"}
    for data in (
        json.loads(researcher_client.get(url + "?format=json").content),
        researcher_client.get(reverse("study_api:results", args=[scenario.slug])).json(),
    ):
        assert method.items() <= data["interval_method"].items()
        assert set(data["interval_method"]["bootstrapped"]) == {
            "preferences",
            "position_bias",
            "qa_accuracy",
            "qc_accuracy",
            "kendall",
        }


def test_it_serves_full_precision_and_rounds_only_on_the_page(scenario, researcher_client):
    url = reverse("study:results", args=[scenario.slug])
    data = json.loads(researcher_client.get(url + "?format=json").content)
    # Two of the three American choices on prior knowledge went to the base description.
    prior = data["preferences"]["by_group"]["american"]["prior_knowledge"]
    assert prior["pragmatic_rate"] == 1 / 3
    assert data["position_bias"]["left_rate"] == 10 / 15
    api = researcher_client.get(reverse("study_api:results", args=[scenario.slug])).json()
    assert api["position_bias"] == data["position_bias"]
    html = researcher_client.get(url).content.decode()
    assert "0.667" in html and str(10 / 15) not in html
