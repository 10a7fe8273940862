"""The evaluation API under /api/evaluation/: researchers only; models, prompts, runs, items, reports, Tables 3-5."""

import io

import pandas as pd
import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.models import ItemStatus, PromptTemplate, Run, RunKind, RunStatus
from evaluation.prompts import BIAS_PROMPTS
from llm.models import ModelConfig

from .factories import make_run
from .test_pages import provider  # noqa: F401 - the fake provider of the pages tests

pytestmark = pytest.mark.django_db


def url(name: str, *args) -> str:
    return reverse(f"evaluation-api:{name}", args=args)


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.fixture
def queued_run(dataset, model):
    return make_run(dataset, model)


def test_it_answers_only_researchers(
    queued_run, annotator_client, adjudicator_client, outsider_client, anonymous_client, researcher_client
):
    item = queued_run.items.first()
    gets = [
        reverse("llm-api:model_list"),
        url("prompt_list"),
        url("run_list"),
        url("run_detail", queued_run.pk),
        url("item_list", queued_run.pk),
        url("item_detail", queued_run.pk, item.pk),
        url("run_report", queued_run.pk),
        url("results_table", "theme"),
        url("results_table", "trait"),
        url("results_table", "classification"),
    ]
    posts = [
        reverse("llm-api:model_list"),
        url("prompt_list"),
        url("run_list"),
        url("run_cancel", queued_run.pk),
        url("run_resume", queued_run.pk),
    ]
    for path in gets:
        assert researcher_client.get(path).status_code == 200, path
    for path in gets + posts:
        method = "post" if path in posts else "get"
        for client in (annotator_client, adjudicator_client, outsider_client):
            assert getattr(client, method)(path, {}).status_code == 403, (method, path)
        response = getattr(anonymous_client, method)(path, {})
        assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Token"), (method, path)
    queued_run.refresh_from_db()
    assert queued_run.status == RunStatus.QUEUED


def test_it_lists_and_adds_models_without_ever_holding_a_key(api, researcher, monkeypatch):
    monkeypatch.setenv("VIVID_MODEL_KEY_API_TEST", "sk-not-to-be-seen")
    response = api.post(
        reverse("llm-api:model_list"),
        {
            "name": "gw",
            "provider": "openai",
            "model_id": "gpt-x",
            "base_url": "http://127.0.0.1:8000/v1",
            "api_key_env": "VIVID_MODEL_KEY_API_TEST",
            "max_concurrency": 2,
            "requests_per_minute": 60,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["api_key_env"] == "VIVID_MODEL_KEY_API_TEST" and body["api_key_set"] is True
    assert (body["max_concurrency"], body["requests_per_minute"], body["timeout"]) == (2, 60, 60.0)
    assert ModelConfig.objects.get(name="gw").created_by == researcher
    listed = api.get(reverse("llm-api:model_list"))
    assert "sk-not-to-be-seen" not in listed.content.decode()
    names = {m["name"]: m for m in listed.json()}
    assert names["smollm2-135m"]["builtin"] is True and names["smollm2-135m"]["api_key_set"] is None
    bad = api.post(
        reverse("llm-api:model_list"),
        {"name": "gw2", "provider": "openai", "model_id": "x", "api_key_env": "sk-123"},
        format="json",
    )
    assert bad.status_code == 400
    assert set(bad.json()) == {"base_url", "api_key_env"}


@pytest.mark.parametrize(
    "body",
    [
        {"name": 0, "kind": "judge", "messages": [{"role": "user", "content": "{phrase}"}]},
        {"name": "n", "kind": "judge", "messages": [{"role": "user", "content": 0}]},
        {"name": "n", "kind": "judge", "messages": [{"role": "user", "content": "{phrase}"}], "reference": 1.5},
    ],
)
def test_it_refuses_a_number_where_the_schema_says_text(api, body):
    # DRF would store the number as its text; the schema says string, so it is the client's mistake.
    response = api.post(url("prompt_list"), body, format="json")
    assert response.status_code == 400
    assert not PromptTemplate.objects.filter(name__in=["0", "n"]).exists()


def test_it_refuses_an_item_filter_that_is_not_a_boolean(api, queued_run):
    items = url("item_list", queued_run.pk)
    assert api.get(items, {"cached": "maybe"}).status_code == 400
    assert api.get(items, {"unscored": "2"}).status_code == 400
    assert api.get(items, {"cached": "true", "unscored": "0"}).status_code == 200


def test_it_lists_prompts_by_kind_and_adds_one(api):
    judges = api.get(url("prompt_list"), {"kind": "judge"}).json()
    # The four strategies, and the judge bias prompts (their paraphrases and the pairwise prompt), all ours but Fig. 7.
    assert {p["name"] for p in judges} == {"zero-shot", "demonstration", "cot", "aspect"} | {
        p["name"] for p in BIAS_PROMPTS
    }
    aspect = next(p for p in judges if p["name"] == "aspect")
    assert aspect["ours"] is False and len(aspect["content_hash"]) == 64 and aspect["messages"][0]["role"] == "user"
    assert all(p["ours"] for p in judges if p["name"] != "aspect")
    messages = [{"role": "system", "content": "Ngắn gọn.\n"}, {"role": "user", "content": "Giải thích {phrase}"}]
    created = api.post(url("prompt_list"), {"name": "mine", "kind": "generation", "messages": messages}, format="json")
    assert created.status_code == 201 and created.json()["messages"] == messages and created.json()["ours"] is True
    again = api.post(
        url("prompt_list"), {"name": "mine again", "kind": "generation", "messages": messages}, format="json"
    )
    assert again.json()["id"] == created.json()["id"]
    assert PromptTemplate.objects.filter(name__startswith="mine").count() == 1
    assert (
        api.post(url("prompt_list"), {"name": "x", "kind": "generation", "messages": []}, format="json").status_code
        == 400
    )


def test_it_runs_generation_judge_and_classification_and_reads_their_items_and_reports(
    api,
    dataset,
    model,
    provider,  # noqa: F811 - imported above
    eager,
    django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            url("run_list"),
            {
                "kind": "generation",
                "model": model.name,
                "prompt": "few-shot",
                "dataset": dataset.pk,
                "temperature": 0.2,
                "seed": 3,
                "limit": 2,
            },
            format="json",
        )
    assert response.status_code == 201, response.json()
    generation = response.json()
    assert generation["kind"] == "generation" and generation["params"] == {
        "temperature": 0.2,
        "max_tokens": 150,
        "seed": 3,
    }
    detail = api.get(url("run_detail", generation["id"])).json()
    assert detail["status"] == "done" and detail["progress"]["n_done"] == 2 and detail["progress"]["percent"] == 100
    assert detail["reproducibility"]["prompt_hash"] == detail["prompt_hash"]
    with django_capture_on_commit_callbacks(execute=True):
        judge = api.post(
            url("run_list"),
            {"kind": "judge", "model": model.name, "prompt": "aspect", "source_run": generation["id"]},
            format="json",
        ).json()
    assert judge["source_run"] == generation["id"] and judge["params"]["temperature"] == 0.0
    items = api.get(url("item_list", judge["id"])).json()
    assert items["count"] == 2 and {i["score"] for i in items["results"]} == {4}
    item = api.get(url("item_detail", judge["id"], items["results"][0]["id"])).json()
    assert item["messages"][-1]["role"] == "user" and "Giải thích mẫu của" in item["messages"][-1]["content"]
    assert item["response"] == "Độ tương đồng tổng thể: 4/5" and item["source_item"] is not None
    report = api.get(url("run_report", judge["id"])).json()
    assert (
        report["run"]["n_done"] == 2 and report["average"] == 4.0 and set(report["by_theme"]) >= {"love", "criticism"}
    )
    frame = pd.read_csv(io.BytesIO(api.get(url("run_report", judge["id"]), {"format": "csv"}).content))
    assert frame.query("section == 'average'")["value"].astype(float).tolist() == [4.0]
    with django_capture_on_commit_callbacks(execute=True):
        classification = api.post(
            url("run_list"),
            {"kind": "classification", "model": model.name, "prompt": "topic", "dataset": dataset.pk},
            format="json",
        ).json()
    report = api.get(url("run_report", classification["id"])).json()
    assert report["task"] == "topic" and 0 <= report["accuracy"] <= 1
    assert [r["id"] for r in api.get(url("run_list"), {"kind": "judge"}).json()] == [judge["id"]]
    wrong = api.post(
        url("run_list"),
        {"kind": "judge", "model": model.name, "prompt": "few-shot", "source_run": generation["id"]},
        format="json",
    )
    assert wrong.status_code == 400 and "prompt" in wrong.json()


def test_it_cancels_resumes_and_filters_items(api, queued_run):
    cancelled = api.post(url("run_cancel", queued_run.pk))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = api.post(url("run_cancel", queued_run.pk))
    assert again.status_code == 400 and "cannot be cancelled" in again.json()["status"][0]
    first = queued_run.items.order_by("id").first()
    queued_run.items.filter(pk=first.pk).update(status=ItemStatus.FAILED, error="400 bad")
    failed = api.get(url("item_list", queued_run.pk), {"status": "failed"}).json()
    assert [i["id"] for i in failed["results"]] == [first.pk] and failed["results"][0]["error"] == "400 bad"
    assert api.get(url("item_list", queued_run.pk), {"status": "nope"}).status_code == 400
    resumed = api.post(url("run_resume", queued_run.pk), {"retry_failed": True}, format="json")
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"
    assert not queued_run.items.filter(status=ItemStatus.FAILED).exists()
    assert api.get(url("run_detail", 99999)).status_code == 404
    assert api.get(url("item_detail", queued_run.pk, 99999)).status_code == 404


def test_it_serves_the_results_tables(api, dataset, model, provider, eager, django_capture_on_commit_callbacks):  # noqa: F811
    with django_capture_on_commit_callbacks(execute=True):
        generation = make_run(dataset, model)
    with django_capture_on_commit_callbacks(execute=True):
        make_run(model=model, kind=RunKind.JUDGE, prompt_name="aspect", source_run=generation)
    theme = api.get(url("results_table", "theme")).json()
    assert theme["columns"][-1] == "average" and len(theme["columns"]) == 8
    assert theme["rows"][0]["model"] == "fake-llm" and theme["rows"][0]["prompt"] == "zero-shot"
    assert theme["rows"][0]["average"] == 4.0 and theme["best"]["average"] == 4.0
    assert api.get(url("results_table", "theme"), {"strategy": "cot"}).json()["rows"] == []
    assert api.get(url("results_table", "theme"), {"judge_model": "smollm2-135m"}).json()["rows"] == []
    assert api.get(url("results_table", "theme"), {"judge_model": "missing"}).status_code == 400
    csv = api.get(url("results_table", "trait"), {"format": "csv"})
    assert csv["Content-Type"].startswith("text/csv")
    assert list(pd.read_csv(io.BytesIO(csv.content)).columns[:3]) == ["model", "prompt", "judge_run"]
    assert api.get(url("results_table", "nope")).status_code == 404
    assert Run.objects.filter(kind=RunKind.JUDGE).count() == 1


def test_it_documents_every_evaluation_endpoint_in_the_schema(api):
    schema = api.get(reverse("api-schema"), {"format": "json"}).json()
    paths = schema["paths"]
    for path in (
        "/api/evaluation/models/",
        "/api/evaluation/prompts/",
        "/api/evaluation/runs/",
        "/api/evaluation/runs/{id}/",
        "/api/evaluation/runs/{id}/cancel/",
        "/api/evaluation/runs/{id}/resume/",
        "/api/evaluation/runs/{id}/items/",
        "/api/evaluation/runs/{run_pk}/items/{id}/",
        "/api/evaluation/runs/{id}/report/",
        "/api/evaluation/results/{table}/",
    ):
        assert path in paths, sorted(p for p in paths if "evaluation" in p)
    assert "post" in paths["/api/evaluation/runs/"] and "post" in paths["/api/evaluation/models/"]
