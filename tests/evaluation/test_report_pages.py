"""The judge-versus-human report page, its downloads, its API and "repeat this judge run": researchers only."""

import csv
import io
import json

import pytest
from django.urls import reverse

from evaluation.models import Run
from evaluation.selectors.report import human_report

from . import test_judge_agreement as data
from .factories import make_generation_run

# The data fixtures of the statistics tests, shared.
corpus, models_, generation, raters, rated = data.corpus, data.models_, data.generation, data.raters, data.rated
JUDGE, JUDGE_REPEAT, make_judge = data.JUDGE, data.JUDGE_REPEAT, data.make_judge

pytestmark = pytest.mark.django_db


def page_url(run):
    return reverse("evaluation:human_report", args=[run.pk])


def api_url(run):
    return reverse("evaluation-api:human_report", args=[run.pk])


def test_it_shows_the_report_only_to_researchers(
    rated, annotator_client, adjudicator_client, outsider_client, anonymous_client
):
    judge = make_judge(rated, JUDGE)
    for url in (page_url(rated), page_url(rated) + "?format=json", page_url(rated) + "?format=csv"):
        for client in (annotator_client, adjudicator_client, outsider_client):
            assert client.get(url).status_code == 403, url
        response = anonymous_client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
    repeat = reverse("evaluation:human_report_repeat", args=[rated.pk])
    for client in (annotator_client, adjudicator_client, outsider_client):
        assert client.post(repeat, {"judge_run": judge.pk}).status_code == 403
    assert anonymous_client.post(repeat, {"judge_run": judge.pk}).status_code == 302
    assert Run.objects.filter(kind="judge").count() == 1


def test_it_answers_the_api_only_to_researchers(
    rated, annotator_client, adjudicator_client, outsider_client, anonymous_client
):
    for client in (annotator_client, adjudicator_client, outsider_client):
        assert client.get(api_url(rated)).status_code == 403
    response = anonymous_client.get(api_url(rated))
    assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Token")


def test_it_renders_table_1_the_chart_and_each_judge(rated, researcher_client):
    judge = make_judge(rated, JUDGE)
    response = researcher_client.get(page_url(rated))
    assert response.status_code == 200
    html = response.content.decode()
    report = human_report(run=rated)
    kappa = report["judges"][str(judge.pk)]["cohen_kappa"]
    low, high = report["judges"][str(judge.pk)]["cohen_kappa_ci"]
    assert 'data-row="human"' in html and f'data-run="{judge.pk}"' in html
    assert f"{kappa:.3f}" in html and f"[{low:.3f}, {high:.3f}]" in html
    assert 'data-chart="mean"' in html and 'data-chart="kappa"' in html
    assert f"{report['human']['inter_rater']['cohen_kappa']:.3f}" in html
    # The disagreements open the judge item page.
    first = report["disagreements"][str(judge.pk)][0]
    assert reverse("evaluation:item_detail", args=[judge.pk, first["judge_item"]]) in html
    assert "rater_a" in html
    assert "https://cdn" not in html


def test_it_says_what_is_missing_instead_of_showing_empty_figures(generation, researcher_client):
    """No human score yet: what is missing and the form that asks for it, not matrices of zeros."""
    html = researcher_client.get(page_url(generation)).content.decode()
    assert "No human scores for this run yet" in html
    new_task = reverse("evaluation:scoring_task_new") + f"?run={generation.pk}"
    assert f'href="{new_task}"' in html and ">New scoring task</a>" in html
    assert 'data-testid="table1"' not in html and "eval-confusion" not in html and "no pairs" not in html
    assert "No finished judge run on this run yet." in html
    judge_new = reverse("evaluation:run_new", args=["judge"]) + f"?source_run={generation.pk}"
    assert f'href="{judge_new}"' in html


def test_it_downloads_the_report_as_json_and_csv(rated, researcher_client):
    judge = make_judge(rated, JUDGE)
    response = researcher_client.get(page_url(rated) + "?format=json")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    assert "attachment" in response["Content-Disposition"]
    data = json.loads(response.content)
    assert data["judges"][str(judge.pk)]["n"] == human_report(run=rated)["judges"][str(judge.pk)]["n"]
    response = researcher_client.get(page_url(rated) + "?format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["id"] for r in rows] == [str(judge.pk), "human"]
    assert researcher_client.get(page_url(rated) + "?format=xml").status_code == 400


def test_it_serves_the_same_json_over_the_api(rated, researcher_client):
    judge = make_judge(rated, JUDGE)
    response = researcher_client.get(api_url(rated))
    assert response.status_code == 200
    assert response.json() == json.loads(json.dumps(human_report(run=rated)))
    assert set(response.json()["judges"]) == {str(judge.pk)}
    csv_response = researcher_client.get(api_url(rated) + "?format=csv")
    assert csv_response["Content-Type"].startswith("text/csv") and "human" in csv_response.content.decode()
    assert researcher_client.get(api_url(rated) + "?format=xml").status_code == 400


def test_it_answers_404_for_a_run_that_is_not_a_generation_run(rated, researcher_client):
    judge = make_judge(rated, JUDGE)
    assert researcher_client.get(page_url(judge)).status_code == 404
    assert researcher_client.get(api_url(judge)).status_code == 404
    assert researcher_client.get(reverse("evaluation:human_report", args=[999999])).status_code == 404


def test_it_repeats_a_judge_run_with_the_next_seed(rated, researcher_client):
    first = make_judge(rated, JUDGE, seed=0)
    make_judge(rated, JUDGE_REPEAT, seed=4)
    response = researcher_client.post(
        reverse("evaluation:human_report_repeat", args=[rated.pk]), {"judge_run": first.pk}
    )
    assert response.status_code == 302 and response["Location"] == page_url(rated)
    repeat = Run.objects.filter(kind="judge").order_by("-id").first()
    assert repeat.pk not in (first.pk,) and repeat.params["seed"] == 5
    assert repeat.strategy == first.strategy and repeat.model_id == first.model_id and repeat.source_run_id == rated.pk
    assert repeat.params["temperature"] == 0.0
    assert repeat.items.count() == rated.items.filter(status="done").count()


def test_it_refuses_to_repeat_a_judge_run_of_another_run(rated, researcher_client):
    judge = make_judge(rated, JUDGE)
    other = make_generation_run(rated.dataset, model=rated.model)
    url = reverse("evaluation:human_report_repeat", args=[other.pk])
    assert researcher_client.post(url, {"judge_run": judge.pk}).status_code == 404
    assert researcher_client.post(url, {}).status_code == 400


def test_it_links_the_report_from_a_generation_run(rated, researcher_client):
    html = researcher_client.get(reverse("evaluation:run_detail", args=[rated.pk])).content.decode()
    assert page_url(rated) in html
