"""The evaluation pages: models, prompts, runs with their live progress and items, and the paper's Tables 3-5."""

import io
import re
from html import unescape

import pandas as pd
import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Dataset
from evaluation.models import ItemStatus, PromptTemplate, Run, RunItem, RunKind, RunStatus
from evaluation.services.runs import execution as runs_execution
from llm.models import ModelConfig
from llm.providers import Completion

from .factories import make_model, make_run

pytestmark = pytest.mark.django_db


def text_of(response) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", response.content.decode(), flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


class FakeProvider:
    """Replies by a function of the last message; the judge's reply for “Cấy thưa” has no score."""

    def __init__(self):
        self.calls = 0

    def answer(self, text: str) -> str:
        if "Giải thích mẫu của Cấy thưa thừa thóc" in text:
            return "Tôi không chắc."
        if "Giải thích mẫu của" in text:
            return "Độ tương đồng tổng thể: 4/5"
        if "Ăn cháo đá bát" in text and "{" not in text and "chủ đề" in text.lower():
            return "3"
        for phrase in ("Nước chảy đá mòn", "Ăn cháo đá bát", "Thương nhau củ ấu cũng tròn", "Cấy thưa thừa thóc"):
            if text.rstrip().endswith(phrase) or f"\n{phrase}\n" in text:
                # Few-shot replies differ, so judging them is not answered from the response cache.
                return f"Giải thích mẫu của {phrase}." + (" (few-shot)" if "Ví dụ 1" in text else "")
        return "1"

    def complete(self, messages, *, temperature, max_tokens, seed=None, top_logprobs=None):
        self.calls += 1
        return Completion(text=self.answer(messages[-1]["content"]), tokens_in=12, tokens_out=7, fingerprint="fp_pages")

    def describe(self):
        return {"provider": "fake"}


@pytest.fixture
def provider(monkeypatch):
    fake = FakeProvider()
    monkeypatch.setattr(runs_execution, "provider_for", lambda model: fake)
    return fake


@pytest.fixture
def finished_run(dataset, model, provider, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = make_run(dataset, model)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    return run


@pytest.fixture
def judge_run(finished_run, model, provider, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = make_run(model=model, kind=RunKind.JUDGE, prompt_name="aspect", source_run=finished_run)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    return run


@pytest.fixture
def queued_run(dataset, model):
    """A run no worker has picked up (nothing commits inside a test, so nothing is enqueued)."""
    return make_run(dataset, model, prompt_name="few-shot")


def form_key(client, kind: str) -> str:
    """The idempotency key a freshly rendered run form carries."""
    response = client.get(reverse("evaluation:run_new", args=[kind]))
    assert response.status_code == 200
    return re.search(r'name="idempotency_key" value="([^"]+)"', response.content.decode()).group(1)


# --- Permissions -----------------------------------------------------------------------


def page_urls(run: Run, item: RunItem, prompt: PromptTemplate) -> list[str]:
    return [
        reverse("llm:model_list"),
        reverse("llm:model_new"),
        reverse("evaluation:prompt_list"),
        reverse("evaluation:prompt_new"),
        reverse("evaluation:prompt_detail", args=[prompt.pk]),
        reverse("evaluation:run_list"),
        reverse("evaluation:run_new", args=["generation"]),
        reverse("evaluation:run_new", args=["judge"]),
        reverse("evaluation:run_new", args=["classification"]),
        reverse("evaluation:run_detail", args=[run.pk]),
        reverse("evaluation:run_detail", args=[run.pk]) + "?format=csv",
        reverse("evaluation:run_progress", args=[run.pk]),
        reverse("evaluation:item_detail", args=[run.pk, item.pk]),
        reverse("evaluation:results"),
        reverse("evaluation:results") + "?table=theme&format=csv",
    ]


def test_it_shows_every_page_to_researchers_only(
    queued_run, researcher_client, annotator_client, adjudicator_client, outsider_client, anonymous_client
):
    item = queued_run.items.first()
    urls = page_urls(queued_run, item, queued_run.prompt)
    for url in urls:
        assert researcher_client.get(url).status_code == 200, url
        for client in (annotator_client, adjudicator_client, outsider_client):
            assert client.get(url).status_code == 403, url
        response = anonymous_client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
    for name in ("run_cancel", "run_resume"):
        url = reverse(f"evaluation:{name}", args=[queued_run.pk])
        assert annotator_client.post(url).status_code == 403
        assert outsider_client.post(url).status_code == 403
        assert anonymous_client.post(url).status_code == 302
    assert annotator_client.post(reverse("llm:model_new"), {"name": "x"}).status_code == 403
    queued_run.refresh_from_db()
    assert queued_run.status == RunStatus.QUEUED
    assert not ModelConfig.objects.filter(name="x").exists()


def test_it_links_the_evaluation_pages_for_researchers_only(researcher_client, annotator_client):
    runs_url = reverse("evaluation:run_list")
    home = researcher_client.get(reverse("home")).content.decode()
    assert f'href="{runs_url}">Models & runs' in home
    assert reverse("evaluation:results") in home and reverse("llm:model_list") in home
    assert runs_url not in annotator_client.get(reverse("home")).content.decode()


# --- Models ----------------------------------------------------------------------------


def test_it_lists_models_with_the_key_variable_name_but_never_its_value(
    researcher_client, model, monkeypatch, settings
):
    settings.MODEL_BASE_URL_ALLOW = ["llm.example.org"]  # listed, so never resolved: tests stay offline
    settings.MODEL_KEY_HOSTS = {
        "VIVID_MODEL_KEY_TEST": ("llm.example.org",),
        "VIVID_MODEL_KEY_TEST_MISSING": ("llm.example.org",),
    }
    make_model(
        "remote",
        base_url="https://llm.example.org/v1",
        model_id="gpt-x",
        api_key_env="VIVID_MODEL_KEY_TEST",
        max_concurrency=8,
        requests_per_minute=120,
        timeout=30,
    )
    make_model(
        "unset",
        base_url="https://llm.example.org/v1",
        model_id="gpt-y",
        api_key_env="VIVID_MODEL_KEY_TEST_MISSING",
    )
    monkeypatch.setenv("VIVID_MODEL_KEY_TEST", "sk-very-secret-value")
    monkeypatch.delenv("VIVID_MODEL_KEY_TEST_MISSING", raising=False)
    response = researcher_client.get(reverse("llm:model_list"))
    html = response.content.decode()
    assert "sk-very-secret-value" not in html
    remote = re.search(r'<tr data-model="remote"[^>]*>(.*?)</tr>', html, re.S).group(1)
    assert "VIVID_MODEL_KEY_TEST" in remote and ">set<" in remote and "https://llm.example.org/v1" in remote
    assert ">8<" in remote and ">120<" in remote and "30 s" in remote
    unset = re.search(r'<tr data-model="unset"[^>]*>(.*?)</tr>', html, re.S).group(1)
    assert "VIVID_MODEL_KEY_TEST_MISSING" in unset and "not set on the server" in unset
    assert "smollm2-135m" in html  # the built-in model


def test_it_adds_a_model_from_the_form(researcher_client, researcher):
    response = researcher_client.post(
        reverse("llm:model_new"),
        {
            "name": "local-vllm",
            "provider": "openai",
            "model_id": "Qwen/Qwen2.5-7B-Instruct",
            "base_url": "http://127.0.0.1:8000/v1",
            "api_key_env": "VIVID_MODEL_KEY_VLLM",
            "max_concurrency": 6,
            "requests_per_minute": "",
            "timeout": 45,
        },
    )
    assert response.status_code == 302 and response["Location"] == reverse("llm:model_list")
    model = ModelConfig.objects.get(name="local-vllm")
    assert (model.base_url, model.api_key_env, model.max_concurrency, model.requests_per_minute, model.timeout) == (
        "http://127.0.0.1:8000/v1",
        "VIVID_MODEL_KEY_VLLM",
        6,
        None,
        45.0,
    )
    assert model.created_by == researcher and model.slots.count() == 6


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"api_key_env": "sk-abc123"}, "api_key_env", "the name of an environment variable, not the key itself"),
        ({"base_url": ""}, "base_url", "an OpenAI-compatible model needs a base URL"),
        ({"max_concurrency": 0}, "max_concurrency", "greater than or equal to 1"),
        ({"name": "fake-llm"}, "name", "a model named &#x27;fake-llm&#x27; already exists"),
    ],
)
def test_it_shows_the_field_error_of_a_bad_model(researcher_client, model, changes, field, message):
    data = {
        "name": "bad",
        "provider": "openai",
        "model_id": "m",
        "base_url": "http://127.0.0.1:8000/v1",
        "api_key_env": "",
        "max_concurrency": 4,
        "timeout": 60,
        **changes,
    }
    response = researcher_client.post(reverse("llm:model_new"), data)
    assert response.status_code == 400
    html = response.content.decode()
    error_list = re.search(rf'<ul class="errorlist" id="id_{field}_error">(.*?)</ul>', html, re.S)
    assert error_list and message in error_list.group(1), html
    assert ModelConfig.objects.count() == 2  # the built-in one and the fixture's


# --- Prompts ---------------------------------------------------------------------------


def test_it_lists_the_built_in_prompts_by_kind_with_hash_and_origin(researcher_client):
    response = researcher_client.get(reverse("evaluation:prompt_list"))
    html = response.content.decode()
    aspect = PromptTemplate.objects.get(kind="judge", name="aspect", builtin=True)
    cot = PromptTemplate.objects.get(kind="judge", name="cot", builtin=True)
    row = re.search(rf'<tr data-prompt="{aspect.pk}">(.*?)</tr>', html, re.S).group(1)
    assert aspect.content_hash[:12] in row and "VIVID Fig. 7" in row and "paper" in row
    assert "ours" in re.search(rf'<tr data-prompt="{cot.pk}">(.*?)</tr>', html, re.S).group(1)
    sections = re.findall(r'<h2 id="kind-(\w+)">', html)
    assert sections == ["generation", "judge", "classification"]


def test_it_shows_a_prompt_verbatim(researcher_client):
    prompt = PromptTemplate.objects.get(kind="generation", name="few-shot", builtin=True)
    html = researcher_client.get(reverse("evaluation:prompt_detail", args=[prompt.pk])).content.decode()
    content = prompt.messages[0]["content"]
    assert '<pre lang="vi">' + content.replace("“", "“") in unescape(html)
    assert prompt.content_hash in html


def test_it_adds_a_prompt_from_a_system_and_user_pair_and_from_json(researcher_client, researcher):
    url = reverse("evaluation:prompt_new")
    response = researcher_client.post(
        url,
        {
            "name": "terse",
            "kind": "generation",
            "reference": "lab",
            "system": "Bạn là nhà ngôn ngữ học.",
            "user_message": "Giải thích: {phrase}",
        },
    )
    prompt = PromptTemplate.objects.get(name="terse")
    assert response.status_code == 302 and response["Location"] == reverse("evaluation:prompt_detail", args=[prompt.pk])
    assert prompt.messages == [
        {"role": "system", "content": "Bạn là nhà ngôn ngữ học."},
        {"role": "user", "content": "Giải thích: {phrase}"},
    ]
    assert prompt.ours and prompt.created_by == researcher and len(prompt.content_hash) == 64
    response = researcher_client.post(
        url, {"name": "json", "kind": "judge", "messages_json": '[{"role": "user", "content": "Chấm {response}"}]'}
    )
    assert PromptTemplate.objects.get(name="json").messages == [{"role": "user", "content": "Chấm {response}"}]
    response = researcher_client.post(url, {"name": "broken", "kind": "judge", "messages_json": '[{"role": "robot"}]'})
    assert response.status_code == 400
    assert "Each message needs a role" in response.content.decode()
    assert not PromptTemplate.objects.filter(name="broken").exists()


# --- Runs ------------------------------------------------------------------------------


def test_it_starts_a_generation_run_from_the_page_and_a_second_submit_lands_on_it(
    researcher_client, dataset, model, provider, eager, django_capture_on_commit_callbacks
):
    key = form_key(researcher_client, "generation")
    data = {
        "idempotency_key": key,
        "model": model.pk,
        "prompt": "few-shot",
        "dataset": dataset.pk,
        "temperature": 0.5,
        "max_tokens": 120,
        "seed": 7,
        "limit": 3,
    }
    url = reverse("evaluation:run_new", args=["generation"])
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url, data)
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("evaluation:run_detail", args=[run.pk])
    run.refresh_from_db()
    assert (run.kind, run.strategy, run.status, run.limit) == ("generation", "few-shot", RunStatus.DONE, 3)
    assert run.params == {"temperature": 0.5, "max_tokens": 120, "seed": 7}
    assert run.items.filter(status=ItemStatus.DONE).count() == 3 and provider.calls == 3
    again = researcher_client.post(url, data)
    assert again.status_code == 302 and again["Location"] == reverse("evaluation:run_detail", args=[run.pk])
    assert Run.objects.count() == 1 and provider.calls == 3
    page = text_of(researcher_client.get(again["Location"]))
    assert "already submitted" in page and "100%" in page and "3 of 3 items finished" in page


def test_it_refuses_a_run_form_with_a_malformed_idempotency_key(researcher_client, dataset, model):
    response = researcher_client.post(
        reverse("evaluation:run_new", args=["generation"]),
        {
            "idempotency_key": "forged",
            "model": model.pk,
            "prompt": "zero-shot",
            "dataset": dataset.pk,
            "temperature": 0.7,
            "max_tokens": 150,
            "seed": 0,
        },
    )
    assert response.status_code == 400 and "An idempotency key is 8 to 64 letters" in text_of(response)
    assert not Run.objects.exists()
    assert re.search(r'name="idempotency_key" value="[^"]+"', response.content.decode())


def test_it_shows_service_errors_and_lets_the_corrected_form_through(researcher_client, model, provider, eager):
    key = form_key(researcher_client, "generation")
    url = reverse("evaluation:run_new", args=["generation"])
    base = {
        "idempotency_key": key,
        "model": model.pk,
        "prompt": "zero-shot",
        "temperature": 0.7,
        "max_tokens": 150,
        "seed": 0,
    }
    response = researcher_client.post(url, base)
    assert response.status_code == 400 and "Choose a dataset or a frozen version." in text_of(response)
    empty = Dataset.objects.create(name="Empty")
    response = researcher_client.post(url, {**base, "dataset": empty.pk})
    assert response.status_code == 400 and "the run would have no items" in text_of(response)
    assert not Run.objects.exists()


def test_it_starts_a_judge_run_and_shows_the_unscored_count(
    researcher_client, finished_run, model, provider, eager, django_capture_on_commit_callbacks
):
    new_page = researcher_client.get(reverse("evaluation:run_new", args=["judge"]) + f"?source_run={finished_run.pk}")
    assert f'<option value="{finished_run.pk}" selected>' in new_page.content.decode()
    key = form_key(researcher_client, "judge")
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            reverse("evaluation:run_new", args=["judge"]),
            {"idempotency_key": key, "source_run": finished_run.pk, "model": model.pk, "strategy": "aspect", "seed": 0},
        )
    judge = Run.objects.get(kind=RunKind.JUDGE)
    assert response["Location"] == reverse("evaluation:run_detail", args=[judge.pk])
    assert judge.source_run == finished_run and judge.params["temperature"] == 0.0
    html = researcher_client.get(response["Location"]).content.decode()
    assert re.search(r'data-count="unscored"[^>]*>1<', html)
    assert re.search(r'data-count="done">4<', html)
    assert '<strong data-testid="average">4.00</strong>' in html
    unscored = researcher_client.get(response["Location"] + "?items=unscored").content.decode()
    rows = re.findall(r'<tr data-item="(\d+)">', unscored)
    assert len(rows) == 1
    item = RunItem.objects.get(pk=rows[0])
    assert item.score is None and item.expression.text == "Cấy thưa thừa thóc"
    # The generation run's page links its judge run.
    assert (
        reverse("evaluation:run_detail", args=[judge.pk])
        in researcher_client.get(reverse("evaluation:run_detail", args=[finished_run.pk])).content.decode()
    )


def test_it_starts_a_classification_run_and_shows_its_accuracy(
    researcher_client, dataset, model, provider, eager, django_capture_on_commit_callbacks
):
    key = form_key(researcher_client, "classification")
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            reverse("evaluation:run_new", args=["classification"]),
            {"idempotency_key": key, "model": model.pk, "task": "topic", "dataset": dataset.pk, "seed": 0},
        )
    run = Run.objects.get(kind=RunKind.CLASSIFICATION)
    assert response["Location"] == reverse("evaluation:run_detail", args=[run.pk])
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.strategy == "topic"
    n_correct = run.items.filter(correct=True).count()
    html = researcher_client.get(response["Location"]).content.decode()
    expected = f"{100 * n_correct / run.items.count():.1f}%"
    assert f'<strong data-testid="accuracy">{expected}</strong>' in html
    item = run.items.first()
    detail = researcher_client.get(reverse("evaluation:item_detail", args=[run.pk, item.pk])).content.decode()
    assert f"<code>{item.prediction}</code>" in detail and f"<code>{item.gold}</code>" in detail
    assert ("✓ yes" if item.correct else "✗ no") in detail


def test_it_polls_the_progress_while_running_and_stops_when_done(researcher_client, queued_run):
    url = reverse("evaluation:run_progress", args=[queued_run.pk])
    Run.objects.filter(pk=queued_run.pk).update(
        status=RunStatus.RUNNING, started_at=timezone.now() - timezone.timedelta(seconds=30)
    )
    first, second = queued_run.items.order_by("id")[:2]
    RunItem.objects.filter(pk=first.pk).update(status=ItemStatus.DONE, cached=True, response="a")
    RunItem.objects.filter(pk=second.pk).update(
        status=ItemStatus.FAILED, error="400: bad request", tokens_in=300, tokens_out=120
    )
    response = researcher_client.get(url, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="run-progress"') and "<html" not in html
    assert f'hx-get="{url}" hx-trigger="every 1s"' in html
    assert re.search(r'data-count="done">1<', html) and re.search(r'data-count="failed"[^>]*>1<', html)
    assert re.search(r'data-count="cached">1<', html) and re.search(r'data-count="tokens">300 / 120<', html)
    assert "50%" in html and re.search(r'data-count="elapsed">3\d s<', html)
    assert re.search(r'data-count="eta">3\d s<', html)  # two of four in ~30 s: two more take ~30 s
    assert "Cancel the run" in html
    RunItem.objects.filter(run=queued_run, status=ItemStatus.PENDING).update(status=ItemStatus.DONE)
    Run.objects.filter(pk=queued_run.pk).update(status=RunStatus.DONE, finished_at=timezone.now())
    done = researcher_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "hx-trigger" not in done and "The run has finished." in done
    assert re.search(r'data-count="eta">—<', done) and "100%" in done
    page = researcher_client.get(reverse("evaluation:run_detail", args=[queued_run.pk])).content.decode()
    assert "hx-trigger" not in page and "The run has finished." not in page


def test_it_cancels_and_resumes_from_the_page(researcher_client, queued_run):
    detail = reverse("evaluation:run_detail", args=[queued_run.pk])
    assert "Cancel the run" in researcher_client.get(detail).content.decode()
    response = researcher_client.post(reverse("evaluation:run_cancel", args=[queued_run.pk]), follow=True)
    queued_run.refresh_from_db()
    assert queued_run.status == RunStatus.CANCELLED and queued_run.finished_at is not None
    assert "cancelled" in text_of(response) and "Resume" in text_of(response)
    again = researcher_client.post(reverse("evaluation:run_cancel", args=[queued_run.pk]), follow=True)
    assert "cannot be cancelled" in text_of(again)
    RunItem.objects.filter(pk=queued_run.items.first().pk).update(status=ItemStatus.FAILED, error="x")
    response = researcher_client.post(
        reverse("evaluation:run_resume", args=[queued_run.pk]), {"retry_failed": "on"}, follow=True
    )
    queued_run.refresh_from_db()
    assert queued_run.status == RunStatus.QUEUED and queued_run.finished_at is None
    assert not queued_run.items.filter(status=ItemStatus.FAILED).exists()
    assert "resumed" in text_of(response)
    assert researcher_client.get(reverse("evaluation:run_cancel", args=[queued_run.pk])).status_code == 405


def test_it_shows_an_item_with_the_exact_messages_and_the_raw_reply(researcher_client, judge_run):
    item = judge_run.items.select_related("source_item").get(expression__text="Ăn cháo đá bát")
    html = researcher_client.get(reverse("evaluation:item_detail", args=[judge_run.pk, item.pk])).content.decode()
    for message in item.messages:
        assert f'<p class="eval-role">{message["role"]}</p>' in html
        assert f'<pre lang="vi">{message["content"]}</pre>' in unescape(html)
    assert "Giải thích mẫu của Ăn cháo đá bát." in item.messages[-1]["content"]  # the judged reply was sent
    assert '<pre lang="vi" class="eval-reply-full" data-testid="raw-reply">Độ tương đồng tổng thể: 4/5</pre>' in html
    assert "<strong>4</strong> / 5" in html and "12 / 7" in html
    assert reverse("evaluation:item_detail", args=[item.source_item.run_id, item.source_item_id]) in html
    unscored = judge_run.items.get(score__isnull=True)
    html = researcher_client.get(reverse("evaluation:item_detail", args=[judge_run.pk, unscored.pk])).content.decode()
    assert "unscored" in html and "not counted as 0" in html and "Tôi không chắc." in html
    other = judge_run.source_run.items.first()
    assert researcher_client.get(reverse("evaluation:item_detail", args=[judge_run.pk, other.pk])).status_code == 404


def test_it_filters_items_and_downloads_the_report(researcher_client, judge_run):
    url = reverse("evaluation:run_detail", args=[judge_run.pk])
    assert len(re.findall(r'<tr data-item="', researcher_client.get(url).content.decode())) == 4
    assert len(re.findall(r'<tr data-item="', researcher_client.get(url + "?items=failed").content.decode())) == 0
    assert "No item here." in researcher_client.get(url + "?items=cached").content.decode()
    response = researcher_client.get(url + "?format=csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert f'filename="run-{judge_run.pk}-report.csv"' in response["Content-Disposition"]
    frame = pd.read_csv(io.BytesIO(response.content), keep_default_na=False)
    assert list(frame.columns) == ["section", "code", "value"]
    values = {(r.section, r.code): r.value for r in frame.itertuples()}
    assert values[("average", "")] == "4.0" and values[("run", "n_unscored")] == "1"
    assert values[("theme", "criticism")] == "4.0" and values[("theme", "love")] == "4.0"
    assert values[("trait", "pragmatic")] == "4.0" and values[("theme", "work_nature")] == ""
    data = researcher_client.get(url + "?format=json").json()
    assert data["run"]["id"] == judge_run.pk and data["run"]["n_unscored"] == 1 and data["average"] == 4.0
    assert researcher_client.get(url + "?format=xml").status_code == 400


def test_it_shows_the_reproducibility_record(researcher_client, finished_run):
    html = researcher_client.get(reverse("evaluation:run_detail", args=[finished_run.pk])).content.decode()
    assert finished_run.prompt.content_hash in html and "fake-1" in html and "http://127.0.0.1:9/v1" in html
    assert (
        "<code>temperature=0.7</code>" in html
        and "<code>max_tokens=150</code>" in html
        and "<code>seed=0</code>" in html
    )
    assert "fp_pages" in html and "&quot;django&quot;" in html
    assert finished_run.started_at.strftime("%Y-%m-%d") in html


# --- Results ---------------------------------------------------------------------------


@pytest.fixture
def two_judged_runs(dataset, model, provider, eager, django_capture_on_commit_callbacks, monkeypatch):
    """Two generation runs (zero-shot, few-shot) judged by aspect: zero-shot scores 4 everywhere, few-shot 2 or 5."""
    runs = {}
    for prompt_name in ("zero-shot", "few-shot"):
        with django_capture_on_commit_callbacks(execute=True):
            runs[prompt_name] = make_run(dataset, model, prompt_name=prompt_name)
    with django_capture_on_commit_callbacks(execute=True):
        make_run(model=model, kind=RunKind.JUDGE, prompt_name="aspect", source_run=runs["zero-shot"])
    with django_capture_on_commit_callbacks(execute=True):
        make_run(dataset, model, kind=RunKind.CLASSIFICATION, prompt_name="traits")
    few_shot_answers = {
        "Nước chảy đá mòn": "5",
        "Ăn cháo đá bát": "2/5",
        "Thương nhau củ ấu cũng tròn": "5",
        "Cấy thưa thừa thóc": "2",
    }

    def answer(text):
        return next(score for phrase, score in few_shot_answers.items() if f"Giải thích mẫu của {phrase}" in text)

    monkeypatch.setattr(provider, "answer", answer)
    with django_capture_on_commit_callbacks(execute=True):
        make_run(model=model, kind=RunKind.JUDGE, prompt_name="aspect", source_run=runs["few-shot"])
    return runs


def test_it_shows_tables_3_to_5_with_the_best_value_per_column_in_bold(researcher_client, two_judged_runs):
    html = researcher_client.get(reverse("evaluation:results")).content.decode()
    theme = re.search(r'data-table="theme">(.*?)</section>', html, re.S).group(1)
    rows = dict(
        re.findall(
            r'<tr>\s*<th scope="row">.*?</span>fake-llm</th>\s*<td><a [^>]*>([\w-]+)</a></td>(.*?)</tr>', theme, re.S
        )
    )
    assert set(rows) == {"zero-shot", "few-shot"}
    headers = re.findall(r'<th scope="col" class="numeric">([^<]+)</th>', theme)
    assert headers[-1] == "Average" and len(headers) == 8
    cells = {name: re.findall(r'<td class="numeric">(.*?)</td>', row) for name, row in rows.items()}
    column = headers.index("Love")
    assert cells["few-shot"][column] == "<strong>5.00</strong>" and cells["zero-shot"][column] == "4.00"
    column = headers.index("Criticism")
    assert cells["zero-shot"][column] == "<strong>4.00</strong>" and cells["few-shot"][column] == "2.00"
    assert cells["zero-shot"][-1] == "<strong>4.00</strong>" and cells["few-shot"][-1] == "3.50"
    assert cells["zero-shot"][headers.index("Other")] == "—"
    assert 'class="eval-chart"' in theme and 'width="100.0%"' in theme and 'width="80.0%"' in theme
    # One bar per figure; a missing figure draws no bar.
    figures = sum(1 for row in cells.values() for cell in row if cell != "—")
    assert theme.count('class="eval-chart-bar ') == figures == 9  # zero-shot's work_nature item is unscored
    trait = re.search(r'data-table="trait">(.*?)</section>', html, re.S).group(1)
    assert "<strong>4.00</strong>" in trait and "Pragmatic" in trait
    classification = re.search(r'data-table="classification">(.*?)</section>', html, re.S).group(1)
    assert "fake-llm" in classification and "<strong>" in classification


def test_it_downloads_each_results_table_as_csv_readable_by_pandas(researcher_client, two_judged_runs):
    url = reverse("evaluation:results")
    theme = pd.read_csv(io.BytesIO(researcher_client.get(url + "?table=theme&format=csv").content))
    assert list(theme.columns[:3]) == ["model", "prompt", "judge_run"]
    # The scores, then what the row's generation and judge runs used and cost.
    assert list(theme.columns[-4:]) == ["average", "tokens_in", "tokens_out", "cost"]
    by_prompt = theme.set_index("prompt")
    assert by_prompt.loc["zero-shot", "average"] == 4.0 and by_prompt.loc["few-shot", "love"] == 5.0
    trait = pd.read_csv(io.BytesIO(researcher_client.get(url + "?table=trait&format=csv").content))
    assert "pragmatic" in trait.columns and len(trait) == 2
    classification = researcher_client.get(url + "?table=classification&format=csv")
    assert 'filename="vivid-results-classification.csv"' in classification["Content-Disposition"]
    frame = pd.read_csv(io.BytesIO(classification.content))
    assert list(frame.columns) == ["model", "topic", "traits", "tokens_in", "tokens_out", "cost"]
    assert frame.loc[0, "model"] == "fake-llm"
    assert 0 <= frame.loc[0, "traits"] <= 1 and pd.isna(frame.loc[0, "topic"])
    assert researcher_client.get(url + "?table=nope&format=csv").status_code == 400


def test_it_filters_the_results_by_judge_model_and_strategy(researcher_client, two_judged_runs, model):
    other = make_model("other-judge", model_id="j")
    url = reverse("evaluation:results")
    html = researcher_client.get(url, {"judge_model": other.pk, "strategy": "aspect"}).content.decode()
    assert "No finished judge run with this strategy yet." in html
    html = researcher_client.get(url, {"judge_model": model.pk, "strategy": "aspect"}).content.decode()
    assert html.count("zero-shot</a>") == 2  # Tables 3 and 4
    html = researcher_client.get(url, {"strategy": "cot"}).content.decode()
    assert "Judge strategy: cot." in html and "zero-shot</a>" not in html
    assert f"judge_model={model.pk}" in researcher_client.get(url, {"judge_model": model.pk}).content.decode()


def test_it_chooses_the_only_dataset_for_a_new_generation_run(researcher_client, dataset, model):
    url = reverse("evaluation:run_new", args=["generation"])
    page = researcher_client.get(url).content.decode()
    assert re.search(rf'<option value="{dataset.pk}" selected>', page)
    Dataset.objects.create(name="Another")
    page = researcher_client.get(url).content.decode()
    assert f'<option value="{dataset.pk}" selected>' not in page
