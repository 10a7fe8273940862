"""Every create of the evaluation app is safe to repeat: a run (form, API, "repeat this judge run") and a
scoring task (form, API). The same idempotency key gives back what the first request created."""

import re
import time

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from evaluation.models import Run, RunKind, ScoringTask
from evaluation.services import run_start
from evaluation.services.runs import lifecycle as runs_lifecycle
from llm.models import ModelConfig
from tests.concurrency import at_the_same_instant

from . import test_judge_agreement as data
from .factories import make_generation_run, make_model, numbered_dataset

# The data fixtures of the statistics tests, shared.
corpus, models_, generation, raters, rated = data.corpus, data.models_, data.generation, data.raters, data.rated

KEY = "evaluation-key-0001"


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def rendered_key(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return re.search(r'name="idempotency_key" value="([^"]+)"', response.content.decode()).group(1)


# --- Runs ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_answers_a_repeated_run_create_with_the_first_run(researcher, dataset, model):
    body = {"kind": "generation", "model": model.name, "prompt": "zero-shot", "dataset": dataset.pk, "limit": 2}
    first = api(researcher).post(reverse("evaluation-api:run_list"), body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    again = api(researcher).post(reverse("evaluation-api:run_list"), body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_it_starts_a_run_per_request_without_a_key_or_with_a_new_one(researcher, dataset, model):
    body = {"kind": "generation", "model": model.name, "prompt": "zero-shot", "dataset": dataset.pk, "limit": 2}
    url = reverse("evaluation-api:run_list")
    assert api(researcher).post(url, body, format="json").status_code == 201
    assert api(researcher).post(url, body, format="json").status_code == 201
    assert api(researcher).post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=KEY).status_code == 201
    assert api(researcher).post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=KEY + "2").status_code == 201
    assert Run.objects.count() == 4


@pytest.mark.django_db
def test_it_refuses_a_malformed_idempotency_key_header(researcher, dataset, model):
    body = {"kind": "generation", "model": model.name, "prompt": "zero-shot", "dataset": dataset.pk}
    response = api(researcher).post(
        reverse("evaluation-api:run_list"), body, format="json", HTTP_IDEMPOTENCY_KEY="no spaces"
    )
    assert response.status_code == 400 and "idempotency_key" in response.json()
    assert not Run.objects.exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_starts_one_run_when_two_requests_with_one_key_arrive_at_the_same_instant(
    researcher,
    dataset,
    monkeypatch,
):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")
    monkeypatch.setattr(runs_lifecycle, "run_execute_enqueue", lambda run_id: None)
    real_versions = runs_lifecycle.package_versions

    def slow_versions():
        # Hold the first request's claim open long enough that the second arrives while it works.
        time.sleep(0.3)
        return real_versions()

    monkeypatch.setattr(runs_lifecycle, "package_versions", slow_versions)
    race_model = make_model("race", model_id="m")

    def request():
        return run_start(
            kind=RunKind.GENERATION,
            model=race_model,
            prompt_name="zero-shot",
            dataset=dataset,
            user=researcher,
            idempotency_key=KEY,
        )

    runs, errors = at_the_same_instant(request, request)

    assert errors == []
    assert runs[0].pk == runs[1].pk
    assert sorted(run.idempotent_repeat for run in runs) == [False, True]
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_it_repeats_a_judge_run_once_for_a_double_submit(rated, researcher_client):
    judge = data.make_judge(rated, data.JUDGE, seed=0)
    page = reverse("evaluation:human_report", args=[rated.pk])
    html = researcher_client.get(page).content.decode()
    form = re.search(r"<form[^>]*report-repeat.*?</form>", html, flags=re.S).group(0)
    key = re.search(r'name="idempotency_key" value="([^"]+)"', form).group(1)
    assert re.search(rf'name="judge_run" value="{judge.pk}"', form)

    url = reverse("evaluation:human_report_repeat", args=[rated.pk])
    first = researcher_client.post(url, {"judge_run": judge.pk, "idempotency_key": key})
    again = researcher_client.post(url, {"judge_run": judge.pk, "idempotency_key": key})

    assert first.status_code == again.status_code == 302 and first["Location"] == again["Location"] == page
    repeats = Run.objects.filter(kind="judge").exclude(pk=judge.pk)
    assert repeats.count() == 1 and repeats.get().params["seed"] == 1


# --- Scoring tasks ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_creates_one_scoring_task_for_a_double_submit(researcher_client, annotator_a, annotator_b):
    run = make_generation_run(numbered_dataset(30))
    url = reverse("evaluation:scoring_task_new")
    form = {
        "idempotency_key": rendered_key(researcher_client, url),
        "name": "Twice",
        "run": run.pk,
        "raters": [annotator_a.pk, annotator_b.pk],
        "n_items": 20,
        "n_shared": 5,
        "seed": 1,
    }
    first = researcher_client.post(url, form)
    again = researcher_client.post(url, form)

    task = ScoringTask.objects.get()
    detail = reverse("evaluation:scoring_task_detail", args=[task.pk])
    assert first.status_code == again.status_code == 302 and first["Location"] == again["Location"] == detail


@pytest.mark.django_db
def test_it_answers_a_repeated_scoring_task_create_with_the_first_task(researcher, annotator_a):
    run = make_generation_run(numbered_dataset(30))
    body = {"name": "Retried", "run": run.pk, "raters": ["annotator_a"], "n_items": 10, "n_shared": 2, "seed": 4}
    url = reverse("evaluation-api:scoring_task_list")
    first = api(researcher).post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    again = api(researcher).post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert ScoringTask.objects.count() == 1


# --- Models -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_registers_one_model_for_a_double_submit(researcher_client):
    url = reverse("llm:model_new")
    form = {
        "idempotency_key": rendered_key(researcher_client, url),
        "name": "twice",
        "provider": "openai",
        "model_id": "m",
        "base_url": "http://127.0.0.1:9/v1",
        "max_concurrency": 2,
        "timeout": 30,
    }
    first = researcher_client.post(url, form)
    again = researcher_client.post(url, form)

    assert first.status_code == again.status_code == 302
    assert first["Location"] == again["Location"] == reverse("llm:model_list")
    assert ModelConfig.objects.filter(name="twice").count() == 1


@pytest.mark.django_db
def test_it_answers_a_repeated_model_create_with_the_first_model(researcher):
    body = {"name": "retried", "provider": "openai", "model_id": "m", "base_url": "http://127.0.0.1:9/v1"}
    url = reverse("llm-api:model_list")
    first = api(researcher).post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    again = api(researcher).post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert ModelConfig.objects.filter(name="retried").count() == 1
