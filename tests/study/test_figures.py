"""The study's preference rates (the paper's Figure 3) as SVG and PDF files for a paper: researchers only."""

import pytest
from django.urls import reverse

from study.selectors.results import study_results
from tests import figures
from tests.figures import assert_figure_file, assert_pdf_embeds, assert_pdf_has, assert_svg_has, fetch, glyph_warnings

from .factories import make_study, package_dict
from .test_results import _media, build_scenario  # noqa: F401  (_media: by name)

pytestmark = pytest.mark.django_db

# A title in Vietnamese and Chinese: both scripts in the figure's title.
TITLE = "Nghiên cứu tranh 中国画"


@pytest.fixture
def scenario(_media):  # noqa: F811
    study = make_study(package_dict(slug="figure-study", title=TITLE))
    build_scenario(study)
    return study


def url(study, fmt: str, name: str = "preferences") -> str:
    return reverse("study:results_figure", args=[study.slug, name, fmt])


@pytest.mark.parametrize("fmt", figures.FORMATS)
def test_it_draws_the_preference_rates_with_their_intervals_and_n(scenario, researcher_client, fmt):
    response, caught = fetch(researcher_client, url(scenario, fmt))
    body = assert_figure_file(response, fmt, filename_end="figure-study-preferences")
    assert glyph_warnings(caught) == []
    results = study_results(study=scenario)
    overall = results["preferences"]["comprehension"]
    title = f"Preference for the pragmatic description · {TITLE}"
    valid = f"from {results['participants']['valid']} valid participants"
    if fmt == "svg":
        assert_svg_has(body, title, "Share of choices for the pragmatic description", "Participants")
        assert_svg_has(body, "Comprehension", "Knowledge gain", "All participants", "American", "Chinese")
        assert_svg_has(body, f"{overall['pragmatic_rate']:.2f} (n={overall['n']})", "n = side-by-side choices")
        if overall["ci"]:
            assert body.count(b'id="LineCollection_') >= 1
    else:
        assert_pdf_has(body, title, valid)
        assert_pdf_embeds(body, "DejaVuSans", "NotoSansCJK")


def test_it_counts_test_responses_only_when_asked_as_the_page(scenario, researcher_client):
    response = researcher_client.get(url(scenario, "svg") + "?include_test=1")
    assert_svg_has(assert_figure_file(response, "svg"), "Test responses included.")
    assert "Test responses included." not in researcher_client.get(url(scenario, "svg")).content.decode()
    page = researcher_client.get(reverse("study:results", args=[scenario.slug]) + "?include_test=1").content.decode()
    assert f'href="{url(scenario, "pdf")}?include_test=1"' in page


def test_it_refuses_the_figure_to_everyone_but_researchers(
    scenario, annotator_client, adjudicator_client, outsider_client, anonymous_client
):
    for client in (annotator_client, adjudicator_client, outsider_client):
        assert client.get(url(scenario, "svg")).status_code == 403
    response = anonymous_client.get(url(scenario, "pdf"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_it_answers_404_for_an_unknown_figure_format_or_study(scenario, researcher_client):
    assert researcher_client.get(url(scenario, "svg", name="kendall")).status_code == 404
    assert researcher_client.get(url(scenario, "png")).status_code == 404
    assert (
        researcher_client.get(reverse("study:results_figure", args=["no-such-study", "preferences", "svg"])).status_code
        == 404
    )
