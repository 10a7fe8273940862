"""The Table 1 report of an artwork pipeline run: numbers, JSON contract, CSV, page, API, CLI, access."""

import io
import json
import math

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse
from scipy.stats import ttest_ind

from artworks.selectors.report import artwork_report, artwork_report_csv, welch_test
from tests.artworks.report_factories import BASE_SCORE, CORRECT, make_pipeline_run

CSV_HEADER = [
    "condition",
    "familiarity",
    "type",
    "accuracy",
    "n",
    "ci_low",
    "ci_high",
    "vs_base_t",
    "vs_base_p_value",
    "vs_base_direction",
    "mark",
]
# Pragmatic significantly worse than base for unfamiliar listeners on attuned questions (2 of 10 against 10).
WORSE = {**CORRECT, ("base", "unfamiliar", "attuned"): 10, ("pragmatic", "unfamiliar", "attuned"): 2}

pytestmark = pytest.mark.django_db
Z = 1.959963984540054


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    denominator = 1 + Z**2 / n
    centre = (p + Z**2 / (2 * n)) / denominator
    half = Z * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2)) / denominator
    return centre - half, centre + half


def outcomes(cell) -> list[float]:
    n = 10 if cell[2] == "attuned" else 20
    return [1.0] * CORRECT[cell] + [0.0] * (n - CORRECT[cell])


def test_it_computes_accuracy_and_wilson_intervals_per_cell():
    report = artwork_report(run=make_pipeline_run())
    for (condition, familiarity, qtype), k in CORRECT.items():
        cell = report["qa_accuracy"][condition][familiarity][qtype]
        n = 10 if qtype == "attuned" else 20
        assert cell["n"] == n
        assert cell["accuracy"] == pytest.approx(k / n)
        low, high = wilson(k, n)
        assert cell["ci"] == [pytest.approx(low), pytest.approx(high)]
    # A hand-checked cell: 9 of 10.
    assert report["qa_accuracy"]["pragmatic"]["unfamiliar"]["attuned"]["ci"][0] == pytest.approx(0.5958, abs=1e-4)


def test_it_runs_welch_t_tests_that_match_scipy_and_flags_significance():
    report = artwork_report(run=make_pipeline_run())
    test = report["t_test"]["unfamiliar"]["attuned"]["pragmatic_vs_base"]
    expected = ttest_ind(
        outcomes(("pragmatic", "unfamiliar", "attuned")), outcomes(("base", "unfamiliar", "attuned")), equal_var=False
    )
    assert test["t"] == pytest.approx(expected.statistic)
    assert test["p_value"] == pytest.approx(expected.pvalue)
    assert test["p_value"] < 0.05 and test["significant"] is True and test["direction"] == "better"
    assert (test["n_a"], test["n_b"]) == (10, 10)
    not_significant = report["t_test"]["unfamiliar"]["attuned"]["base_vs_no_description"]
    assert not_significant["p_value"] > 0.05 and not_significant["significant"] is False
    # Every answer right in both conditions: no variance, so no test (and no NaN).
    constant = report["t_test"]["familiar"]["attuned"]["pragmatic_vs_base"]
    assert constant == {"t": None, "p_value": None, "significant": False, "direction": None, "n_a": 10, "n_b": 10}


def test_it_leaves_a_test_undefined_when_a_side_is_empty():
    assert welch_test([True, False], []) == {
        "t": None,
        "p_value": None,
        "significant": False,
        "direction": None,
        "n_a": 2,
        "n_b": 0,
    }
    assert welch_test([True], [True, False])["t"] is None


def test_it_keeps_the_json_key_contract():
    run = make_pipeline_run(per_culture=1)
    report = artwork_report(run=run)
    assert set(report) == {"run", "qa_accuracy", "t_test", "by_group", "speaker_scores", "marks"}
    assert set(report["marks"]) == {"†", "‡"}
    assert set(report["qa_accuracy"]) == {"no_description", "base", "pragmatic"}
    for by_familiarity in report["qa_accuracy"].values():
        assert set(by_familiarity) == {"familiar", "unfamiliar"}
        for by_type in by_familiarity.values():
            assert set(by_type) == {"attuned", "agnostic"}
            for cell in by_type.values():
                assert set(cell) == {"accuracy", "n", "ci"}
    for by_type in report["t_test"].values():
        for comparisons in by_type.values():
            assert set(comparisons) == {"pragmatic_vs_base", "pragmatic_vs_no_description", "base_vs_no_description"}
            for test in comparisons.values():
                assert set(test) == {"t", "p_value", "significant", "direction", "n_a", "n_b"}
    assert {"id", "collection", "speaker", "listener", "samples", "lambda", "image_seen"} <= set(report["run"])
    assert report["run"]["speaker"] == "speaker-vlm" and report["run"]["image_seen"] is False
    assert set(report["by_group"]) == {"american", "chinese"}
    assert report["speaker_scores"]["pragmatic"]["mean"] == pytest.approx(0.9)
    assert report["speaker_scores"]["base"]["mean"] == pytest.approx(BASE_SCORE)
    # Strict JSON: no NaN anywhere.
    json.dumps(report, allow_nan=False)


def test_it_reports_empty_cells_as_null_rather_than_zero():
    from artworks.models import ListenerAnswer

    run = make_pipeline_run(per_culture=1)
    ListenerAnswer.objects.filter(run=run, condition="pragmatic").delete()
    report = artwork_report(run=run)
    assert report["qa_accuracy"]["pragmatic"]["familiar"]["attuned"] == {"accuracy": None, "n": 0, "ci": None}
    assert report["t_test"]["familiar"]["agnostic"]["pragmatic_vs_base"]["t"] is None


def test_it_writes_the_csv_in_long_form():
    report = artwork_report(run=make_pipeline_run())
    frame = pd.read_csv(io.StringIO(artwork_report_csv(report)))
    assert list(frame.columns) == CSV_HEADER
    assert len(frame) == 12
    row = frame[(frame.condition == "base") & (frame.familiarity == "unfamiliar") & (frame.type == "attuned")].iloc[0]
    assert row.accuracy == pytest.approx(0.4) and row.n == 10
    assert (row.ci_low, row.ci_high) == (pytest.approx(wilson(4, 10)[0]), pytest.approx(wilson(4, 10)[1]))


def test_it_prints_the_report_from_the_command_line():
    run = make_pipeline_run(per_culture=2)
    out = io.StringIO()
    call_command("artwork_report", str(run.pk), "--format", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["run"]["id"] == run.pk and "qa_accuracy" in data and "t_test" in data
    out = io.StringIO()
    call_command("artwork_report", str(run.pk), "--format", "csv", stdout=out)
    assert out.getvalue().splitlines()[0] == ",".join(CSV_HEADER)


def test_it_shows_the_report_page_with_markers_chart_and_provenance(researcher_client):
    run = make_pipeline_run()
    response = researcher_client.get(reverse("artworks:report", args=[run.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="table1"' in html and "eval-chart" in html
    # † on the pragmatic cell of unfamiliar listeners and attuned questions only.
    assert html.count('class="eval-mark"') >= 1
    cell = html.split('data-cell="pragmatic-unfamiliar-attuned"')[1].split("</td>")[0]
    assert "†" in cell and "0.900" in cell
    assert "†" not in html.split('data-cell="pragmatic-familiar-attuned"')[1].split("</td>")[0]
    assert "speaker-vlm" in html and "listener-vlm" in html
    assert 'data-testid="image-seen"' in html and "title, artist, date and comment" in html
    assert reverse("artworks:export", args=[run.pk]) in html


def test_it_downloads_the_report_as_json_and_csv(researcher_client):
    run = make_pipeline_run(per_culture=1)
    url = reverse("artworks:report", args=[run.pk])
    response = researcher_client.get(url, {"format": "json"})
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    assert "attachment" in response["Content-Disposition"]
    assert set(json.loads(response.content)["qa_accuracy"]) == {"no_description", "base", "pragmatic"}
    response = researcher_client.get(url, {"format": "csv"})
    assert response.status_code == 200 and response.content.decode().startswith("condition,familiarity,type")
    assert researcher_client.get(url, {"format": "xml"}).status_code == 400


def test_it_serves_the_report_over_the_api(researcher_client):
    run = make_pipeline_run(per_culture=1)
    url = reverse("artworks-api:report", args=[run.pk])
    assert url == f"/api/artworks/runs/{run.pk}/report/"
    response = researcher_client.get(url)
    assert response.status_code == 200
    assert response.json()["qa_accuracy"]["base"]["familiar"]["attuned"]["n"] == 2
    csv = researcher_client.get(url, {"format": "csv"})
    assert csv.status_code == 200 and csv["Content-Type"].startswith("text/csv")
    assert researcher_client.get(url, {"format": "xml"}).status_code == 400
    assert researcher_client.get(reverse("artworks-api:report", args=[run.pk + 999])).status_code == 404


def test_it_refuses_the_report_page_and_the_export_to_non_researchers(annotator_client, outsider_client):
    run = make_pipeline_run(per_culture=1)
    for client in (annotator_client, outsider_client):
        assert client.get(reverse("artworks:report", args=[run.pk])).status_code == 403
        assert client.post(reverse("artworks:export", args=[run.pk])).status_code == 403


def test_it_refuses_the_report_api_to_non_researchers(annotator_client, anonymous_client):
    run = make_pipeline_run(per_culture=1)
    url = reverse("artworks-api:report", args=[run.pk])
    assert annotator_client.get(url).status_code == 403
    assert anonymous_client.get(url).status_code == 401


def test_it_sends_anonymous_visitors_of_the_report_page_to_sign_in(anonymous_client):
    run = make_pipeline_run(per_culture=1)
    response = anonymous_client.get(reverse("artworks:report", args=[run.pk]))
    assert response.status_code == 302 and "login" in response["Location"]


def test_it_marks_a_significantly_better_pragmatic_speaker_with_a_dagger_and_keeps_the_p_value(researcher_client):
    run = make_pipeline_run()
    report = artwork_report(run=run)
    test = report["t_test"]["unfamiliar"]["attuned"]["pragmatic_vs_base"]
    expected = ttest_ind(
        outcomes(("pragmatic", "unfamiliar", "attuned")), outcomes(("base", "unfamiliar", "attuned")), equal_var=False
    )
    assert test["direction"] == "better" and test["p_value"] == pytest.approx(expected.pvalue)

    frame = pd.read_csv(io.StringIO(artwork_report_csv(report)), keep_default_na=False)
    row = frame[(frame.condition == "pragmatic") & (frame.familiarity == "unfamiliar") & (frame.type == "attuned")]
    assert row.iloc[0]["mark"] == "†" and row.iloc[0]["vs_base_direction"] == "better"
    assert float(row.iloc[0]["vs_base_p_value"]) == pytest.approx(expected.pvalue)
    # The base and no-description rows carry no test against the base speaker.
    assert set(frame[frame.condition != "pragmatic"]["mark"]) == {""}

    html = researcher_client.get(reverse("artworks:report", args=[run.pk])).content.decode()
    cell = html.split('data-cell="pragmatic-unfamiliar-attuned"')[1].split("</td>")[0]
    assert 'data-mark="better"' in cell and "†" in cell and "‡" not in cell
    assert f"p={expected.pvalue:.3f}" in cell


def test_it_marks_a_significantly_worse_pragmatic_speaker_with_a_double_dagger_never_a_dagger(researcher_client):
    run = make_pipeline_run(correct=WORSE)
    report = artwork_report(run=run)
    test = report["t_test"]["unfamiliar"]["attuned"]["pragmatic_vs_base"]
    assert test["significant"] is True and test["t"] < 0 and test["direction"] == "worse"

    frame = pd.read_csv(io.StringIO(artwork_report_csv(report)), keep_default_na=False)
    row = frame[(frame.condition == "pragmatic") & (frame.familiarity == "unfamiliar") & (frame.type == "attuned")]
    assert row.iloc[0]["mark"] == "‡" and row.iloc[0]["vs_base_direction"] == "worse"
    assert float(row.iloc[0]["vs_base_p_value"]) == pytest.approx(test["p_value"])

    html = researcher_client.get(reverse("artworks:report", args=[run.pk])).content.decode()
    cell = html.split('data-cell="pragmatic-unfamiliar-attuned"')[1].split("</td>")[0]
    assert 'data-mark="worse"' in cell and "‡" in cell and "†" not in cell
    data = researcher_client.get(reverse("artworks-api:report", args=[run.pk])).json()
    assert data["t_test"]["unfamiliar"]["attuned"]["pragmatic_vs_base"]["direction"] == "worse"
