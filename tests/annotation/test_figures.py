"""A round's charts (label distributions, curation funnel) as SVG and PDF files for a paper."""

import pytest
from django.urls import reverse

from annotation.models import Trait
from annotation.selectors import round_funnel
from annotation.selectors.quality import round_quality
from annotation.selectors.stats import round_agreement_stats
from annotation.services import round_lock
from core.roles import ADJUDICATOR, RESEARCHER
from tests import figures
from tests.annotation.test_agreement import build_round
from tests.figures import assert_figure_file, assert_pdf_embeds, assert_pdf_has, assert_svg_has, fetch, glyph_warnings

from .factories import add_role, client_for, make_annotator

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning"),
]


@pytest.fixture
def figure_round(annotator_a, annotator_b):
    # A trait named in Chinese beside the Vietnamese round name: both scripts in one figure.
    Trait.objects.filter(code="literal").update(name_en="Literal 字面义")
    round_, _labels = build_round(annotators=[annotator_a, annotator_b], name="Vòng một", n_items=16)
    return round_


def url(round_, name: str, fmt: str) -> str:
    return reverse("annotation:round_stats_figure", args=[round_.pk, name, fmt])


@pytest.mark.parametrize("fmt", figures.FORMATS)
@pytest.mark.parametrize("name", ["traits", "themes"])
def test_it_draws_each_distribution_as_a_file(figure_round, researcher_client, name, fmt):
    response, caught = fetch(researcher_client, url(figure_round, name, fmt))
    body = assert_figure_file(response, fmt, filename_end=f"vòng-một-{name}")
    assert glyph_warnings(caught) == []
    n = round_agreement_stats(round=figure_round)["distributions"]["n"]
    title = "Percent of items per trait · Vòng một" if name == "traits" else "Percent of items per theme · Vòng một"
    if fmt == "svg":
        assert_svg_has(body, title, "Percent of items", "Trait" if name == "traits" else "Theme", f"n = {n} ")
        if name == "traits":
            assert_svg_has(body, "Literal 字面义")
    else:
        assert_pdf_has(body, title, f"n = {n} ")
        assert_pdf_embeds(body, "DejaVuSans")
        if name == "traits":
            # The Chinese of the trait's name is drawn with the CJK font, embedded.
            assert_pdf_embeds(body, "NotoSansCJK")


def test_it_links_each_chart_to_its_files(figure_round, researcher_client):
    page = researcher_client.get(reverse("annotation:round_stats", args=[figure_round.pk])).content.decode()
    for name in ("traits", "themes"):
        for fmt in ("svg", "pdf"):
            assert f'href="{url(figure_round, name, fmt)}"' in page


def test_it_refuses_the_figures_to_annotators_outsiders_and_visitors(
    figure_round, annotator_client, outsider_client, anonymous_client
):
    for client in (annotator_client, outsider_client):
        assert client.get(url(figure_round, "traits", "svg")).status_code == 403
    response = anonymous_client.get(url(figure_round, "traits", "pdf"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_it_refuses_the_figures_to_whoever_annotates_the_open_round(figure_round, annotator_a):
    """The blindness rule: the distributions show how the others labelled."""
    add_role(annotator_a, RESEARCHER)
    client = client_for(annotator_a)
    for fmt in ("svg", "pdf"):
        assert client.get(url(figure_round, "themes", fmt)).status_code == 403
    round_lock(round=figure_round)
    assert client.get(url(figure_round, "themes", "svg")).status_code == 200


def test_it_answers_404_for_an_unknown_figure_or_format(figure_round, researcher_client):
    assert researcher_client.get(url(figure_round, "kappa", "svg")).status_code == 404
    assert researcher_client.get(url(figure_round, "traits", "png")).status_code == 404
    assert (
        researcher_client.get(reverse("annotation:round_stats_figure", args=[999999, "traits", "svg"])).status_code
        == 404
    )


@pytest.mark.parametrize("fmt", figures.FORMATS)
def test_it_draws_the_curation_funnel_as_a_file(figure_round, researcher_client, fmt):
    response, caught = fetch(researcher_client, url(figure_round, "funnel", fmt))
    body = assert_figure_file(response, fmt, filename_end="vòng-một-funnel")
    assert glyph_warnings(caught) == []
    funnel = round_funnel(round=figure_round)
    title = "Curation funnel · Vòng một"
    if fmt == "svg":
        assert_svg_has(body, title, "Share of the imported items (%)", "Stage", "Imported into the dataset")
        assert_svg_has(body, f"100% (n={funnel['imported']})", f"n = {funnel['imported']} items imported")
    else:
        assert_pdf_has(body, title, f"n = {funnel['imported']} items imported")
    page = researcher_client.get(reverse("annotation:round_detail", args=[figure_round.pk])).content.decode()
    assert f'href="{url(figure_round, "funnel", fmt)}"' in page


def test_it_refuses_the_funnel_to_whoever_annotates_the_open_round(figure_round, annotator_a):
    add_role(annotator_a, ADJUDICATOR)
    assert client_for(annotator_a).get(url(figure_round, "funnel", "svg")).status_code == 403


@pytest.mark.parametrize("fmt", figures.FORMATS)
def test_it_draws_the_drift_charts_of_the_quality_tab(figure_round, researcher_client, fmt):
    report = round_quality(round=figure_round)
    pair = report["pairs"][0]
    for name, legend in (
        ("drift-pairs", f"{pair['a']} · {pair['b']} (n = {pair['n']})"),
        ("drift-final", f"{pair['a']} (n = {report['annotators'][pair['a']]['n']})"),
    ):
        response, caught = fetch(
            researcher_client, reverse("annotation:round_quality_figure", args=[figure_round.pk, name, fmt])
        )
        body = assert_figure_file(response, fmt, filename_end=f"vòng-một-{name}")
        assert glyph_warnings(caught) == []
        window = f"Window of {report['settings']['window']}"
        if fmt == "svg":
            assert_svg_has(body, "Cohen's κ (theme)", window, legend, "Vòng một", "warning threshold")
        else:
            assert_pdf_has(body, "Vòng một", "n = items", "warning threshold")
    page = researcher_client.get(reverse("annotation:round_quality", args=[figure_round.pk])).content.decode()
    assert reverse("annotation:round_quality_figure", args=[figure_round.pk, "drift-pairs", fmt]) in page


def test_it_refuses_the_drift_charts_to_annotators_and_whoever_annotates_the_open_round(
    figure_round, annotator_a, annotator_client, outsider_client
):
    url_ = reverse("annotation:round_quality_figure", args=[figure_round.pk, "drift-final", "svg"])
    for client in (annotator_client, outsider_client):
        assert client.get(url_).status_code == 403
    add_role(annotator_a, RESEARCHER)
    assert client_for(annotator_a).get(url_).status_code == 403
    assert client_for(annotator_a).get(url_.replace("drift-final", "drift")).status_code in (403, 404)


def test_it_draws_the_pairs_with_the_lowest_kappa_when_a_team_has_too_many_for_one_chart(researcher_client):
    from annotation.selectors.figures import MAX_DRIFT_LINES

    annotators = [make_annotator(f"drift_{i}") for i in range(7)]  # 21 pairs
    round_, _labels = build_round(annotators=annotators, name="Many pairs", n_items=84)
    report = round_quality(round=round_)
    pairs = [p for p in report["pairs"] if any(w["theme_kappa"] is not None for w in p["windows"])]
    assert len(report["pairs"]) > MAX_DRIFT_LINES
    response, _caught = fetch(
        researcher_client, reverse("annotation:round_quality_figure", args=[round_.pk, "drift-pairs", "svg"])
    )
    body = assert_figure_file(response, "svg", filename_end="many-pairs-drift-pairs")
    legends = [f"{p['a']} · {p['b']} (n = {p['n']})" for p in report["pairs"]]
    drawn = [legend for legend in legends if legend in body.decode()]
    assert len(drawn) == MAX_DRIFT_LINES
    lowest = sorted(pairs, key=lambda p: min(w["theme_kappa"] for w in p["windows"] if w["theme_kappa"] is not None))
    assert f"{lowest[0]['a']} · {lowest[0]['b']} (n = {lowest[0]['n']})" in drawn
    assert_svg_has(body, f"the {MAX_DRIFT_LINES} of {len(report['pairs'])} with the lowest window κ")
