"""What a model registration may point the server at: which environment variable it may
read as an API key, and which hosts it may send requests (with that key) to.

A researcher chooses both, and the server acts on them with its own environment and
network position, so each is checked when a model is registered and again whenever a
request is about to be made (a model stored before these checks existed, or an admin edit).
"""

from __future__ import annotations

import ast
import functools
import importlib
import ipaddress
import logging
import os
import posixpath
import re
import socket
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

logger = logging.getLogger(__name__)

KEY_ENV_PREFIX = "VIVID_MODEL_KEY_"
ERROR_TEXT_MAX_CHARS = 500
# Where the openai client sends requests when a model has no base URL.
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"

# Secrets of the deployment that no setting may hand to a model, on top of every variable
# vivid_site/settings.py reads (found by reading its source, so a new setting is covered).
_NEVER_KEY_ENVS = {
    "SECRET_KEY",
    "DJANGO_SECRET_KEY",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "REDIS_URL",
    "PROLIFIC_API_TOKEN",
    "PROLIFIC_TOKEN",
    "EMAIL_HOST_PASSWORD",
    "SENTRY_DSN",
    "PGPASSWORD",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
}
_NEVER_KEY_ENV_PREFIXES = ("DJANGO_", "CELERY_", "PROLIFIC_", "DATABASE_", "POSTGRES", "PG", "AWS_", "SENTRY_")
_NEVER_KEY_ENV_WORDS = ("SECRET", "PASSWORD", "PASSWD")
_ENV_READERS = {"env_str", "env_bool", "env_int", "env_list", "getenv", "get"}

# The metadata services of the large clouds; all are link-local or private already, named
# here so the refusal says what they are.
_METADATA_ADDRESSES = {
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("169.254.170.2"),
    ipaddress.ip_address("fd00:ec2::254"),
    ipaddress.ip_address("100.100.100.200"),
}
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def settings_env_names() -> frozenset[str]:
    """Every environment variable name that the settings module reads with a literal name."""
    # Overridden settings (tests) carry no SETTINGS_MODULE; the environment still names it.
    module_name = os.environ.get("DJANGO_SETTINGS_MODULE") or "vivid_site.settings"
    return _env_names_read_by(importlib.import_module(module_name).__file__)


@functools.cache
def _env_names_read_by(path: str) -> frozenset[str]:
    try:
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        # Settings shipped without their source (bytecode only): the fixed list still holds.
        logger.warning("cannot read the settings source %s; only the built-in list of secrets is refused", path)
        return frozenset()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in _ENV_READERS and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "environ"
        ):
            names.add(str(node.slice.value))
    return frozenset(name for name in names if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name))


def _is_app_secret(name: str) -> bool:
    upper = name.upper()
    if upper in _NEVER_KEY_ENVS or upper in {n.upper() for n in settings_env_names()}:
        return True
    if upper.startswith(KEY_ENV_PREFIX):
        return False
    if upper.startswith("VIVID_") or upper.startswith(_NEVER_KEY_ENV_PREFIXES):
        return True
    return any(word in upper for word in _NEVER_KEY_ENV_WORDS)


def api_key_env_problem(name: str) -> str | None:
    """Why a model may not read its API key from the variable ``name``, or None when it may."""
    if not name:
        return None
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return _("the name of an environment variable, not the key itself")
    if _is_app_secret(name):
        return _("%(name)s is a setting of this application, and a model can never read it as its API key") % {
            "name": name
        }
    allowed = settings.MODEL_API_KEY_ENVS
    if name in allowed or (name.startswith(KEY_ENV_PREFIX) and len(name) > len(KEY_ENV_PREFIX)):
        return None
    return _(
        "%(name)s is not an allowed API key variable: use %(allowed)s or a name starting with %(prefix)s "
        "(an administrator may allow more names in MODEL_API_KEY_ENVS)"
    ) % {"name": name, "allowed": ", ".join(allowed) or "-", "prefix": KEY_ENV_PREFIX}


def _default_port(scheme: str) -> int | None:
    return {"http": 80, "https": 443}.get(scheme)


def _listed_prefix(url, entry: str) -> bool:
    listed = urlsplit(entry)
    try:
        ports_match = (listed.port or _default_port(listed.scheme)) == (url.port or _default_port(url.scheme))
    except ValueError:
        return False
    if (
        listed.scheme.lower() != url.scheme.lower()
        or (listed.hostname or "") != (url.hostname or "")
        or not ports_match
    ):
        return False
    if path_problem(url.path) or url.query or url.fragment:
        return False
    prefix = _normal_path(listed.path).rstrip("/")
    path = _normal_path(url.path)
    # A path boundary: "/v1" lists "/v1/..." but not "/v10".
    return path == prefix or path.startswith(prefix + "/") or not prefix


def _normal_path(path: str) -> str:
    """The path a server ends up serving: percent-decoded, dot segments resolved, slashes collapsed
    (posixpath keeps a leading "//", which some servers read as one slash)."""
    normal = posixpath.normpath("/" + unquote(path).replace("\\", "/"))
    return re.sub(r"/{2,}", "/", normal)


def path_problem(path: str) -> str | None:
    """Why a base URL's path is ambiguous, or None. The HTTP client resolves "/v1/../admin" to
    "/admin", and servers decode "%2e%2e", read a backslash as a slash or collapse "//", so a path
    written that way would be checked as one path and served as another."""
    lowered = path.lower()
    segments = unquote(path).replace("\\", "/").split("/")
    if (
        "\\" in path
        or any(code in lowered for code in ("%2e", "%2f", "%5c"))
        or "//" in path
        or any(segment in {".", ".."} for segment in segments)
    ):
        return _(
            "the path %(path)s is ambiguous: a base URL may not contain '.' or '..' segments, '//', "
            "backslashes or percent-encoded dots, slashes or backslashes"
        ) % {"path": path}
    return None


def _allow_listed(*, host: str, port: int | None, addresses: list, url=None) -> bool:
    """Whether MODEL_BASE_URL_ALLOW lists an endpoint: a listed host, a listed network holding every
    address, or a listed URL prefix. With ``url`` the whole prefix is compared; a socket carries no
    path, so at connect time only the prefix's host and port are."""
    host = host.lower()
    for entry in settings.MODEL_BASE_URL_ALLOW:
        entry = entry.strip()
        if "://" in entry:
            if url is not None:
                if _listed_prefix(url, entry):
                    return True
                continue
            listed = urlsplit(entry)
            try:
                listed_port = listed.port or _default_port(listed.scheme.lower())
            except ValueError:
                continue
            if (listed.hostname or "") == host and listed_port == port:
                return True
        elif "/" in entry:
            try:
                network = ipaddress.ip_network(entry, strict=False)
            except ValueError:
                continue
            if addresses and all(address in network for address in addresses):
                return True
        elif host == entry.lower().strip("[]"):
            return True
    return False


def _embedded_v4(address) -> ipaddress.IPv4Address | None:
    if address.version != 6:
        return None
    if address.ipv4_mapped:
        return address.ipv4_mapped
    if address.sixtofour:
        return address.sixtofour
    if address.teredo:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_problem(address) -> str | None:
    """What kind of non-public address this is, or None for a public one (loopback passes
    when MODEL_ALLOW_LOOPBACK is on, as in development and tests)."""
    inner = _embedded_v4(address)
    if inner is not None:
        return address_problem(inner)
    if address.is_loopback:
        return None if settings.MODEL_ALLOW_LOOPBACK else _("a loopback address")
    if address in _METADATA_ADDRESSES:
        return _("a cloud metadata address")
    if address.is_unspecified:
        return _("the unspecified address")
    if address.is_link_local:
        return _("a link-local address")
    if address.is_multicast:
        return _("a multicast address")
    if address.is_private:
        return _("a private address")
    if address.is_reserved or not address.is_global:
        return _("a reserved, non-public address")
    return None


def resolve(host: str, port: int | None) -> list:
    """Every address ``host`` resolves to (an IP literal, decimal or hex forms included, resolves to itself)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def base_url_problem(base_url: str) -> str | None:
    """Why the server may not send requests to ``base_url``, or None when it may.

    The check is on the addresses the name resolves to now, all of them, so a public-looking
    name that points at a private address is refused.
    """
    if not base_url:
        return None
    try:
        url = urlsplit(base_url.strip())
        port = url.port
    except ValueError:
        return _("not a valid URL")
    if url.username is not None or url.password is not None:
        return _("a base URL may not carry a user name or password; name the key's variable instead")
    if "\\" in base_url:
        # Parsers disagree on a backslash: "http://a.org\@b.org" is a.org to some and b.org to others.
        return _("a base URL may not contain a backslash")
    ambiguous = path_problem(url.path)
    if ambiguous:
        return ambiguous
    if _allow_listed(host=url.hostname or "", port=None, addresses=[], url=url):
        return None
    if url.scheme.lower() not in {"http", "https"}:
        return _("only http and https URLs are allowed")
    host = url.hostname
    if not host:
        return _("the URL has no host")
    try:
        addresses = resolve(host, port or _default_port(url.scheme.lower()))
    except (OSError, UnicodeError, ValueError):
        return _("the host %(host)s cannot be resolved") % {"host": host}
    if not addresses:
        return _("the host %(host)s cannot be resolved") % {"host": host}
    if _allow_listed(host=url.hostname or "", port=None, addresses=addresses, url=url):
        return None
    for address in addresses:
        kind = address_problem(address)
        if kind:
            return _(
                "%(host)s resolves to %(address)s, which is %(kind)s; an administrator may allow it "
                "in MODEL_BASE_URL_ALLOW"
            ) % {"host": host, "address": address, "kind": kind}
    return None


def _host_key(host: str) -> str:
    """A host as MODEL_KEY_HOSTS compares it: lower case, no brackets or trailing dot, an IP address
    in its canonical form, a name in its ASCII (IDNA) form, as the HTTP client sends it."""
    host = (host or "").strip().lower().strip("[]").rstrip(".")
    try:
        return str(ipaddress.ip_address(host.split("%", 1)[0]))
    except ValueError:
        pass
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return (_embedded_v4(address) or address).is_loopback


def key_hosts(name: str) -> tuple[str, ...]:
    """The hosts MODEL_KEY_HOSTS lets the key in the variable ``name`` be sent to."""
    return tuple(_host_key(host) for host in settings.MODEL_KEY_HOSTS.get(name, ()))


def key_host_problem(name: str, host: str) -> str | None:
    """Why the key in the variable ``name`` may not be sent to ``host``, or None when it may: only
    to a host MODEL_KEY_HOSTS binds to that variable, or to loopback outside production."""
    if not name:
        return None
    target = _host_key(host)
    allowed = key_hosts(name)
    loopback = bool(settings.MODEL_ALLOW_LOOPBACK)
    if target and (target in allowed or (loopback and _is_loopback_host(target))):
        return None
    shown = host or "-"
    if allowed:
        return _(
            "the key in %(name)s may be sent only to %(hosts)s%(loopback)s, not to %(host)s; an administrator "
            "may bind it to more hosts in MODEL_KEY_HOSTS (e.g. MODEL_KEY_HOSTS=%(name)s=%(hosts_list)s,%(host)s)"
        ) % {
            "name": name,
            "hosts": ", ".join(allowed),
            "hosts_list": ",".join(allowed),
            "loopback": _(" and loopback addresses") if loopback else "",
            "host": shown,
        }
    return _(
        "%(name)s is bound to no host in MODEL_KEY_HOSTS, so its key may be sent %(reach)s, not to %(host)s; "
        "an administrator may bind it in MODEL_KEY_HOSTS (e.g. MODEL_KEY_HOSTS=%(name)s=%(host)s)"
    ) % {
        "name": name,
        "reach": _("only to loopback addresses") if loopback else _("to no host"),
        "host": shown,
    }


def key_binding_problem(api_key_env: str, base_url: str) -> str | None:
    """Why a model reading its key from ``api_key_env`` may not send it to ``base_url`` (the openai
    client's default when empty), or None."""
    if not api_key_env:
        return None
    try:
        host = urlsplit((base_url or "").strip() or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL)
        hostname = host.hostname or ""
    except ValueError:
        return None  # base_url_problem says what is wrong with the URL
    return key_host_problem(api_key_env, hostname)


def model_problems(model) -> dict[str, str]:
    """The refusals of a model's API key variable and base URL, by field."""
    problems = {}
    if getattr(model, "provider", "") == "external":
        return {"provider": _("it was imported from a harness log and cannot be called")}
    key_env = (model.api_key_env or "").strip()
    key = api_key_env_problem(key_env)
    # The local transformers provider reads no key and sends nothing.
    if not key and getattr(model, "provider", "") != "transformers":
        key = key_binding_problem(key_env, model.base_url or "")
    if key:
        problems["api_key_env"] = key
    url = base_url_problem(model.base_url or "")
    if url:
        problems["base_url"] = url
    return problems


def model_refusal(model) -> str | None:
    """One sentence naming the model and what is wrong with it, or None when it may be used."""
    problems = model_problems(model)
    if not problems:
        return None
    # A stored model that turned forbidden is worth an administrator's look (names only, never a value).
    logger.warning("model %s (id %s) refused: %s", model.name, model.pk, problems)
    return _("Model %(name)s cannot be used: %(problems)s.") % {
        "name": model.name or model.model_id,
        "problems": "; ".join(f"{field}: {message}" for field, message in problems.items()),
    }


_SECRET_PATTERNS = [
    (re.compile(r"(?i)\b(proxy-)?authori[sz]ation\b[\"']?\s*[:=]\s*[^\r\n,;}]*"), "Authorization: [redacted]"),
    (re.compile(r"(?i)\bbearer\s+[^\s\"',;}]+"), "Bearer [redacted]"),
    (re.compile(r"(?i)\b(x-)?api[-_]?key\b[\"']?\s*[:=]\s*[\"']?[^\s\"',;}]+"), "api-key: [redacted]"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{12,}"), "[redacted]"),
]


def clean_error_text(text: str, *, secrets: tuple[str, ...] = (), limit: int = ERROR_TEXT_MAX_CHARS) -> str:
    """A server's error text fit to keep on an item: the given secret values and anything that
    looks like a credential header are redacted, and it is cut to ``limit`` characters."""
    text = str(text)
    for secret in secrets:
        # Short placeholders ("not-needed", "x") are not secrets and would mangle the text.
        if secret and len(secret) >= 8:
            text = text.replace(secret, "[redacted]")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


class EndpointRefused(Exception):
    """A connection the guard refused: the name resolved, at connect time, to a refused address."""


def _connect_check(host: str, port: int) -> list:
    """The addresses to connect to, all of them allowed; raises EndpointRefused otherwise."""
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError, ValueError) as exc:
        raise EndpointRefused(_("the host %(host)s cannot be resolved") % {"host": host}) from exc
    if not addresses:
        raise EndpointRefused(_("the host %(host)s cannot be resolved") % {"host": host})
    if _allow_listed(host=host, port=port, addresses=addresses):
        return addresses
    for address in addresses:
        kind = address_problem(address)
        if kind:
            raise EndpointRefused(
                _(
                    "%(host)s resolves to %(address)s, which is %(kind)s; an administrator may allow it in "
                    "MODEL_BASE_URL_ALLOW"
                )
                % {"host": host, "address": address, "kind": kind}
            )
    return addresses


class KeyHostRefused(EndpointRefused):
    """A request that would have carried a key to a host MODEL_KEY_HOSTS does not bind it to."""


def _key_binding_hook(*, api_key_env: str, api_key: str):
    """A request hook refusing to send the key to a host it is not bound to.

    httpx runs request hooks for every request it sends, each redirect included, with the headers
    that will go out: a redirect to another host loses the Authorization header in httpx itself,
    and whatever carries the key anyway (a same-origin request after MODEL_KEY_HOSTS changed, a
    future client that keeps the header) is stopped here. The settings are read per request, so a
    cached client obeys the current binding.
    """
    import httpx2

    def check(request) -> None:
        headers = request.headers
        if "authorization" not in headers and not (api_key and any(api_key in value for value in headers.values())):
            return
        host = request.url.raw_host.decode("ascii", "replace")
        problem = key_host_problem(api_key_env, host)
        if problem:
            logger.warning("request to %s with the key in %s refused: not bound to that host", host, api_key_env)
            # A request error, so the SDK reports it as a connection error carrying the refusal.
            raise httpx2.ConnectError(str(problem), request=request) from KeyHostRefused(problem)

    return check


@functools.cache
def model_tls_context():
    """The TLS settings of every model client in this process: httpx's own default (certifi's
    certificates, or SSL_CERT_FILE / SSL_CERT_DIR as at the first client), read once. Reading the
    certificates took 56 ms of CPU, paid again by each new client (one per endpoint and key); an
    SSLContext is safe to share between threads and connections."""
    import httpx2

    return httpx2.create_ssl_context()


def guarded_http_client(*, timeout: float, api_key_env: str = "", api_key: str = ""):
    """An HTTP client for the openai SDK that checks the address of every connection it opens and,
    given the key and its variable, the host of every request that would carry the key.

    The check at registration and at run start resolves the name once; the client resolves it
    again for each new connection and follows redirects, so a name re-pointed in between (DNS
    rebinding) or a redirect to a metadata address would slip past. Here the socket connects
    only to an address that was just checked. With an HTTP(S) proxy in the environment the proxy
    makes the connections, so the client connects through it (as the SDK's own would) with no
    address check: egress rules then belong to the proxy. The key's binding holds either way.
    """
    import urllib.request

    import httpcore2
    import httpx2
    import openai

    hooks = {"request": [_key_binding_hook(api_key_env=api_key_env, api_key=api_key)]} if api_key_env else {}
    if {"http", "https", "all"} & set(urllib.request.getproxies()):
        return openai.DefaultHttpxClient(timeout=timeout, event_hooks=hooks, verify=model_tls_context())

    class GuardedBackend(httpcore2.SyncBackend):
        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            try:
                addresses = _connect_check(host, port)
            except EndpointRefused as exc:
                logger.warning("connection to %s:%s refused: %s", host, port, exc)
                # As a connect error, so httpx and the SDK pass it on like any other; the cause
                # lets the provider tell a refusal from a server that is down.
                raise httpcore2.ConnectError(str(exc)) from exc
            last_error = None
            for address in addresses:
                try:
                    return super().connect_tcp(
                        str(address), port, timeout=timeout, local_address=local_address, socket_options=socket_options
                    )
                except httpcore2.ConnectError as exc:
                    last_error = exc
            raise last_error

    transport = httpx2.HTTPTransport(
        verify=model_tls_context(), limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    )
    # httpx offers no public way to hand its pool a network backend; the pool reads this attribute
    # for every new connection.
    transport._pool._network_backend = GuardedBackend()
    return openai.DefaultHttpxClient(transport=transport, timeout=timeout, event_hooks=hooks)
