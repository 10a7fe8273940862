"""import_run: lm-eval and Inspect logs of the exported tasks become runs of the app.

The fixtures in fixtures/harness_logs/ are real logs from `make interop` (benchmarks/interop.py),
trimmed to a few samples: lm-eval 0.4.13 --log_samples files and Inspect 0.3.285 logs (.eval, zstd
inside, and .json), of the version "Interop v1" frozen from annotation/demo/vivid_demo.csv.
"""

import io
import json
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Dataset
from annotation.services import expression_import
from core.roles import ANNOTATOR
from evaluation.models import ItemStatus, Run, RunItem, RunKind, RunStatus
from evaluation.scoring import score_classification
from evaluation.services.runs import run_create, run_execute, run_import
from llm.models import ModelConfig, Provider
from llm.providers import ClientError, provider_for
from tests.conftest import make_user
from tests.evaluation.factories import stored_model
from tests.evaluation.version_factories import gold_version

LOGS = Path(__file__).parent / "fixtures" / "harness_logs"
DEMO = Path(__file__).resolve().parents[2] / "annotation" / "demo" / "vivid_demo.csv"
VERSION = "Interop v1"


@pytest.fixture
def version(db):
    expression_import(dataset_name="Interop demo", filename=DEMO.name, content=DEMO.read_bytes())
    annotators = [make_user(f"interop_{n}", ANNOTATOR) for n in (1, 2)]
    return gold_version(Dataset.objects.get(name="Interop demo"), annotators, name=VERSION)


def _import(name: str, fmt: str, **options) -> Run:
    return run_import(fmt=fmt, data=(LOGS / name).read_bytes(), filename=name, **options)


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (LOGS / name).read_text(encoding="utf-8").splitlines()]


def test_it_imports_an_lmeval_classification_log_scored_by_the_apps_rule(version):
    run = _import("samples_vivid_topic.jsonl", "lm-eval", model_fallback="interop")

    assert (run.kind, run.strategy, run.status, run.version) == (
        RunKind.CLASSIFICATION,
        "topic",
        RunStatus.DONE,
        version,
    )
    lines = _lines("samples_vivid_topic.jsonl")
    items = list(run.items.order_by("number").select_related("expression"))
    assert len(items) == len(lines) == 3
    for item, line in zip(items, lines, strict=True):
        reply = line["resps"][0][0]
        assert item.response == reply
        assert (item.prediction, item.correct) == score_classification("topic", reply, item.gold)
        assert item.gold == line["doc"]["target"]
        assert item.expression.text == line["doc"]["expression"]
        assert (item.status, item.cached, item.latency_ms) == (ItemStatus.DONE, False, None)
        assert item.messages[-1] == {"role": "user", "content": line["doc"]["prompt"]}
    # The harness's own exact match agrees with the app's here (the same rule, shipped verbatim).
    assert [i.correct for i in items] == [line["exact_match"] == 1.0 for line in lines]
    facts = run.reproducibility
    assert facts["harness"] == "lm-eval" and facts["task"] == "vivid_topic"
    assert facts["model_name"] == "interop" and facts["generation_params"]["max_gen_toks"] == 10
    assert len(facts["log_sha256"]) == 64 and facts["imported_at"]
    assert run.model.provider == Provider.EXTERNAL and run.model.model_id == "interop"


def test_it_imports_an_inspect_eval_log_with_its_model_and_version(version):
    run = _import("vivid_topic.eval", "inspect")

    assert run.kind == RunKind.CLASSIFICATION and run.items.count() == 4
    assert run.reproducibility["harness_version"] == "0.3.285"
    assert run.reproducibility["model_args"]["model"] == "openai/interop"
    assert run.model.model_id == "interop" and run.model.provider == Provider.EXTERNAL
    for item in run.items.all():
        assert (item.prediction, item.correct) == score_classification("topic", item.response, item.gold)
        assert item.tokens_in > 0 and item.messages[-1]["role"] == "user"


def test_it_imports_a_generation_log_that_a_judge_run_then_scores(eager, version, fake_openai):
    generation = _import("vivid_explanation.json", "inspect")
    assert (generation.kind, generation.strategy) == (RunKind.GENERATION, "zero-shot")
    assert generation.items.filter(status=ItemStatus.DONE).count() == 3
    judge_model = stored_model(fake_openai, name="judge")
    fake_openai.reply = lambda body: "4"

    judge = run_create(kind=RunKind.JUDGE, model=judge_model, prompt_name="aspect", source_run=generation)
    run_execute(run_id=judge.pk)

    judge.refresh_from_db()
    assert judge.status == RunStatus.DONE and judge.items.count() == 3
    assert {(i.status, i.score) for i in judge.items.all()} == {(ItemStatus.DONE, 4)}
    sent = " ".join(json.dumps(body, ensure_ascii=False) for body in fake_openai.bodies())
    for item in generation.items.all():
        assert item.response in sent


def test_it_refuses_to_call_an_imported_model(version):
    run = _import("samples_vivid_explanation.jsonl", "lm-eval", model_fallback="interop")

    with pytest.raises(ClientError):
        provider_for(run.model)
    with pytest.raises(ValidationError, match="imported from a harness log"):
        run_create(kind=RunKind.GENERATION, model=run.model, prompt_name="zero-shot", version=version)


def test_it_returns_the_first_run_for_the_same_file(version):
    first = _import("samples_vivid_topic.jsonl", "lm-eval", model_fallback="interop")
    again = _import("samples_vivid_topic.jsonl", "lm-eval")

    assert again.pk == first.pk and again.idempotent_repeat and not first.idempotent_repeat
    assert Run.objects.count() == 1


def _broken(tmp_path, edit) -> Path:
    lines = (LOGS / "samples_vivid_topic.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "samples_vivid_topic_broken.jsonl"
    path.write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
    return path


def test_it_names_an_unmatched_id_and_writes_nothing(version, tmp_path):
    def unknown(lines):
        row = json.loads(lines[1])
        row["doc"]["id"] = "demo-999"
        return [lines[0], json.dumps(row, ensure_ascii=False), lines[2]]

    path = _broken(tmp_path, unknown)
    with pytest.raises(ValidationError) as caught:
        run_import(fmt="lm-eval", data=path.read_bytes(), filename=path.name)

    assert caught.value.message_dict["file"] == ["line 2: id 'demo-999' is not an item of version 'Interop v1'"]
    assert not Run.objects.exists() and not RunItem.objects.exists()
    assert not ModelConfig.objects.filter(provider=Provider.EXTERNAL).exists()


def test_it_names_a_malformed_line_and_writes_nothing(version, tmp_path):
    path = _broken(tmp_path, lambda lines: [lines[0], lines[1][:-40], lines[2]])

    with pytest.raises(CommandError, match="line 2: not JSON"):
        call_command("import_run", str(path), "--format", "lm-eval", stdout=io.StringIO())
    assert not Run.objects.exists()


def test_it_refuses_a_log_of_another_version(version):
    other = gold_version(version.round.dataset, [make_user("x1", ANNOTATOR), make_user("x2", ANNOTATOR)], name="v2")

    with pytest.raises(ValidationError, match="from version 'Interop v1', not 'v2'"):
        _import("samples_vivid_topic.jsonl", "lm-eval", version=other)
    assert not Run.objects.exists()


def test_it_refuses_a_log_whose_version_is_unknown(db):
    with pytest.raises(ValidationError, match="no frozen version named 'Interop v1'"):
        _import("vivid_topic.eval", "inspect")


def test_it_refuses_a_damaged_eval(version):
    data = bytearray((LOGS / "vivid_topic.eval").read_bytes())
    # Inside a sample's compressed bytes: the entry no longer inflates to its declared size and CRC.
    middle = len(data) // 2
    data[middle : middle + 60] = b"\0" * 60
    with pytest.raises(ValidationError) as caught:
        run_import(fmt="inspect", data=bytes(data), filename="vivid_topic.eval")
    assert "vivid_topic.eval" in caught.value.message_dict["file"][0]
    assert not Run.objects.exists()


def test_it_prints_the_run_and_its_accuracy(version):
    out = io.StringIO()
    call_command("import_run", str(LOGS / "samples_vivid_topic.jsonl"), "--format", "lm-eval", stdout=out)
    run = Run.objects.get()
    correct = run.items.filter(correct=True).count()
    assert out.getvalue().startswith(f"{run.pk} classification: imported as run {run.pk}, 3 items")
    assert f"accuracy {correct / 3:.4f} ({correct}/3)" in out.getvalue()
    # The folder lm-eval wrote it into is named after the model, here "harness_logs".
    assert run.model.model_id == "harness_logs"

    out = io.StringIO()
    call_command("import_run", str(LOGS / "samples_vivid_topic.jsonl"), "--format", "lm-eval", stdout=out)
    assert "already imported as run" in out.getvalue() and Run.objects.count() == 1


def test_it_files_the_run_under_a_chosen_model(version):
    chosen = stored_model(name="my-model")
    call_command(
        "import_run", str(LOGS / "vivid_explanation.json"), "--format", "inspect", "--model", "my-model",
        "--dataset-version", VERSION, stdout=io.StringIO(),
    )  # fmt: skip
    assert Run.objects.get().model == chosen


# --- The form and the API ---------------------------------------------------------------------------


def _upload(name: str, content: bytes | None = None):
    return SimpleUploadedFile(name, (LOGS / name).read_bytes() if content is None else content)


def test_it_imports_an_uploaded_log_from_the_runs_page(version, researcher_client):
    page = researcher_client.get(reverse("evaluation:run_list"))
    assert reverse("evaluation:run_import") in page.content.decode()

    response = researcher_client.post(
        reverse("evaluation:run_import"), {"format": "inspect", "file": _upload("vivid_topic.eval")}
    )

    run = Run.objects.get()
    assert response.status_code == 302 and response.url == reverse("evaluation:run_detail", args=[run.pk])
    assert run.items.count() == 4 and run.created_by is not None
    shown = researcher_client.get(response.url)
    assert shown.status_code == 200 and "imported-interop" in shown.content.decode()
    item = run.items.order_by("number").first()
    assert researcher_client.get(reverse("evaluation:item_detail", args=[run.pk, item.pk])).status_code == 200
    assert researcher_client.get(reverse("evaluation:results")).status_code == 200
    again = researcher_client.post(
        reverse("evaluation:run_import"), {"format": "inspect", "file": _upload("vivid_topic.eval")}
    )
    assert again.url == response.url and Run.objects.count() == 1


def test_it_refuses_a_wrong_extension_and_a_file_over_the_limit(version, researcher_client, settings):
    wrong = researcher_client.post(
        reverse("evaluation:run_import"), {"format": "lm-eval", "file": _upload("vivid_topic.eval")}
    )
    assert wrong.status_code == 400 and "a lm-eval log ends in .jsonl" in wrong.content.decode()

    settings.VIVID_IMPORT_MAX_BYTES = 1024
    big = researcher_client.post(
        reverse("evaluation:run_import"), {"format": "lm-eval", "file": _upload("samples_vivid_topic.jsonl")}
    )
    assert big.status_code == 400 and "the limit is 1,024 bytes" in big.content.decode()
    assert not Run.objects.exists()


def test_it_shows_the_unmatched_ids_on_the_form(version, researcher_client):
    content = (LOGS / "samples_vivid_topic.jsonl").read_bytes().replace(b'"demo-001"', b'"nope-1"', 1)
    response = researcher_client.post(
        reverse("evaluation:run_import"), {"format": "lm-eval", "file": _upload("samples_vivid_topic.jsonl", content)}
    )
    assert response.status_code == 400
    assert "line 1: id &#x27;nope-1&#x27; is not an item of version &#x27;Interop v1&#x27;" in response.content.decode()
    assert not Run.objects.exists()


def test_it_imports_a_log_over_the_api(version, researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    url = reverse("evaluation-api:run_import")

    stored_model(name="my-model")

    def post(name, **fields):
        return client.post(url, {"file": _upload(name), **fields}, format="multipart")

    # lm-eval's samples file does not name its model: the request must.
    nameless = post("samples_vivid_explanation.jsonl", format="lm-eval")
    created = post("samples_vivid_explanation.jsonl", format="lm-eval", model="my-model")
    again = post("samples_vivid_explanation.jsonl", format="lm-eval", model="my-model")
    bad = post("samples_vivid_topic.jsonl", format="inspect")

    assert nameless.status_code == 400 and "does not name its model" in str(nameless.json())
    assert created.status_code == 201, created.json()
    assert created.json()["kind"] == "generation" and created.json()["model"] == "my-model"
    assert again.status_code == 200 and again.json()["id"] == created.json()["id"]
    assert bad.status_code == 400 and "ends in .eval or .json" in str(bad.json())


@pytest.mark.parametrize("who", ["annotator_client", "client"])
def test_it_refuses_the_import_to_anyone_but_a_researcher(version, who, request):
    client = request.getfixturevalue(who)
    page = client.post(reverse("evaluation:run_import"), {"format": "inspect", "file": _upload("vivid_topic.eval")})
    api = client.post(reverse("evaluation-api:run_import"), {"format": "inspect", "file": _upload("vivid_topic.eval")})

    assert page.status_code in (302, 403) and api.status_code in (401, 403)
    if who == "annotator_client":
        assert page.status_code == 403 and api.status_code == 403
    assert not Run.objects.exists()


def test_it_reads_the_model_and_lmeval_version_from_the_results_beside_the_samples(version, tmp_path):
    (tmp_path / "samples_vivid_topic_x.jsonl").write_bytes((LOGS / "samples_vivid_topic.jsonl").read_bytes())
    results = {"config": {"model_args": {"model": "qwen-7b", "base_url": "http://x"}}, "lm_eval_version": "0.4.13"}
    (tmp_path / "results_x.json").write_text(json.dumps(results), encoding="utf-8")

    call_command(
        "import_run", str(tmp_path / "samples_vivid_topic_x.jsonl"), "--format", "lm-eval", stdout=io.StringIO()
    )

    run = Run.objects.get()
    assert run.model.model_id == "qwen-7b" and run.reproducibility["harness_version"] == "0.4.13"


@pytest.mark.parametrize(
    "content",
    [
        b'{"eval": {"model": ["x"], "packages": [1]}, "samples": {"a": 1}}',
        b'{"eval": {}, "samples": [{"id": "demo-001", "metadata": [], "output": "x"}]}',
        b'{"eval": {}, "samples": [{"id": "demo-001", "metadata": {"vivid_task": "topic", "vivid_version": "Interop v1"},'
        b' "output": {"choices": "x", "usage": {"input_tokens": "many"}}}]}',
        b"[" * 100_000,
        b"PK\x03\x04 not really a zip",
        b"\xff\xfe",
    ],
)
def test_it_refuses_foreign_inspect_files_with_a_reason(version, content):
    with pytest.raises(ValidationError) as caught:
        run_import(fmt="inspect", data=content, filename="odd.json")
    assert caught.value.message_dict["file"]
    assert not Run.objects.exists()


def test_it_keeps_no_nul_of_a_reply(version):
    content = (
        (LOGS / "samples_vivid_explanation.jsonl").read_bytes().replace(b'"resps": [["', b'"resps": [["\\u0000', 1)
    )
    run = run_import(fmt="lm-eval", data=content, filename="s.jsonl", model_fallback="m")
    assert all("\x00" not in item.response for item in run.items.all())


def test_it_hands_an_imported_generation_run_to_human_raters(version):
    from evaluation.services.scoring import scoring_task_create

    run = _import("vivid_explanation.json", "inspect")
    raters = [make_user("rater_1", ANNOTATOR), make_user("rater_2", ANNOTATOR)]

    task = scoring_task_create(name="Imported", run=run, raters=raters, n_items=3, n_shared=1, seed=1)

    assert task.ratings.count() == 4
    assert set(task.ratings.values_list("item__run", flat=True)) == {run.pk}
