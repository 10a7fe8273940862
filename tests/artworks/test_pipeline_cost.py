"""What an artwork pipeline run costs: its estimate before it starts (per model, from its items'
rendered prompts and max_tokens), the confirmation above EVAL_COST_CONFIRM_USD on the page, the API
and the CLI, and afterwards the tokens the providers reported and their cost (page, API, report)."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from artworks.models import ArtworkPipelineRun, PipelineStep
from artworks.selectors.pipeline import STEP_ROLE, artwork_run_usage
from artworks.selectors.report import artwork_report
from artworks.services.pipeline import artwork_run_estimate, artwork_run_execute, artwork_run_start
from evaluation.models import RunStatus
from llm.costs import cost_of
from llm.services import CostNotConfirmed
from tests.artworks.test_pipeline import collection, media, server  # noqa: F401 - fixtures
from tests.evaluation.factories import stored_model
from tests.evaluation.fake_openai import count_tokens, message_text

pytestmark = pytest.mark.django_db

SAMPLES = 2
PRICES = {"speaker": (2.0, 10.0), "listener": (1.0, 4.0)}


@pytest.fixture
def speaker(server):  # noqa: F811
    price_input, price_output = PRICES["speaker"]
    return stored_model(
        server,
        name="speaker",
        model_id="fake-vlm",
        max_concurrency=2,
        supports_vision=True,
        price_input=price_input,
        price_output=price_output,
    )


@pytest.fixture
def listener(server):  # noqa: F811
    price_input, price_output = PRICES["listener"]
    return stored_model(
        server,
        name="listener",
        model_id="fake-vlm",
        max_concurrency=2,
        supports_vision=True,
        price_input=price_input,
        price_output=price_output,
    )


@pytest.fixture
def threshold(settings):
    # One artwork costs well under a cent: a tiny threshold makes it need a confirmation.
    settings.EVAL_COST_CONFIRM_USD = 0.000001
    return settings.EVAL_COST_CONFIRM_USD


def _start(collection, speaker, listener, **options):  # noqa: F811
    return artwork_run_start(
        collection=collection, speaker=speaker, listener=listener, samples=SAMPLES, enqueue=False, **options
    )


def test_it_records_the_estimate_and_the_tokens_the_providers_reported_with_their_cost(
    collection,  # noqa: F811
    speaker,
    listener,
    server,  # noqa: F811
):
    run = _start(collection, speaker, listener)
    estimate = run.estimate
    assert estimate["by_role"]["builder"]["model"] == "speaker" and estimate["by_role"]["builder"]["n_requests"] == 4
    assert estimate["by_role"]["speaker"]["price_input"] == 2.0 and estimate["n_images"] == estimate["n_requests"]
    assert not estimate["needs_confirmation"] and estimate["cost"] > 0

    run = artwork_run_execute(run_id=run.pk)

    assert run.status == RunStatus.DONE
    reported_in = sum(sum(count_tokens(message_text(m)) for m in b["messages"]) for b in server.bodies())
    assert run.tokens_in == reported_in == sum(run.items.values_list("tokens_in", flat=True))
    assert run.tokens_out == sum(run.items.values_list("tokens_out", flat=True)) > 0
    # The estimate is an upper bound: bytes / 3 per token, max_tokens per reply, unwritten questions assumed.
    assert estimate["tokens_in"] >= run.tokens_in and estimate["tokens_out"] >= run.tokens_out
    assert estimate["n_requests"] >= server.count
    used = artwork_run_usage(run=run)
    expected = 0.0
    for role, (price_input, price_output) in (("builder", PRICES["speaker"]), *PRICES.items()):
        steps = [step for step, owner in STEP_ROLE.items() if owner == role]
        items = run.items.filter(step__in=steps)
        tokens = sum(items.values_list("tokens_in", flat=True)), sum(items.values_list("tokens_out", flat=True))
        assert (used["by_role"][role]["tokens_in"], used["by_role"][role]["tokens_out"]) == tokens
        expected += cost_of(*tokens, price_input=price_input, price_output=price_output)
    assert used["cost"] == pytest.approx(expected) and used["cost"] > 0
    report = json.loads(json.dumps(artwork_report(run=run)))
    assert report["run"]["cost"]["tokens_in"] == run.tokens_in and report["run"]["cost"]["cost"] == pytest.approx(
        expected
    )
    assert report["run"]["cost"]["estimate"]["n_requests"] == estimate["n_requests"]


def test_it_estimates_exactly_the_requests_of_a_built_collection_and_a_cached_run_costs_nothing(
    collection,  # noqa: F811
    speaker,
    listener,
    server,  # noqa: F811
):
    artwork_run_execute(run_id=_start(collection, speaker, listener).pk)
    sent = server.count

    again = _start(collection, speaker, listener)

    by_role = again.estimate["by_role"]
    groups = len(again.groups)
    # Built: 1 symbol (1 attuned question) and 2 agnostic questions, 6 options each.
    assert by_role["builder"]["n_requests"] == 0
    assert by_role["speaker"]["n_requests"] == groups * (1 + 1 + SAMPLES * (1 + 1))
    assert by_role["listener"]["n_requests"] == groups * 3 * 3 * 6
    again = artwork_run_execute(run_id=again.pk)
    assert server.count == sent and again.tokens_in == again.tokens_out == 0
    assert artwork_run_usage(run=again)["cost"] == 0.0


def test_it_says_the_cost_is_unknown_when_a_model_has_no_price(collection, speaker, server):  # noqa: F811
    unpriced = stored_model(server, name="unpriced", model_id="fake-vlm", supports_vision=True)

    estimate = artwork_run_estimate(collection=collection, speaker=speaker, listener=unpriced, samples=SAMPLES)

    assert estimate["cost"] is None and estimate["by_role"]["listener"]["cost"] is None
    assert estimate["by_role"]["speaker"]["cost"] > 0 and not estimate["needs_confirmation"]
    assert not ArtworkPipelineRun.objects.exists()


def test_it_refuses_a_run_above_the_threshold_unless_confirmed_and_stores_nothing(
    collection,  # noqa: F811
    speaker,
    listener,
    server,  # noqa: F811
    threshold,
):
    with pytest.raises(CostNotConfirmed) as refused:
        _start(collection, speaker, listener, confirm_cost=False)

    assert "confirm_cost" in refused.value.message_dict and refused.value.estimate["needs_confirmation"]
    assert not ArtworkPipelineRun.objects.exists() and server.count == 0
    run = _start(collection, speaker, listener, confirm_cost=True)
    assert run.estimate["confirmed"] is True and run.items.exists()


def _form(collection, speaker, listener, **extra):  # noqa: F811
    return {
        "collection": collection.pk,
        "speaker": speaker.pk,
        "listener": listener.pk,
        "samples": SAMPLES,
        "lam": 0,
        **extra,
    }


def test_it_shows_the_estimate_on_the_page_and_asks_for_the_confirmation(
    researcher_client,
    collection,  # noqa: F811
    speaker,
    listener,
    threshold,
    server,  # noqa: F811
    eager,
    django_capture_on_commit_callbacks,
):
    page = reverse("artworks:run_list")
    estimated = researcher_client.post(page, _form(collection, speaker, listener, estimate="1"))
    html = estimated.content.decode()
    assert estimated.status_code == 200 and 'data-testid="cost-estimate"' in html
    assert 'data-role="speaker"' in html and 'data-role="listener"' in html and "US$" in html
    assert not ArtworkPipelineRun.objects.exists()

    refused = researcher_client.post(page, _form(collection, speaker, listener))
    assert refused.status_code == 400 and 'data-testid="cost-estimate"' in refused.content.decode()
    assert "Confirm the cost" in refused.content.decode() and not ArtworkPipelineRun.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        started = researcher_client.post(page, _form(collection, speaker, listener, confirm_cost="on"))
    run = ArtworkPipelineRun.objects.get()
    assert started.status_code == 302 and run.estimate["confirmed"] is True
    detail = researcher_client.get(reverse("artworks:run_detail", args=[run.pk])).content.decode()
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.tokens_in > 0
    assert f'data-testid="tokens">{run.tokens_in} / {run.tokens_out}<' in detail
    assert f"US${artwork_run_usage(run=run)['cost']:.4f}" in detail and 'data-testid="estimate"' in detail


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def test_it_needs_confirm_cost_over_the_api_above_the_threshold(
    api,
    collection,  # noqa: F811
    speaker,
    listener,
    threshold,
    eager,
    django_capture_on_commit_callbacks,
):
    url = reverse("artworks-api:run_list")
    body = {"collection": collection.name, "speaker": "speaker", "listener": "listener", "samples": SAMPLES}

    refused = api.post(url, body, format="json")
    assert refused.status_code == 400 and "confirm_cost" in refused.json()
    assert not ArtworkPipelineRun.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(url, {**body, "confirm_cost": True}, format="json")
    assert started.status_code == 201, started.json()
    detail = api.get(reverse("artworks-api:run_detail", args=[started.json()["id"]])).json()
    assert detail["status"] == "done" and detail["estimate"]["confirmed"] is True
    assert detail["tokens_in"] > 0 and detail["cost"] > 0
    assert detail["usage_by_role"]["listener"]["model"] == "listener"
    listed = api.get(url).json()["results"][0]
    assert listed["cost"] == pytest.approx(detail["cost"])


def test_it_needs_confirm_cost_on_the_command_line_above_the_threshold(
    collection,  # noqa: F811
    speaker,
    listener,
    threshold,
    capsys,
):
    arguments = ["--collection", "demo", "--speaker", "speaker", "--listener", "listener", "--samples", str(SAMPLES)]
    with pytest.raises(CommandError, match="--confirm-cost"):
        call_command("run_artwork_pipeline", *arguments, "--wait")
    assert not ArtworkPipelineRun.objects.exists()

    call_command("run_artwork_pipeline", *arguments, "--wait", "--confirm-cost")

    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    run = ArtworkPipelineRun.objects.get(pk=int(lines[0]))
    assert "Estimated" in captured.err
    assert lines[-1] == (
        f"run {run.pk} done: {run.tokens_in} tokens in, {run.tokens_out} out, "
        f"cost US${artwork_run_usage(run=run)['cost']:.4f}"
    )
    assert run.items.filter(step=PipelineStep.LISTENER).exists()


def test_it_says_price_unknown_for_a_model_without_a_price_even_before_a_token_is_reported(
    researcher_client,
    collection,  # noqa: F811
    speaker,
    server,  # noqa: F811
):
    unpriced = stored_model(server, name="unpriced", model_id="fake-vlm", supports_vision=True, max_concurrency=2)
    run = _start(collection, speaker, unpriced)
    page = reverse("artworks:run_detail", args=[run.pk])

    # Queued: no item has reported a token yet, and the listener's price is unknown, not 0.
    used = artwork_run_usage(run=run)
    assert used["by_role"]["listener"]["cost"] is None and used["cost"] is None
    assert used["by_role"]["speaker"]["cost"] == 0.0
    queued = researcher_client.get(page).content.decode()
    assert "price unknown" in queued and "US$0.0000" not in queued
    assert 'data-count-method="bytes"' in queued

    run = artwork_run_execute(run_id=run.pk)

    assert run.status == RunStatus.DONE and artwork_run_usage(run=run)["cost"] is None
    done = researcher_client.get(page).content.decode()
    assert "price unknown" in done and "US$0.0000" not in done


def test_it_costs_nothing_for_a_model_the_run_asks_nothing(
    collection,  # noqa: F811
    speaker,
    listener,
    server,  # noqa: F811
):
    artwork_run_execute(run_id=_start(collection, speaker, listener).pk)
    unpriced = stored_model(server, name="unpriced", model_id="fake-vlm", supports_vision=True, max_concurrency=2)

    # The collection is built: the question builder has nothing left to do.
    again = _start(collection, speaker, listener, builder=unpriced)

    assert again.estimate["by_role"]["builder"]["n_requests"] == 0 and again.estimate["cost"] is not None
    again = artwork_run_execute(run_id=again.pk)
    used = artwork_run_usage(run=again)
    assert used["by_role"]["builder"]["cost"] == 0.0 and used["cost"] is not None


def test_it_names_how_each_models_tokens_were_counted_in_the_estimate(
    researcher_client,
    collection,  # noqa: F811
    speaker,
    listener,
    server,  # noqa: F811
):
    html = researcher_client.post(
        reverse("artworks:run_list"), _form(collection, speaker, listener, estimate="1")
    ).content.decode()

    assert html.count('data-count-method="bytes"') == 3  # the question builder, the speaker and the listener
    assert "no replies of it yet to calibrate on" in html
