"""The model clients' TLS settings: read once per process and shared by every client (each new
endpoint or key makes a client), still verifying certificates and host names, behind a proxy too."""

import ssl

import httpcore2
import pytest

from llm import guard as model_guard


@pytest.fixture
def certificate_reads(monkeypatch):
    """How often httpx's default TLS context (the certificate bundle read from disk) is built, with
    the process's shared context forgotten first and again after the test."""
    reads = []
    build = httpcore2.default_ssl_context

    def counted(*args, **kwargs):
        reads.append(1)
        return build(*args, **kwargs)

    monkeypatch.setattr(httpcore2, "default_ssl_context", counted)
    model_guard.model_tls_context.cache_clear()
    yield reads
    model_guard.model_tls_context.cache_clear()


def _contexts(client) -> set:
    transports = [client._transport, *(t for t in client._mounts.values() if t is not None)]
    return {id(getattr(t._pool, "_ssl_context", None)) for t in transports}


def test_it_reads_the_certificates_once_for_every_model_client(certificate_reads):
    clients = [
        model_guard.guarded_http_client(timeout=5.0),
        model_guard.guarded_http_client(timeout=30.0),
        model_guard.guarded_http_client(timeout=5.0, api_key_env="OPENAI_API_KEY", api_key="sk-test-0123456789"),
    ]

    assert len(certificate_reads) == 1
    assert set().union(*(_contexts(client) for client in clients)) == {id(model_guard.model_tls_context())}


def test_it_still_checks_the_certificate_and_the_host_name(certificate_reads):
    client = model_guard.guarded_http_client(timeout=5.0)
    context = client._transport._pool._ssl_context

    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.get_ca_certs() or context.cert_store_stats()["x509_ca"]


def test_it_shares_the_context_with_the_proxys_transports(certificate_reads, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")

    first = model_guard.guarded_http_client(timeout=5.0)
    second = model_guard.guarded_http_client(timeout=9.0)

    assert first._mounts and len(certificate_reads) == 1
    assert _contexts(first) | _contexts(second) == {id(model_guard.model_tls_context())}
