"""The models page's Probe button: the same probe as ``manage.py probe_model`` in a worker, one at a
time per model, its state on the row (probing since, probed at with the results, the error)."""

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from llm.models import ModelConfig

from .factories import stored_model

pytestmark = pytest.mark.django_db


def _url(model):
    return reverse("llm:model_probe", args=[model.pk])


def test_it_probes_a_model_from_the_page_in_a_task_and_shows_what_it_found(
    fake_openai, researcher_client, eager, django_capture_on_commit_callbacks
):
    fake_openai.image_colour = "Green."
    fake_openai.context_length = 4096
    model = stored_model(fake_openai, name="vlm")

    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = researcher_client.post(_url(model))

    assert response.status_code == 302 and len(queued) == 1
    model.refresh_from_db()
    assert (model.supports_vision, model.supports_logprobs, model.context_length) == (True, True, 4096)
    assert model.probed_at is not None and model.probe_started_at is None and model.probe_error == ""
    html = researcher_client.get(reverse("llm:model_list")).content.decode()
    row = html[html.index('data-model="vlm"') :]
    row = row[: row.index("</tr>")]
    assert 'data-capability="context_length">4096<' in row and model.probed_at.strftime("%Y-%m-%d") in row
    assert 'data-testid="probing"' not in row and "hx-trigger" not in row and _url(model) in row


def test_it_never_queues_two_probes_of_one_model_on_a_double_click(
    fake_openai, researcher_client, django_capture_on_commit_callbacks
):
    model = stored_model(fake_openai, name="m")

    with django_capture_on_commit_callbacks(execute=False) as queued:
        first = researcher_client.post(_url(model), headers={"HX-Request": "true"})
        second = researcher_client.post(_url(model), headers={"HX-Request": "true"})

    assert len(queued) == 1 and fake_openai.count == 0
    for response in (first, second):
        body = response.content.decode()
        assert response.status_code == 200 and body.lstrip().startswith("<tr")
        assert 'data-testid="probing"' in body and 'hx-trigger="every 2s"' in body
        assert f"?model={model.pk}" in body and "<form" not in body


def test_it_polls_the_row_of_a_model_being_probed_until_the_probe_is_done(fake_openai, researcher_client):
    model = stored_model(fake_openai, name="m", probe_started_at=timezone.now())
    poll = reverse("llm:model_list") + f"?model={model.pk}"

    busy = researcher_client.get(poll, headers={"HX-Request": "true"}).content.decode()
    assert busy.lstrip().startswith("<tr") and "every 2s" in busy and "<html" not in busy

    ModelConfig.objects.filter(pk=model.pk).update(probe_started_at=None, probed_at=timezone.now())
    done = researcher_client.get(poll, headers={"HX-Request": "true"}).content.decode()
    assert "hx-trigger" not in done and 'data-testid="probed-at"' in done and _url(model) in done


def test_it_shows_the_error_of_a_probe_that_could_not_run(researcher_client, eager, django_capture_on_commit_callbacks):
    # A model whose API key is not set on the server: the provider cannot even be built.
    model = stored_model(name="keyless", api_key_env="VIVID_TEST_NO_SUCH_KEY")

    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(_url(model))

    model.refresh_from_db()
    assert model.probe_started_at is None and model.probed_at is None and model.probe_error
    html = researcher_client.get(reverse("llm:model_list")).content.decode()
    assert 'data-testid="probe-error"' in html and "VIVID_TEST_NO_SUCH_KEY" in html


def test_it_lets_a_stale_probe_be_asked_again(fake_openai, researcher_client, django_capture_on_commit_callbacks):
    model = stored_model(fake_openai, name="m", probe_started_at=timezone.now() - datetime.timedelta(hours=1))

    with django_capture_on_commit_callbacks(execute=False) as queued:
        researcher_client.post(_url(model))

    assert len(queued) == 1


def test_it_refuses_the_probe_to_anyone_but_a_researcher(
    fake_openai, annotator_client, adjudicator_client, django_capture_on_commit_callbacks
):
    model = stored_model(fake_openai, name="m")

    with django_capture_on_commit_callbacks(execute=True) as queued:
        for client in (annotator_client, adjudicator_client):
            assert client.post(_url(model)).status_code == 403

    model.refresh_from_db()
    assert not queued and model.probe_started_at is None and fake_openai.count == 0
