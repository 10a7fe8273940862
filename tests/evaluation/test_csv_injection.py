"""Every CSV the evaluation app writes (run reports, the results tables, the judge-versus-human
report) on its page, its API and its command neutralises names a spreadsheet would run as formulas."""

import re

import pytest
from django.urls import reverse

from evaluation.models import Run
from llm.models import ModelConfig
from tests.csv_checks import PAYLOADS, assert_no_formula, export_texts

from . import test_judge_agreement as data

corpus, models_, generation, raters, rated = data.corpus, data.models_, data.generation, data.raters, data.rated

pytestmark = pytest.mark.django_db


@pytest.fixture
def planted(rated):
    """The rated generation run, judged three times; model names and strategies are formulas."""
    judge = data.make_judge(rated, data.JUDGE)
    second = data.make_judge(rated, data.JUDGE_REPEAT, model=ModelConfig.objects.get(name="other-judge"))
    third = data.make_judge(rated, data.JUDGE_REPEAT, seed=1)
    ModelConfig.objects.filter(name="gen-model").update(name=PAYLOADS[0])
    ModelConfig.objects.filter(name="judge-model").update(name=PAYLOADS[2])
    ModelConfig.objects.filter(name="other-judge").update(name=PAYLOADS[3])
    # The generation's strategy is the results table's prompt column; the first judge's stays a real
    # strategy, so the table (which filters on it) has a row.
    Run.objects.filter(pk=rated.pk).update(strategy=PAYLOADS[1])
    Run.objects.filter(pk=second.pk).update(strategy=PAYLOADS[4])
    Run.objects.filter(pk=third.pk).update(strategy=PAYLOADS[5])
    return rated, judge


def test_it_neutralises_the_run_reports(planted, researcher_client):
    generation_run, judge = planted
    for run, names in ((generation_run, PAYLOADS[:2]), (judge, PAYLOADS[2:3])):
        urls = [reverse("evaluation:run_detail", args=[run.pk]), reverse("evaluation-api:run_report", args=[run.pk])]
        for text in export_texts(researcher_client, urls, ("run_report", str(run.pk), "--format", "csv")):
            assert_no_formula(text, planted=names)


def test_it_neutralises_the_results_tables(planted, researcher_client):
    # The page names its table in the query; the API, in the path (and ignores ``table``).
    query = {"format": "csv", "strategy": "zero-shot", "table": "theme"}
    urls = [reverse("evaluation:results"), reverse("evaluation-api:results_table", args=["theme"])]
    for text in export_texts(researcher_client, urls, query=query):
        assert_no_formula(text, planted=PAYLOADS[:2])


def test_it_neutralises_the_human_report_and_keeps_its_numbers(planted, researcher_client):
    generation_run, _judge = planted
    urls = [
        reverse("evaluation:human_report", args=[generation_run.pk]),
        reverse("evaluation-api:human_report", args=[generation_run.pk]),
    ]
    command = ("judge_agreement", "--run", str(generation_run.pk), "--format", "csv")
    for text in export_texts(researcher_client, urls, command):
        cells = assert_no_formula(text, planted=PAYLOADS[2:])
        # Every figure is a number, none made text: a spreadsheet can still sort and average them.
        assert not [cell for cell in cells if re.fullmatch(r"'-[0-9.e-]+", cell)]
