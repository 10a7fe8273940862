"""Table 1 of an artwork pipeline run's report as SVG and PDF files for a paper: researchers only."""

import pytest
from django.urls import reverse

from artworks.selectors.report import artwork_report
from tests import figures
from tests.artworks.report_factories import make_pipeline_run
from tests.figures import assert_figure_file, assert_pdf_embeds, assert_pdf_has, assert_svg_has, fetch, glyph_warnings

pytestmark = pytest.mark.django_db

# A collection named in Vietnamese and Chinese: both scripts in the caption.
COLLECTION = "Bộ sưu tập 中国画"


@pytest.fixture
def figure_run(db):
    return make_pipeline_run(per_culture=2, name=COLLECTION)


def url(run, fmt: str, name: str = "table1") -> str:
    return reverse("artworks:report_figure", args=[run.pk, name, fmt])


@pytest.mark.parametrize("fmt", figures.FORMATS)
def test_it_draws_table_1_with_intervals_and_n(figure_run, researcher_client, fmt):
    response, caught = fetch(researcher_client, url(figure_run, fmt))
    body = assert_figure_file(response, fmt, filename_end=f"artwork-run-{figure_run.pk}-table1")
    assert glyph_warnings(caught) == []
    report = artwork_report(run=figure_run)
    cell = report["qa_accuracy"]["pragmatic"]["unfamiliar"]["attuned"]
    title = f"Table 1 · QA accuracy · artwork run #{figure_run.pk}"
    if fmt == "svg":
        assert_svg_has(body, title, "QA accuracy (0–1)", "Question type · listener", "Pragmatic speaker")
        assert_svg_has(body, "Culturally attuned · Unfamiliar", f"{cell['accuracy']:.3f} (n={cell['n']})")
        assert_svg_has(body, "Bộ sưu tập 中国画")
        # One error bar per cell with answers: 3 conditions x 4 columns.
        assert body.count(b'id="LineCollection_') >= 12
    else:
        assert_pdf_has(body, title, f"{report['run']['n_answers']} in all", COLLECTION)
        assert_pdf_embeds(body, "DejaVuSans", "NotoSansCJK")


def test_it_links_the_chart_to_its_files(figure_run, researcher_client):
    page = researcher_client.get(reverse("artworks:report", args=[figure_run.pk])).content.decode()
    assert f'href="{url(figure_run, "svg")}"' in page and f'href="{url(figure_run, "pdf")}"' in page


def test_it_refuses_the_figure_to_everyone_but_researchers(
    figure_run, annotator_client, adjudicator_client, outsider_client, anonymous_client
):
    for client in (annotator_client, adjudicator_client, outsider_client):
        assert client.get(url(figure_run, "svg")).status_code == 403
    response = anonymous_client.get(url(figure_run, "pdf"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_it_answers_404_for_an_unknown_figure_format_or_run(figure_run, researcher_client):
    assert researcher_client.get(url(figure_run, "svg", name="table2")).status_code == 404
    assert researcher_client.get(url(figure_run, "eps")).status_code == 404
    assert researcher_client.get(reverse("artworks:report_figure", args=[999999, "table1", "svg"])).status_code == 404
    # The report's own ?format= stays JSON or CSV: a figure has its own URL.
    assert researcher_client.get(reverse("artworks:report", args=[figure_run.pk]) + "?format=svg").status_code == 400
