"""What a model can do (probe_model against the loopback endpoint) and what a run costs: the estimate
before it starts, its confirmation above the threshold on the page, the API and the CLI, and the
usage the provider reported, summed over the items."""

import json
import math

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import Run, RunKind, RunStatus
from evaluation.selectors import run_progress
from evaluation.selectors.results import results_table
from evaluation.services import run_execute
from evaluation.services.runs.cost import run_estimate, run_start
from evaluation.services.runs.execution import run_item_messages
from llm.costs import BYTES_PER_TOKEN, ESTIMATE_METHOD, MESSAGE_OVERHEAD, REPLY_OVERHEAD, cost_of
from llm.models import ModelConfig
from llm.services import CostNotConfirmed
from llm.services.capabilities import model_probe
from tests.evaluation.fake_openai import count_tokens, message_text

from .factories import make_judge_run, stored_model

pytestmark = pytest.mark.django_db


@pytest.fixture
def priced(fake_openai):
    """A model at the loopback endpoint at US$2 per million input and US$10 per million output tokens."""
    return stored_model(fake_openai, name="priced", price_input=2.0, price_output=10.0)


@pytest.fixture
def threshold(settings):
    # The four-expression dataset costs well under a cent: a tiny threshold makes it need a confirmation.
    settings.EVAL_COST_CONFIRM_USD = 0.0001
    return settings.EVAL_COST_CONFIRM_USD


def _generation(model, dataset, **options):
    return {
        "kind": RunKind.GENERATION,
        "model": model,
        "prompt_name": "zero-shot",
        "dataset": dataset,
        "params": {"max_tokens": 50},
        **options,
    }


# --- Capabilities ---------------------------------------------------------------------------------


def test_it_probes_a_vision_model_with_logprobs_and_stores_what_it_found_with_when(fake_openai, researcher_client):
    fake_openai.image_colour = "Green."
    fake_openai.context_length = 8192
    model = stored_model(fake_openai, name="vlm")

    call_command("probe_model", "vlm")

    model.refresh_from_db()
    assert (model.supports_vision, model.supports_logprobs, model.context_length) == (True, True, 8192)
    assert model.probed_at is not None and model.probe["vision"]["result"] is True
    bodies = fake_openai.bodies()
    assert [b.get("max_tokens") for b in bodies] == [1, 5]  # tiny requests
    assert bodies[0]["logprobs"] is True and fake_openai.has_image(bodies[1])
    html = researcher_client.get("/evaluation/models/").content.decode()
    row = html[html.index('data-model="vlm"') :]
    assert 'data-capability="vision"' in row and 'data-capability="context_length">8192<' in row
    assert model.probed_at.strftime("%Y-%m-%d") in row


def test_it_finds_a_text_only_endpoint_that_refuses_images_and_logprobs(fake_openai):
    fake_openai.accepts_images = False
    fake_openai.refuse_logprobs = True
    model = stored_model(fake_openai, name="text-only")

    model = model_probe(model=model)

    assert (model.supports_vision, model.supports_logprobs, model.context_length) == (False, False, None)
    assert "does not support image input" in model.probe["vision"]["detail"]
    assert "logprobs" in model.probe["logprobs"]["detail"]


def test_it_finds_a_model_that_takes_the_image_but_does_not_see_it(fake_openai, capsys):
    fake_openai.omit_logprobs = True  # answers, without log-probabilities, as many endpoints do
    stored_model(fake_openai, name="blind")

    call_command("probe_model", "blind", "--json")

    found = json.loads(capsys.readouterr().out)
    assert found["vision"] is False and found["logprobs"] is False
    assert "green" in found["probe"]["vision"]["detail"]


def test_it_exits_1_when_probing_an_unknown_model():
    with pytest.raises(CommandError, match="no model named 'nope'"):
        call_command("probe_model", "nope")


def test_it_refuses_a_run_that_needs_logprobs_on_a_model_without_them(fake_openai, dataset):
    model = stored_model(fake_openai, supports_logprobs=False)

    with pytest.raises(Exception) as refused:
        run_start(**_generation(model, dataset, params={"top_logprobs": 5}))

    assert "model" in refused.value.message_dict and "log-probabilities" in refused.value.message_dict["model"][0]
    assert not Run.objects.exists() and fake_openai.count == 0
    # Without a request for log-probabilities the same model runs.
    assert run_start(**_generation(model, dataset)).pk


# --- Cost: the estimate ---------------------------------------------------------------------------


def test_it_estimates_tokens_from_the_rendered_prompts_and_max_tokens(priced, dataset):
    run = run_start(**_generation(priced, dataset))

    estimate = run.estimate
    messages = [item.messages for item in run.items.all()]
    assert estimate["method"] == ESTIMATE_METHOD and estimate["n_requests"] == 4 and estimate["n_cached"] == 0
    assert estimate["tokens_out"] == 4 * 50
    rendered = run_item_messages(run=run, items=list(run.items.select_related("expression")))
    expected = sum(
        sum(math.ceil(len(message_text(m).encode()) / BYTES_PER_TOKEN) + MESSAGE_OVERHEAD for m in ms) + REPLY_OVERHEAD
        for ms in rendered
    )
    assert estimate["tokens_in"] == expected and messages == [[]] * 4  # items exist, nothing sent yet
    assert estimate["cost"] == pytest.approx(cost_of(expected, 200, price_input=2.0, price_output=10.0))
    assert (estimate["price_input"], estimate["price_output"]) == (2.0, 10.0)


def test_it_leaves_the_cost_unknown_for_a_model_without_prices(fake_openai, dataset, threshold):
    model = stored_model(fake_openai)

    run = run_start(**_generation(model, dataset))  # no price: nothing to confirm

    assert run.estimate["cost"] is None and run.estimate["tokens_in"] > 0
    assert run_progress(run=run)["cost"] is None


def test_it_refuses_a_costly_run_without_confirmation_and_stores_nothing(priced, dataset, threshold):
    with pytest.raises(CostNotConfirmed) as refused:
        run_start(**_generation(priced, dataset))

    assert refused.value.estimate["needs_confirmation"] and "confirm_cost" in refused.value.message_dict
    assert not Run.objects.exists()

    run = run_start(**_generation(priced, dataset), confirm_cost=True)
    assert run.estimate["confirmed"] is True and Run.objects.count() == 1


def test_it_shows_the_estimate_on_the_page_and_starts_only_when_confirmed(
    researcher_client, priced, dataset, threshold
):
    url = f"/evaluation/runs/new/{RunKind.GENERATION}/"
    form = {
        "model": priced.pk,
        "prompt": "zero-shot",
        "dataset": dataset.pk,
        "temperature": "0.7",
        "max_tokens": "50",
        "seed": "0",
    }

    estimated = researcher_client.post(url, {**form, "estimate": "1"})
    assert estimated.status_code == 200 and 'data-testid="cost-estimate"' in estimated.content.decode()
    assert not Run.objects.exists()

    refused = researcher_client.post(url, form)
    html = refused.content.decode()
    assert refused.status_code == 400 and "above the US$0.00" in html and 'name="confirm_cost"' in html
    assert not Run.objects.exists()

    started = researcher_client.post(url, {**form, "confirm_cost": "on"})
    run = Run.objects.get()
    assert started.status_code == 302 and run.estimate["confirmed"] is True
    page = researcher_client.get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert 'data-count="estimate"' in page and 'data-count="cost"' in page


def test_it_answers_400_naming_confirm_cost_over_the_api(researcher_client, priced, dataset, threshold):
    body = {"kind": "generation", "model": priced.name, "prompt": "zero-shot", "dataset": dataset.pk, "max_tokens": 50}

    refused = researcher_client.post("/api/evaluation/runs/", body, content_type="application/json")
    assert refused.status_code == 400 and "confirm_cost" in refused.json()
    assert "US$" in refused.json()["confirm_cost"][0] and not Run.objects.exists()

    started = researcher_client.post(
        "/api/evaluation/runs/", {**body, "confirm_cost": True}, content_type="application/json"
    )
    assert started.status_code == 201
    data = started.json()
    assert data["estimate"]["confirmed"] is True and data["estimate"]["tokens_out"] == 200
    assert data["cost"] == 0 and data["progress"]["cost"] == 0


def test_it_exits_1_on_the_cli_without_confirm_cost_and_starts_with_it(priced, dataset, threshold, capsys):
    arguments = ["run_generation", "--dataset", dataset.name, "--model", priced.name, "--prompt", "zero-shot"]

    with pytest.raises(CommandError, match="Pass --confirm-cost"):
        call_command(*arguments)
    assert not Run.objects.exists()

    call_command(*arguments, "--confirm-cost")
    captured = capsys.readouterr()
    assert int(captured.out.splitlines()[0]) == Run.objects.get().pk
    assert "Estimated" in captured.err


# --- Cost: what was used --------------------------------------------------------------------------


def test_it_sums_the_usage_the_provider_reported_and_prices_it(eager, priced, dataset, researcher_client, fake_openai):
    run = run_start(**_generation(priced, dataset))

    run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    bodies = fake_openai.bodies()
    reported_in = sum(sum(count_tokens(message_text(m)) for m in b["messages"]) for b in bodies)
    assert run.tokens_in == reported_in == sum(run.items.values_list("tokens_in", flat=True))
    assert run.tokens_out == sum(run.items.values_list("tokens_out", flat=True)) > 0
    expected = cost_of(run.tokens_in, run.tokens_out, price_input=2.0, price_output=10.0)
    assert run_progress(run=run)["cost"] == pytest.approx(expected)
    detail = researcher_client.get(f"/api/evaluation/runs/{run.pk}/").json()
    assert detail["tokens_in"] == run.tokens_in and detail["cost"] == pytest.approx(expected)
    report = researcher_client.get(f"/api/evaluation/runs/{run.pk}/report/?format=csv").content.decode()
    assert "run,cost," in report

    # The results table's row: its generation run and the judge run that scored it.
    judge = make_judge_run(run, 4, model=priced)
    Run.objects.filter(pk=judge.pk).update(tokens_in=1000, tokens_out=10)
    row = results_table(table="theme")["rows"][0]
    assert row["usage"]["tokens_in"] == run.tokens_in + 1000
    assert row["usage"]["cost"] == pytest.approx(expected + cost_of(1000, 10, price_input=2.0, price_output=10.0))
    csv = researcher_client.get("/evaluation/results/?table=theme&format=csv").content.decode()
    assert csv.splitlines()[0].endswith("tokens_in,tokens_out,cost")


def test_it_estimates_nothing_for_requests_the_cache_already_answered(eager, priced, dataset):
    first = run_start(**_generation(priced, dataset))
    run_execute(run_id=first.pk)

    again = run_estimate(**_generation(priced, dataset))

    assert again["n_cached"] == 4 and again["n_requests"] == 0 and again["tokens_in"] == 0
    assert ModelConfig.objects.get(pk=priced.pk).price_input == 2.0
