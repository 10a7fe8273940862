"""What a newcomer trips over (#23 item 4): every list and report with nothing in it says what is
missing and links to the next step, instead of an empty table or a screen of zeros."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.services import suggestion_set_create
from core.roles import ANNOTATOR, RESEARCHER
from tests.annotation.factories import make_round
from tests.artworks.report_factories import make_pipeline_run
from tests.conftest import make_user
from tests.evaluation.factories import labelled_csv, make_dataset, make_generation_run
from tests.study.factories import make_study

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def empty_state(client: Client, url: str) -> str:
    """The page's empty state block (the first), failing when the page has none."""
    response = client.get(url)
    assert response.status_code == 200, url
    html = response.content.decode()
    found = re.search(r'<div class="empty-state" data-testid="empty-state">(.*?)</div>', html, re.S)
    assert found, f"{url} has no empty state"
    return found.group(1)


def next_step(client: Client, url: str) -> str:
    """Where the page's empty state sends you."""
    link = re.search(r'<a href="([^"]+)" role="button"', empty_state(client, url))
    assert link, f"the empty state of {url} names no next step"
    return link.group(1).replace("&amp;", "&")


@pytest.fixture
def researcher_(db):
    return client_for(make_user("empty_researcher", RESEARCHER))


def test_it_sends_a_researcher_of_an_empty_site_to_the_first_step_of_each_list(researcher_):
    importing = reverse("annotation:import_start")
    assert next_step(researcher_, reverse("annotation:dataset_list")) == importing
    assert next_step(researcher_, reverse("annotation:round_list")) == importing
    assert next_step(researcher_, reverse("annotation:version_list")) == reverse("annotation:round_list")
    assert next_step(researcher_, reverse("evaluation:run_list")) == importing
    assert next_step(researcher_, reverse("evaluation:run_list") + "?kind=judge") == importing
    generation = reverse("evaluation:run_new", args=["generation"])
    assert next_step(researcher_, reverse("evaluation:scoring_task_list")) == generation
    assert next_step(researcher_, reverse("evaluation:results")) == reverse("evaluation:run_new", args=["judge"])
    collection_import = reverse("artworks:collection_import")
    assert next_step(researcher_, reverse("artworks:collection_list")) == collection_import
    assert next_step(researcher_, reverse("artworks:run_list")) == collection_import
    assert next_step(researcher_, reverse("study:list")) == reverse("study:import")


def test_it_tells_annotators_and_raters_who_gives_them_work(db):
    annotator = client_for(make_user("empty_annotator", ANNOTATOR))
    assert "A researcher adds you to a round" in empty_state(annotator, reverse("annotation:round_list"))
    assert "A researcher assigns you one" in empty_state(annotator, reverse("evaluation:scoring_mine"))
    assert "A researcher imports them" in empty_state(annotator, reverse("annotation:dataset_list"))


def test_it_points_at_the_next_run_once_there_is_a_dataset(researcher_):
    dataset = make_dataset(name="Có dữ liệu", csv=labelled_csv(3))
    assert next_step(researcher_, reverse("annotation:round_list")) == reverse("annotation:round_new")
    generation = reverse("evaluation:run_new", args=["generation"])
    assert next_step(researcher_, reverse("evaluation:run_list")) == generation
    # A judge scores a finished generation run: first that, then the judge.
    judges = reverse("evaluation:run_list") + "?kind=judge"
    assert next_step(researcher_, judges) == generation
    assert "start a generation run first" in empty_state(researcher_, judges)
    assert next_step(researcher_, reverse("evaluation:run_list") + "?kind=classification") == reverse(
        "evaluation:run_new", args=["classification"]
    )
    run = make_generation_run(dataset)
    assert next_step(researcher_, judges) == reverse("evaluation:run_new", args=["judge"])
    assert next_step(researcher_, reverse("evaluation:scoring_task_list")) == reverse("evaluation:scoring_task_new")
    # Its judge-versus-human report has no human score: the scoring task form, for this run.
    report = reverse("evaluation:human_report", args=[run.pk])
    assert next_step(researcher_, report) == reverse("evaluation:scoring_task_new") + f"?run={run.pk}"
    assert "eval-confusion" not in researcher_.get(report).content.decode()


def test_it_shows_no_zeros_for_a_round_without_answers(researcher_):
    annotators = [make_user(f"empty_annotator_{n}", ANNOTATOR) for n in range(2)]
    dataset = make_dataset(name="Vòng trống", csv=labelled_csv(4))
    expressions = list(dataset.expressions.order_by("id"))
    suggestions = suggestion_set_create(
        dataset=dataset, name="gpt", model_name="gpt", predictions=[(e.pk, ["literal"], "") for e in expressions]
    )
    round_ = make_round(dataset, annotators, name="Chưa trả lời", suggestion_set=suggestions)
    detail = reverse("annotation:round_detail", args=[round_.pk])
    stats = reverse("annotation:round_stats", args=[round_.pk])
    assert next_step(researcher_, stats) == detail
    assert "Agreement per label" not in researcher_.get(stats).content.decode()
    quality = reverse("annotation:round_quality", args=[round_.pk])
    assert next_step(researcher_, quality) == detail
    assert 'data-testid="quality-annotators"' not in researcher_.get(quality).content.decode()


def test_it_says_what_comes_before_results_of_a_study_and_an_artwork_run(researcher_):
    study = make_study()
    results = reverse("study:results", args=[study.slug])
    assert next_step(researcher_, results) == reverse("study:detail", args=[study.slug])
    assert 'data-section="participants"' not in researcher_.get(results).content.decode()
    prolific = reverse("prolific:study", args=[study.slug])
    assert next_step(researcher_, prolific) == "#create-heading"
    assert "No submission from Prolific yet." in researcher_.get(prolific).content.decode()
    assert next_step(researcher_, reverse("prolific:log", args=[study.slug])) == prolific

    run = make_pipeline_run(per_culture=0)
    report = reverse("artworks:report", args=[run.pk])
    assert next_step(researcher_, report) == reverse("artworks:run_detail", args=[run.pk])
    assert 'data-testid="table1"' not in researcher_.get(report).content.decode()
    # With a collection to run on, the list points at the form below it.
    assert "empty-state" not in researcher_.get(reverse("artworks:collection_list")).content.decode()
    run.delete()
    assert next_step(researcher_, reverse("artworks:run_list")) == "#new-run-heading"
