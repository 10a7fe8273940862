"""Where a model's key may go (issue #22, items 1 and 4): each key variable is bound to the hosts
MODEL_KEY_HOSTS names, at registration, before each request and after redirects; and a
MODEL_BASE_URL_ALLOW prefix cannot be escaped with "..", encoded dots, backslashes or "//"."""

import io
import os
import re
import subprocess
import sys

import httpx2
import pytest
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from llm import guard as model_guard
from llm.models import ModelConfig, Provider
from llm.providers import ClientError, provider_for
from llm.services import model_add
from tests.conftest import ROOT
from tests.evaluation.factories import stored_model
from tests.evaluation.fake_openai import FakeOpenAI
from tests.evaluation.test_model_security import assert_refused_on_every_path
from tests.loopback import LoopbackHandler, LoopbackServer, serve_in_thread, stop_serving
from vivid_site.settings import DEFAULT_MODEL_KEY_HOSTS, parse_key_hosts

pytestmark = pytest.mark.django_db

HELLO = [{"role": "user", "content": "Xin chào"}]
KEY = "sk-live-keyhosts-0123456789abcdef"
REMOTE = "https://llm.example.org/v1"


@pytest.fixture
def offline(settings):
    """Remote hosts listed in MODEL_BASE_URL_ALLOW are never resolved, so the tests stay offline."""
    settings.MODEL_BASE_URL_ALLOW = ["llm.example.org", "api.openai.com"]
    return settings


@pytest.fixture
def production(settings):
    """DJANGO_ENV=production's rules: loopback is neither an allowed address nor a free key host."""
    settings.MODEL_ALLOW_LOOPBACK = False
    settings.MODEL_BASE_URL_ALLOW = ["127.0.0.0/8"]
    return settings


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def registration(**changes) -> dict:
    return {
        "name": "gw",
        "provider": "openai",
        "model_id": "m",
        "base_url": REMOTE,
        "api_key_env": "OPENAI_API_KEY",
        "max_concurrency": 1,
        "timeout": 5,
        **changes,
    }


def add_model_command(**changes) -> None:
    data = registration(**changes)
    call_command(
        "add_model",
        data["name"],
        "--provider",
        "openai",
        "--base-url",
        data["base_url"],
        "--model-id",
        "m",
        "--api-key-env",
        data["api_key_env"],
        stdout=io.StringIO(),
    )


# -- The setting ---------------------------------------------------------------------------


def test_it_reads_several_hosts_per_variable_and_keeps_the_other_defaults():
    bound = parse_key_hosts(
        "OPENAI_API_KEY=api.openai.com, gw.Example.org. ;VIVID_MODEL_KEY_GATEWAY=llm.example.org;"
        "VIVID_MODEL_KEY_VLLM=10.0.3.7,[::1];GROQ_API_KEY=",
        DEFAULT_MODEL_KEY_HOSTS,
    )

    assert bound["OPENAI_API_KEY"] == ("api.openai.com", "gw.example.org")
    assert bound["VIVID_MODEL_KEY_GATEWAY"] == ("llm.example.org",)
    assert bound["VIVID_MODEL_KEY_VLLM"] == ("10.0.3.7", "::1")
    assert bound["GROQ_API_KEY"] == ()  # named with no host: its key goes nowhere
    assert bound["MISTRAL_API_KEY"] == ("api.mistral.ai",)


@pytest.mark.parametrize(
    "raw", ["OPENAI_API_KEY", "OPENAI_API_KEY=https://api.openai.com", "X=a.org:443", "X=*.a.org", "1X=a.org"]
)
def test_it_refuses_a_malformed_binding_at_start_up(raw):
    with pytest.raises(ImproperlyConfigured, match="MODEL_KEY_HOSTS"):
        parse_key_hosts(raw, {})


def test_it_reads_the_binding_from_the_environment_and_stops_on_a_malformed_one(tmp_path):
    env = {**os.environ, "VIVID_VAR_DIR": str(tmp_path), "DJANGO_ENV": "test"}
    env["DJANGO_SETTINGS_MODULE"] = "vivid_site.settings"
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.MODEL_KEY_HOSTS['VIVID_MODEL_KEY_GATEWAY'], settings.MODEL_KEY_HOSTS['OPENAI_API_KEY'])"
    )

    def start(value: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**env, "MODEL_KEY_HOSTS": value},
            capture_output=True,
            text=True,
        )

    bound = start("VIVID_MODEL_KEY_GATEWAY=llm.example.org,llm2.example.org")
    assert bound.returncode == 0, bound.stderr
    assert bound.stdout.strip() == "('llm.example.org', 'llm2.example.org') ('api.openai.com',)"
    malformed = start("VIVID_MODEL_KEY_GATEWAY=https://llm.example.org/v1")
    assert malformed.returncode != 0 and "MODEL_KEY_HOSTS" in malformed.stderr


def test_it_binds_every_allowed_well_known_variable_to_its_provider_by_default(settings):
    assert settings.MODEL_KEY_HOSTS["OPENAI_API_KEY"] == ("api.openai.com",)
    assert set(settings.MODEL_API_KEY_ENVS) <= set(settings.MODEL_KEY_HOSTS)


# -- Registration ----------------------------------------------------------------------------


def test_it_refuses_to_register_the_openai_key_for_another_host_on_every_channel(offline, researcher_client, api):
    page = researcher_client.post(reverse("llm:model_new"), registration())
    response = api.post(reverse("llm-api:model_list"), registration(), format="json")
    with pytest.raises(CommandError, match=r"api_key_env: the key in OPENAI_API_KEY may be sent only to") as caught:
        add_model_command()

    assert page.status_code == 400
    errors = re.search(r'id="id_api_key_env_error">(.*?)</ul>', page.content.decode(), re.S)
    assert errors and "OPENAI_API_KEY" in errors.group(1) and "api.openai.com" in errors.group(1)
    assert response.status_code == 400 and set(response.json()) == {"api_key_env"}
    message = response.json()["api_key_env"][0]
    for part in ("OPENAI_API_KEY", "api.openai.com", "llm.example.org", "MODEL_KEY_HOSTS"):
        assert part in message
    assert caught.value.returncode == 1
    assert not ModelConfig.objects.filter(name="gw").exists()


def test_it_registers_a_key_for_the_hosts_its_variable_is_bound_to(offline):
    offline.MODEL_KEY_HOSTS = {**offline.MODEL_KEY_HOSTS, "VIVID_MODEL_KEY_GATEWAY": ("llm.example.org",)}

    model_add(**registration(name="openai", base_url="https://api.openai.com/v1", timeout=5.0))
    model_add(**registration(name="gateway", api_key_env="VIVID_MODEL_KEY_GATEWAY", timeout=5.0))

    assert ModelConfig.objects.filter(name__in=["openai", "gateway"]).count() == 2


def test_it_sends_an_unbound_model_key_variable_nowhere_but_loopback(offline):
    with pytest.raises(ValidationError) as caught:
        model_add(**registration(api_key_env="VIVID_MODEL_KEY_GATEWAY", timeout=5.0))

    message = caught.value.message_dict["api_key_env"][0]
    assert "VIVID_MODEL_KEY_GATEWAY is bound to no host in MODEL_KEY_HOSTS" in message
    assert (
        "only to loopback addresses" in message and "MODEL_KEY_HOSTS=VIVID_MODEL_KEY_GATEWAY=llm.example.org" in message
    )
    # Outside production a local server (vLLM, the test suite's fake) still gets it.
    model_add(**registration(name="local", base_url="http://127.0.0.1:8000/v1", api_key_env="VIVID_MODEL_KEY_GATEWAY"))


def test_it_sends_an_unbound_variable_to_no_host_at_all_in_production(production):
    with pytest.raises(ValidationError) as caught:
        model_add(**registration(base_url="http://127.0.0.1:8000/v1", api_key_env="VIVID_MODEL_KEY_VLLM"))

    assert "so its key may be sent to no host, not to 127.0.0.1" in caught.value.message_dict["api_key_env"][0]
    production.MODEL_KEY_HOSTS = {"VIVID_MODEL_KEY_VLLM": ("127.0.0.1",)}
    model_add(**registration(base_url="http://127.0.0.1:8000/v1", api_key_env="VIVID_MODEL_KEY_VLLM"))


def test_it_compares_hosts_as_the_client_sends_them(offline):
    offline.MODEL_KEY_HOSTS = {"VIVID_MODEL_KEY_GATEWAY": ("llm.example.org",)}

    for host in ("LLM.Example.ORG", "llm.example.org."):
        assert model_guard.key_binding_problem("VIVID_MODEL_KEY_GATEWAY", f"https://{host}/v1") is None
    for host in ("llm.example.org.evil.net", "evil-llm.example.org", "sub.llm.example.org"):
        assert model_guard.key_binding_problem("VIVID_MODEL_KEY_GATEWAY", f"https://{host}/v1")


# -- Before each request -------------------------------------------------------------------------


def test_it_sends_nothing_for_a_stored_model_whose_key_is_not_bound_to_its_host(production, fake_openai, dataset):
    model = stored_model(fake_openai, api_key_env="OPENAI_API_KEY")  # a row edited in the admin

    assert_refused_on_every_path(
        model, dataset, r"OPENAI_API_KEY may be sent only to api\.openai\.com, not to 127\.0\.0\.1"
    )

    assert fake_openai.count == 0


def test_it_stops_sending_the_key_as_soon_as_the_binding_changes(production, fake_openai, monkeypatch):
    monkeypatch.setenv("VIVID_MODEL_KEY_BOUND", KEY)
    production.MODEL_KEY_HOSTS = {"VIVID_MODEL_KEY_BOUND": ("127.0.0.1",)}
    provider = provider_for(stored_model(fake_openai, api_key_env="VIVID_MODEL_KEY_BOUND"))
    assert provider.complete(HELLO, temperature=0, max_tokens=5).text
    assert fake_openai.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"

    production.MODEL_KEY_HOSTS = {}  # the same cached client, asked again
    with pytest.raises(ClientError, match="VIVID_MODEL_KEY_BOUND is bound to no host"):
        provider.complete(HELLO, temperature=0, max_tokens=5)

    assert fake_openai.count == 1


def test_it_binds_the_key_behind_a_proxy_too(monkeypatch, settings):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    settings.MODEL_KEY_HOSTS = {"VIVID_MODEL_KEY_PROXIED": ("api.openai.com",)}
    client = model_guard.guarded_http_client(timeout=5.0, api_key_env="VIVID_MODEL_KEY_PROXIED", api_key=KEY)

    with pytest.raises(httpx2.ConnectError) as caught:
        client.post("https://llm.example.org/v1/chat/completions", headers={"Authorization": f"Bearer {KEY}"})

    assert isinstance(caught.value.__cause__, model_guard.KeyHostRefused)


# -- Redirects ------------------------------------------------------------------------------------


@pytest.fixture
def redirector():
    """A loopback server on 127.0.0.1 that answers every request with a 307 to ``target`` and
    records the headers it got."""

    class Handler(LoopbackHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            server.seen.append({k.lower(): v for k, v in self.headers.items()})
            self.send_response(307)
            self.send_header("Location", server.target + self.path.removeprefix("/v1"))
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = LoopbackServer(("127.0.0.1", 0), Handler)
    server.seen, server.target = [], ""
    thread = serve_in_thread(server, name="redirector")
    yield server
    stop_serving(server, thread)


@pytest.fixture
def elsewhere():
    """The fake endpoint on another loopback host (127.0.0.2): another origin, another host."""
    with FakeOpenAI(host="127.0.0.2") as server:
        yield server


def redirected_model(production, redirector, elsewhere, monkeypatch) -> ModelConfig:
    monkeypatch.setenv("VIVID_MODEL_KEY_REDIRECTED", KEY)
    production.MODEL_KEY_HOSTS = {"VIVID_MODEL_KEY_REDIRECTED": ("127.0.0.1",)}
    redirector.target = elsewhere.base_url
    return ModelConfig(
        name="redirected",
        provider=Provider.OPENAI,
        model_id="m",
        timeout=5.0,
        base_url=f"http://127.0.0.1:{redirector.server_address[1]}/v1",
        api_key_env="VIVID_MODEL_KEY_REDIRECTED",
    )


def test_it_follows_a_redirect_to_another_host_without_the_key(production, redirector, elsewhere, monkeypatch):
    model = redirected_model(production, redirector, elsewhere, monkeypatch)

    assert provider_for(model).complete(HELLO, temperature=0, max_tokens=5).text

    assert redirector.seen[0]["authorization"] == f"Bearer {KEY}"  # the host it is bound to
    assert elsewhere.count == 1
    headers = elsewhere.requests[0]["headers"]
    assert "authorization" not in headers and not [v for v in headers.values() if KEY in v]


def test_it_refuses_a_redirect_that_would_carry_the_key_to_another_host(production, redirector, elsewhere, monkeypatch):
    model = redirected_model(production, redirector, elsewhere, monkeypatch)
    # A client that kept the header across origins (an older or future httpx): the request hook
    # still stops it.
    monkeypatch.setattr(httpx2.Client, "_redirect_headers", lambda self, request, url, method: request.headers.copy())

    with pytest.raises(
        ClientError, match=r"VIVID_MODEL_KEY_REDIRECTED may be sent only to 127.0.0.1, not to 127.0.0.2"
    ):
        provider_for(model).complete(HELLO, temperature=0, max_tokens=5)

    assert len(redirector.seen) == 1 and elsewhere.count == 0


# -- MODEL_BASE_URL_ALLOW prefixes (item 4) -------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/v1/../admin",
        "/v1/..",
        "/v1/%2e%2e/admin",
        "/v1/%2E%2E/admin",
        "/v1/.%2e/admin",
        "/v1/%2fadmin",
        "/v1\\..\\admin",
        "/v1/%5c../admin",
        "/v1//../admin",
        "/v1/./admin",
        "//v1/admin",
        "/v10",
    ],
)
def test_it_does_not_let_a_path_escape_a_listed_prefix(production, path):
    production.MODEL_BASE_URL_ALLOW = ["http://127.0.0.1:8000/v1"]

    assert model_guard.base_url_problem(f"http://127.0.0.1:8000{path}") is not None


@pytest.mark.parametrize("path", ["/v1", "/v1/", "/v1/openai", "/v1/openai/"])
def test_it_still_allows_paths_under_a_listed_prefix(production, path):
    production.MODEL_BASE_URL_ALLOW = ["http://127.0.0.1:8000/v1"]

    assert model_guard.base_url_problem(f"http://127.0.0.1:8000{path}") is None


def test_it_refuses_a_dot_dot_base_url_at_registration_and_sends_nothing_for_a_stored_one(production, fake_openai):
    production.MODEL_BASE_URL_ALLOW = [fake_openai.base_url]
    escaped = f"{fake_openai.base_url}/../admin"

    with pytest.raises(ValidationError) as caught:
        model_add(**registration(base_url=escaped, api_key_env=""))
    assert "ambiguous" in caught.value.message_dict["base_url"][0]
    with pytest.raises(ClientError, match="ambiguous"):
        provider_for(stored_model(fake_openai, base_url=escaped)).complete(HELLO, temperature=0, max_tokens=5)

    assert fake_openai.count == 0
