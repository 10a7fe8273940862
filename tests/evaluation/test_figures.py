"""Tables 3-5 and Table 1 (judges and humans) as SVG and PDF files for a paper: researchers only."""

import pytest
from django.urls import reverse

from evaluation.models import ItemStatus, Run, RunItem, RunKind, RunStatus
from evaluation.selectors.report import human_report
from llm.models import ModelConfig
from tests import figures
from tests.figures import assert_figure_file, assert_pdf_embeds, assert_pdf_has, assert_svg_has, fetch, glyph_warnings

from . import test_judge_agreement as data
from .factories import builtin_prompt, make_generation_run, make_judge_run, numbered_dataset, stored_model

# The data fixtures of the statistics tests, shared.
corpus, models_, generation, raters, rated = data.corpus, data.models_, data.generation, data.raters, data.rated
JUDGE, make_judge = data.JUDGE, data.make_judge

pytestmark = pytest.mark.django_db

# A Vietnamese model name generates, a Chinese one judges: both scripts in every figure.
GENERATOR = "mô-hình-việt"
JUDGE_MODEL = "通义千问-judge"


@pytest.fixture
def judged(db):
    dataset = numbered_dataset(6, name="Bộ hình")
    generator = stored_model(name=GENERATOR, model_id="g")
    judge_model = stored_model(name=JUDGE_MODEL, model_id="j")
    run = make_generation_run(dataset, model=generator)
    # Five scored items and one unscored: n = 5.
    judge = make_judge_run(run, {0: 5, 1: 4, 2: 3, 3: 4, 4: 2, 5: None}, model=judge_model)
    classification = Run.objects.create(
        kind=RunKind.CLASSIFICATION,
        model=judge_model,
        prompt=builtin_prompt(RunKind.CLASSIFICATION, "topic"),
        dataset=dataset,
        strategy="topic",
        status=RunStatus.DONE,
    )
    RunItem.objects.bulk_create(
        RunItem(run=classification, expression=expression, status=ItemStatus.DONE, correct=index % 2 == 0)
        for index, expression in enumerate(dataset.expressions.order_by("id"))
    )
    return judge


def results_url(name: str, fmt: str) -> str:
    return reverse("evaluation:results_figure", args=[name, fmt])


@pytest.mark.parametrize("fmt", figures.FORMATS)
def test_it_draws_tables_3_and_4_with_the_scored_n_of_each_judge_run(judged, researcher_client, fmt):
    for name, title, axis in (
        ("theme", "Table 3 · Mean judge score by theme", "Theme"),
        ("trait", "Table 4 · Mean judge score by trait", "Trait"),
    ):
        response, caught = fetch(researcher_client, results_url(name, fmt))
        body = assert_figure_file(response, fmt, filename_end=f"vivid-results-{name}")
        assert glyph_warnings(caught) == []
        legend = f"{GENERATOR} · zero-shot (judge run #{judged.pk}, n = 5)"
        if fmt == "svg":
            assert_svg_has(body, title, "Mean judge score (0–5)", axis, legend, "(strategy aspect, any")
        else:
            assert_pdf_has(body, title, "n = items that judge run scored")
            assert_pdf_embeds(body, "DejaVuSans")


@pytest.mark.parametrize("fmt", figures.FORMATS)
def test_it_draws_table_5_with_n_beside_each_bar(judged, researcher_client, fmt):
    response, caught = fetch(researcher_client, results_url("classification", fmt))
    body = assert_figure_file(response, fmt, filename_end="vivid-results-classification")
    assert glyph_warnings(caught) == []
    if fmt == "svg":
        # Three of six right: 0.500 over n = 6; the Chinese model name is the legend.
        assert_svg_has(body, "Table 5 · Classification accuracy", "Exact-match accuracy (0–1)", "0.500 (n=6)")
        assert_svg_has(body, JUDGE_MODEL, "Task")
    else:
        assert_pdf_has(body, "Table 5 · Classification accuracy", "n = items classified")
        assert_pdf_embeds(body, "DejaVuSans", "NotoSansCJK")


def test_it_keeps_the_pages_filters_in_the_figure(judged, researcher_client):
    other = ModelConfig.objects.get(name=GENERATOR)
    response = researcher_client.get(results_url("theme", "svg") + f"?judge_model={other.pk}&strategy=aspect")
    # No judge run of that model: the figure has no row, and its caption names the filter.
    assert_svg_has(assert_figure_file(response, "svg"), f"(strategy aspect, {GENERATOR})", "0 rows.")
    page = researcher_client.get(reverse("evaluation:results") + "?strategy=aspect").content.decode()
    assert f'href="{results_url("theme", "svg")}?strategy=aspect"' in page


@pytest.mark.parametrize("fmt", figures.FORMATS)
def test_it_draws_table_1_with_the_kappa_intervals(rated, researcher_client, fmt):
    judge = make_judge(rated, JUDGE)
    ModelConfig.objects.filter(name="judge-model").update(name=JUDGE_MODEL)
    url = reverse("evaluation:human_report_figure", args=[rated.pk, "table1", fmt])
    response, caught = fetch(researcher_client, url)
    body = assert_figure_file(response, fmt, filename_end=f"run-{rated.pk}-human-report-table1")
    assert glyph_warnings(caught) == []
    report = human_report(run=rated)
    row = next(r for r in report["table1"] if r["run"] == judge.pk)
    if fmt == "svg":
        assert_svg_has(body, f"Table 1 · Judges and humans · run #{rated.pk}", "Mean score (0–5)", "Cohen's κ")
        assert_svg_has(body, "Human baseline", f"zero-shot · {JUDGE_MODEL} #{judge.pk}", f"(n={row['n']})")
        # The interval is drawn: an error bar (a line collection) per defined interval.
        assert row["cohen_kappa_ci"] is not None and body.count(b'id="LineCollection_') >= 1
    else:
        assert_pdf_has(body, "n = score pairs per row", f"{report['settings']['n_resamples']} resamples")
        assert_pdf_embeds(body, "DejaVuSans", "NotoSansCJK")
    page = researcher_client.get(reverse("evaluation:human_report", args=[rated.pk])).content.decode()
    assert f'href="{url}"' in page


def test_it_refuses_the_figures_to_everyone_but_researchers(
    judged, annotator_client, adjudicator_client, outsider_client, anonymous_client
):
    urls = [results_url("theme", "svg"), results_url("classification", "pdf")]
    urls.append(reverse("evaluation:human_report_figure", args=[judged.source_run_id, "table1", "svg"]))
    for url in urls:
        for client in (annotator_client, adjudicator_client, outsider_client):
            assert client.get(url).status_code == 403, url
        response = anonymous_client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url


def test_it_answers_404_for_an_unknown_figure_format_or_run(judged, researcher_client):
    assert researcher_client.get(results_url("average", "svg")).status_code == 404
    assert researcher_client.get(results_url("theme", "png")).status_code == 404
    assert (
        researcher_client.get(reverse("evaluation:human_report_figure", args=[judged.pk, "table1", "svg"])).status_code
        == 404
    )
    assert (
        researcher_client.get(
            reverse("evaluation:human_report_figure", args=[judged.source_run_id, "table2", "svg"])
        ).status_code
        == 404
    )
