"""Model credentials and endpoints (issue #11, section 1): which environment variable a model may
read as its key, which addresses it may send requests to, and what of a server's error is kept."""

import io
import json
import os
import re
import socket
import subprocess
import sys

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.models import Run, RunStatus
from evaluation.services import run_execute, run_start
from llm import guard as model_guard
from llm.models import ModelConfig, Provider
from llm.providers import ClientError, RetryableError, provider_for
from llm.providers.openai_provider import OpenAIProvider
from llm.services import backoff_delay, model_add
from llm.services import throttle as throttle_module
from llm.services.complete import model_complete
from tests.conftest import ROOT
from tests.evaluation.factories import make_run, stored_model

pytestmark = pytest.mark.django_db

HELLO = [{"role": "user", "content": "Xin chào"}]
APP_SECRETS = [
    "SECRET_KEY",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "PROLIFIC_API_TOKEN",
    "WIKIDATA_API_URL",
    "VIVID_VAR_DIR",
    "MODEL_API_KEY_ENVS",
    "secret_key",
]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def form_data(**changes):
    return {
        "name": "gw",
        "provider": "openai",
        "model_id": "m",
        "base_url": "http://127.0.0.1:8000/v1",
        "api_key_env": "",
        "max_concurrency": 1,
        "timeout": 5,
        **changes,
    }


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.fixture
def production(settings):
    """The address rules of DJANGO_ENV=production (loopback refused unless listed)."""
    settings.MODEL_ALLOW_LOOPBACK = False
    return settings


@pytest.fixture
def dns(monkeypatch):
    """Names resolve from this table only (tests never leave loopback); IP literals resolve as usual."""
    table: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in table:
            return [
                (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port or 0))
                for a in table[host]
            ]
        try:
            socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
        except OSError:
            if not re.fullmatch(r"[0-9a-fA-Fx.]+", host):
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


# -- API key variables: registration ------------------------------------------------------


def test_it_refuses_secret_key_as_the_key_variable_on_the_page(researcher_client):
    response = researcher_client.post(reverse("llm:model_new"), form_data(api_key_env="SECRET_KEY"))

    assert response.status_code == 400
    errors = re.search(r'<ul class="errorlist" id="id_api_key_env_error">(.*?)</ul>', response.content.decode(), re.S)
    assert errors and "SECRET_KEY is a setting of this application" in errors.group(1)
    assert not ModelConfig.objects.filter(name="gw").exists()


def test_it_refuses_secret_key_as_the_key_variable_over_the_api(api):
    response = api.post(reverse("llm-api:model_list"), form_data(api_key_env="SECRET_KEY"), format="json")

    assert response.status_code == 400
    assert set(response.json()) == {"api_key_env"}
    assert "SECRET_KEY" in json.dumps(response.json())
    assert not ModelConfig.objects.filter(name="gw").exists()


def test_it_refuses_secret_key_as_the_key_variable_from_the_cli_with_exit_status_1():
    with pytest.raises(CommandError, match=r"api_key_env: SECRET_KEY is a setting of this application") as caught:
        call_command(
            "add_model",
            "gw",
            "--provider",
            "openai",
            "--base-url",
            "http://127.0.0.1:8000/v1",
            "--model-id",
            "m",
            "--api-key-env",
            "SECRET_KEY",
            stdout=io.StringIO(),
        )

    assert caught.value.returncode == 1
    assert not ModelConfig.objects.filter(name="gw").exists()


@pytest.mark.parametrize("name", APP_SECRETS)
def test_it_never_allows_an_application_setting_even_when_the_setting_lists_it(settings, name):
    settings.MODEL_API_KEY_ENVS = ["OPENAI_API_KEY", name]

    with pytest.raises(ValidationError) as caught:
        model_add(name="gw", provider="openai", model_id="m", base_url="http://127.0.0.1:8000/v1", api_key_env=name)

    assert "a setting of this application" in caught.value.message_dict["api_key_env"][0]


def test_it_allows_only_listed_variables_and_the_model_key_prefix(settings):
    assert model_guard.api_key_env_problem("OPENAI_API_KEY") is None
    assert model_guard.api_key_env_problem("VIVID_MODEL_KEY_VLLM") is None
    assert "not an allowed API key variable" in model_guard.api_key_env_problem("VLLM_KEY")
    assert "not an allowed API key variable" in model_guard.api_key_env_problem("VIVID_MODEL_KEY_")
    assert "not an allowed API key variable" in model_guard.api_key_env_problem("HOME")
    settings.MODEL_API_KEY_ENVS = ["VLLM_KEY"]
    assert model_guard.api_key_env_problem("VLLM_KEY") is None
    assert model_guard.api_key_env_problem("OPENAI_API_KEY") is not None


def test_it_counts_every_variable_the_settings_read_as_an_application_setting():
    names = model_guard.settings_env_names()

    assert {
        "SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "DJANGO_ENV",
        "WIKIDATA_API_URL",
        "MODEL_BASE_URL_ALLOW",
    } <= names


def test_it_reports_a_forbidden_variable_as_unset_on_the_models_page(researcher_client, fake_openai):
    stored_model(fake_openai, api_key_env="SECRET_KEY")

    html = researcher_client.get(reverse("llm:model_list")).content.decode()

    row = re.search(r'<tr data-model="old"[^>]*>(.*?)</tr>', html, re.S).group(1)
    assert "not set on the server" in row


# -- API key variables: a model stored before the check -----------------------------------


def test_it_refuses_a_stored_secret_key_model_at_run_start_and_sends_nothing(fake_openai, dataset):
    model = stored_model(fake_openai, api_key_env="SECRET_KEY")

    with pytest.raises(ValidationError) as caught:
        run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=dataset)

    assert "SECRET_KEY" in caught.value.message_dict["model"][0]
    assert not Run.objects.exists()
    assert fake_openai.count == 0


def test_it_fails_a_queued_run_whose_model_reads_secret_key_and_sends_nothing(eager, fake_openai, dataset):
    model = stored_model(fake_openai)
    run = make_run(dataset, model)
    ModelConfig.objects.filter(pk=model.pk).update(api_key_env="SECRET_KEY")  # as an old row or an admin edit

    run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "Model old cannot be used: api_key_env: SECRET_KEY is a setting of this application" in run.error
    assert fake_openai.count == 0


def test_it_refuses_a_single_completion_of_a_secret_key_model_and_sends_nothing(fake_openai):
    model = stored_model(fake_openai, api_key_env="SECRET_KEY")

    with pytest.raises(ClientError, match="SECRET_KEY is a setting of this application"):
        model_complete(model=model, messages=HELLO)

    assert fake_openai.count == 0


def test_it_refuses_a_secret_key_model_when_the_provider_is_built(fake_openai):
    config = ModelConfig(
        name="unsaved",
        provider=Provider.OPENAI,
        base_url=fake_openai.base_url,
        model_id="m",
        api_key_env="DATABASE_URL",
    )

    with pytest.raises(ClientError, match="DATABASE_URL is a setting of this application"):
        OpenAIProvider.for_config(config)

    assert fake_openai.count == 0


# -- Base URLs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
        ("http://[fd00:ec2::254]/v1", "a cloud metadata address"),
        ("http://169.254.1.1/v1", "a link-local address"),
        ("http://[fe80::1]/v1", "a link-local address"),
        ("http://10.0.0.5:8000/v1", "a private address"),
        ("http://192.168.1.10/v1", "a private address"),
        ("http://[fc00::1]/v1", "a private address"),
        ("http://[::ffff:169.254.169.254]/v1", "a cloud metadata address"),
        ("http://0.0.0.0:8000/v1", "the unspecified address"),
        ("http://224.0.0.1/v1", "a multicast address"),
        ("http://127.0.0.1:8000/v1", "a loopback address"),
        ("http://2130706433/v1", "a loopback address"),
        ("http://[::1]:8000/v1", "a loopback address"),
    ],
)
def test_it_refuses_non_public_addresses_in_production(production, url, kind):
    problem = model_guard.base_url_problem(url)

    assert problem and kind in problem and "MODEL_BASE_URL_ALLOW" in problem


@pytest.mark.parametrize("url", ["ftp://llm.example.org/v1", "file:///etc/passwd", "gopher://127.0.0.1:70/"])
def test_it_refuses_urls_that_are_not_http(url):
    assert model_guard.base_url_problem(url) == "only http and https URLs are allowed"


def test_it_refuses_a_name_that_resolves_to_a_private_address(production, dns):
    dns["llm.example.org"] = ["93.184.216.34"]
    dns["rebound.example.org"] = ["93.184.216.34", "10.1.2.3"]
    dns["metadata.example.org"] = ["169.254.169.254"]

    assert model_guard.base_url_problem("https://llm.example.org/v1") is None
    assert "resolves to 10.1.2.3, which is a private address" in model_guard.base_url_problem(
        "https://rebound.example.org/v1"
    )
    assert "a cloud metadata address" in model_guard.base_url_problem("https://metadata.example.org/v1")
    assert "cannot be resolved" in model_guard.base_url_problem("https://nowhere.example.org/v1")


def test_it_refuses_a_metadata_url_at_registration_on_every_channel(researcher_client, api, production):
    url = "http://169.254.169.254/latest/meta-data/"

    page = researcher_client.post(reverse("llm:model_new"), form_data(base_url=url))
    assert page.status_code == 400
    assert re.search(r'id="id_base_url_error">.*a cloud metadata address', page.content.decode(), re.S)
    response = api.post(reverse("llm-api:model_list"), form_data(base_url=url), format="json")
    assert response.status_code == 400 and set(response.json()) == {"base_url"}
    with pytest.raises(CommandError, match="base_url: 169.254.169.254 resolves to"):
        call_command(
            "add_model", "gw", "--provider", "openai", "--base-url", url, "--model-id", "m", stdout=io.StringIO()
        )
    assert not ModelConfig.objects.filter(name="gw").exists()


def test_it_allows_loopback_but_not_private_addresses_in_development_and_test(settings):
    assert settings.MODEL_ALLOW_LOOPBACK is True
    assert model_guard.base_url_problem("http://127.0.0.1:8000/v1") is None
    assert model_guard.base_url_problem("http://[::1]:8000/v1") is None
    assert "a private address" in model_guard.base_url_problem("http://10.0.0.5:8000/v1")
    assert "a cloud metadata address" in model_guard.base_url_problem("http://169.254.169.254/")


def test_it_allows_what_the_administrator_lists(production, dns):
    dns["vllm.lan"] = ["10.0.0.7"]
    production.MODEL_BASE_URL_ALLOW = ["vllm.lan", "http://127.0.0.1:8000/v1", "192.168.0.0/16"]

    assert model_guard.base_url_problem("http://vllm.lan:8000/v1") is None
    assert model_guard.base_url_problem("http://127.0.0.1:8000/v1/") is None
    assert model_guard.base_url_problem("http://127.0.0.1:8000/v10") is not None  # a prefix ends at a "/"
    assert model_guard.base_url_problem("http://127.0.0.1:8001/v1") is not None
    assert model_guard.base_url_problem("http://192.168.3.4/v1") is None
    assert model_guard.base_url_problem("http://10.0.0.8/v1") is not None


def test_it_refuses_credentials_in_the_url():
    assert "user name or password" in model_guard.base_url_problem("http://user:pw@127.0.0.1:8000/v1")


def assert_refused_on_every_path(model, dataset, match: str) -> None:
    """The provider, a single completion and a run start all refuse ``model``, saying ``match``."""
    with pytest.raises(ClientError, match=match):
        provider_for(model)
    with pytest.raises(ClientError, match=match):
        model_complete(model=model, messages=HELLO)
    with pytest.raises(ValidationError, match=match):
        run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=dataset)


def test_it_sends_nothing_to_a_stored_model_whose_address_is_now_refused(production, fake_openai, dataset):
    assert_refused_on_every_path(stored_model(fake_openai), dataset, "a loopback address")

    assert fake_openai.count == 0


def test_it_refuses_loopback_when_django_env_is_production(tmp_path):
    env = {
        **os.environ,
        "VIVID_VAR_DIR": str(tmp_path),
        "DJANGO_ENV": "production",
        "SECRET_KEY": "p" * 60,
        "ALLOWED_HOSTS": "vivid.example.org",
        "DJANGO_SETTINGS_MODULE": "vivid_site.settings",
    }
    code = "import django; django.setup(); from django.conf import settings; print(settings.MODEL_ALLOW_LOOPBACK)"

    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "False"


# -- What a server's error leaves on an item -----------------------------------------------

SECRET = "sk-live-0123456789abcdefSECRET"


@pytest.fixture
def keyed_model(fake_openai, monkeypatch):
    monkeypatch.setenv("VIVID_MODEL_KEY_SEC_TEST", SECRET)
    return stored_model(fake_openai, name="keyed", api_key_env="VIVID_MODEL_KEY_SEC_TEST")


def echo(secret: str) -> str:
    """An error body as a debugging proxy writes it: the request, headers included, then a long dump."""
    return (
        f"Bad request. Headers: Authorization: Bearer {secret}\nx-api-key: {secret}\nBody: key={secret} " + "x" * 5000
    )


def test_it_trims_the_error_body_and_redacts_the_key_and_headers(fake_openai, keyed_model):
    fake_openai.fail(400, message=echo(SECRET))

    with pytest.raises(ClientError) as caught:
        provider_for(keyed_model).complete(HELLO, temperature=0, max_tokens=5)

    message = str(caught.value)
    assert fake_openai.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"  # it was sent
    assert SECRET not in message and "0123456789abcdef" not in message
    assert "[redacted]" in message
    assert len(message) <= model_guard.ERROR_TEXT_MAX_CHARS
    assert message.startswith("Bad request.")


def test_it_keeps_no_key_in_the_error_of_a_failed_run_item(eager, fake_openai, keyed_model, dataset):
    fake_openai.fail(400, times=10, message=echo(SECRET))
    run = make_run(dataset, keyed_model)

    run_execute(run_id=run.pk)

    errors = list(run.items.values_list("error", flat=True))
    assert errors and all(errors)
    assert not [e for e in errors if SECRET in e or "Bearer sk-" in e or len(e) > model_guard.ERROR_TEXT_MAX_CHARS]
    assert fake_openai.count == len(errors)


def test_it_redacts_retryable_errors_too(fake_openai, keyed_model):
    fake_openai.fail(503, message=echo(SECRET))

    with pytest.raises(RetryableError) as caught:
        provider_for(keyed_model).complete(HELLO, temperature=0, max_tokens=5)

    assert SECRET not in str(caught.value) and len(str(caught.value)) <= model_guard.ERROR_TEXT_MAX_CHARS + 20


def test_it_redacts_credential_shapes_in_any_text():
    text = model_guard.clean_error_text(
        '{"headers": {"Authorization": "Bearer abc.def", "api_key": "k-123"}} Proxy-Authorization: Basic Zm9v '
        "sk-proj-abcdefghijklmnop"
    )

    assert "abc.def" not in text and "k-123" not in text and "Zm9v" not in text and "abcdefghijklmnop" not in text


# -- Retry-After ---------------------------------------------------------------------------


def test_it_caps_retry_after_from_the_server(fake_openai, settings):
    settings.EVAL_RETRY_AFTER_CAP_S = 120
    fake_openai.fail(429, retry_after="86400")
    fake_openai.fail(503, retry_after="Wed, 21 Oct 2099 07:28:00 GMT")

    for _ in range(2):
        with pytest.raises(RetryableError) as caught:
            provider_for(
                ModelConfig(
                    name="f", provider=Provider.OPENAI, base_url=fake_openai.base_url, model_id="m", timeout=5.0
                )
            ).complete(HELLO, temperature=0, max_tokens=5)
        assert caught.value.retry_after == 120


def test_it_caps_retry_after_in_the_engine(settings):
    settings.EVAL_RETRY_AFTER_CAP_S = 7

    assert backoff_delay(RetryableError("busy", retry_after=3600.0), 1) == 7
    assert backoff_delay(RetryableError("busy", retry_after=2.0), 1) == 2.0


def test_it_waits_no_longer_than_the_cap_in_a_single_completion(fake_openai, settings, monkeypatch):
    settings.EVAL_RETRY_AFTER_CAP_S = 3
    model = stored_model(fake_openai)
    fake_openai.fail(429, retry_after="86400")
    slept = []
    monkeypatch.setattr(throttle_module.time, "sleep", slept.append)

    assert model_complete(model=model, messages=HELLO)
    assert slept == [3]
    assert fake_openai.count == 2


# -- Connections: the address is checked again when the socket opens ------------------------


def test_it_refuses_a_name_rebound_to_loopback_after_the_check_and_sends_nothing(production, dns, fake_openai):
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])  # public when checked, loopback when connecting
    real = socket.getaddrinfo

    def rebinding(host, port, *args, **kwargs):
        if host == "rebind.example.org":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in next(answers)]
        return real(host, port, *args, **kwargs)

    socket.getaddrinfo = rebinding  # dns restores the real one
    config = ModelConfig(
        name="rebind",
        provider=Provider.OPENAI,
        model_id="m",
        timeout=5.0,
        base_url=f"http://rebind.example.org:{fake_openai.port}/v1",
    )

    with pytest.raises(ClientError, match="resolves to 127.0.0.1, which is a loopback address"):
        provider_for(config).complete(HELLO, temperature=0, max_tokens=5)

    assert fake_openai.count == 0


def test_it_connects_to_a_listed_loopback_server_in_production(production, fake_openai):
    production.MODEL_BASE_URL_ALLOW = [f"http://127.0.0.1:{fake_openai.port}/v1"]
    config = ModelConfig(
        name="listed", provider=Provider.OPENAI, model_id="m", timeout=5.0, base_url=fake_openai.base_url
    )

    assert provider_for(config).complete(HELLO, temperature=0, max_tokens=5).text
    assert fake_openai.count == 1


def test_it_fails_the_study_term_finder_of_a_secret_key_model_and_sends_nothing(fake_openai):
    from study.models import PrepStatus, Study, StudyStatus
    from study.services import prep
    from tests.study.factories import make_study
    from tests.study.test_prep import study_package

    study = make_study(study_package(), status=StudyStatus.DRAFT)
    model = stored_model(fake_openai, api_key_env="SECRET_KEY")

    prep.study_terms_prepare(study=study, term_model=model)

    study = Study.objects.get(pk=study.pk)
    assert study.terms_status == PrepStatus.FAILED
    assert "SECRET_KEY is a setting of this application" in study.terms_error
    assert fake_openai.count == 0
