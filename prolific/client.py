"""The HTTP client of Prolific's REST API: token from the environment, retries, pagination, a log of every call.

The token is read from ``os.environ[settings.PROLIFIC_API_TOKEN_ENV]`` at each request and sent
only in the ``Authorization`` header; it never reaches the database or a log (it is redacted if
it ever shows up in a URL, a body or an answer). Every attempt is stored as an ``ApiCall``.

Retries: 429 is always retried (Prolific refused the request before doing anything), honouring
Retry-After up to PROLIFIC_RETRY_AFTER_CAP_S. A 5xx or a lost connection is retried only for
requests the caller marks ``retry_unsafe=True`` (reads, and writes that Prolific treats as
idempotent): a create or a pay that failed half-way must not be sent again blindly.
"""

import json
import logging
import os
import time
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

import requests
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .models import ApiCall

logger = logging.getLogger(__name__)

TIMEOUT = (5, 30)
RESPONSE_LOG_CHARS = 20_000
REDACTED = "[redacted]"


class ProlificError(Exception):
    """Anything that stops a Prolific operation; the message is meant for the researcher."""


class ProlificNotConfigured(ProlificError):
    """No API token in the environment."""

    def __init__(self):
        self.env_var = settings.PROLIFIC_API_TOKEN_ENV
        super().__init__(
            _("No Prolific API token: set the environment variable %(var)s (a token from Prolific's settings page).")
            % {"var": self.env_var}
        )


class ProlificApiError(ProlificError):
    """Prolific answered with an error (or could not be reached: status None)."""

    def __init__(self, status: int | None, message: str):
        self.status = status
        self.message = message
        super().__init__(f"HTTP {status}: {message}" if status else message)

    @property
    def definite(self) -> bool:
        """Prolific certainly did nothing: it refused the request (a 4xx other than 429)."""
        return self.status is not None and 400 <= self.status < 500 and self.status != 429


def api_token() -> str:
    return os.environ.get(settings.PROLIFIC_API_TOKEN_ENV, "").strip()


def redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def _redact_json(value, secrets: tuple[str, ...], secret_keys: tuple[str, ...]):
    if isinstance(value, dict):
        return {
            key: REDACTED if key in secret_keys else _redact_json(item, secrets, secret_keys)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redact_json(item, secrets, secret_keys) for item in value]
    if isinstance(value, str):
        return redact(value, secrets)
    return value


def error_message(response) -> str:
    """Prolific's own words: ``error.detail`` (a string or field errors), ``error.title`` or ``message``."""
    try:
        data = response.json()
    except ValueError:
        return (response.text or response.reason or "").strip()[:500]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            detail = error.get("detail")
            if isinstance(detail, dict):
                detail = "; ".join(
                    f"{field}: {' '.join(map(str, v)) if isinstance(v, list) else v}" for field, v in detail.items()
                )
            elif isinstance(detail, list):
                detail = " ".join(map(str, detail))
            if detail:
                return str(detail)
            if error.get("title"):
                return str(error["title"])
        elif isinstance(error, str) and error:
            return error
        if data.get("message"):
            return str(data["message"])
        if data.get("detail"):
            return str(data["detail"])
    return json.dumps(data)[:500]


def _retry_after(response) -> float | None:
    value = (response.headers.get("Retry-After") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - timezone.now()).total_seconds())
    except (TypeError, ValueError):
        return None


class ProlificClient:
    """One researcher action's calls; ``study`` labels the logged calls for the study's log page."""

    def __init__(self, *, study=None):
        self.study = study
        self.token = api_token()
        if not self.token:
            raise ProlificNotConfigured()
        self.base = settings.PROLIFIC_API_URL.rstrip("/") + "/"
        self.session = requests.Session()

    # -- requests ------------------------------------------------------------------------

    def url(self, path: str) -> str:
        return urljoin(self.base, path.lstrip("/"))

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body=None,
        params: dict | None = None,
        retry_unsafe: bool = False,
        secret_keys: tuple[str, ...] = (),
        redact_values: tuple[str, ...] = (),
    ) -> tuple[dict | list | None, dict]:
        """(the answer's JSON or None, its headers); raises ProlificApiError on an error answer.

        ``secret_keys``: keys of the answer whose values never reach the log (a webhook secret);
        ``redact_values``: strings replaced wherever they appear in what is logged.
        """
        url = path if path.startswith(("http://", "https://")) else self.url(path)
        self._check_host(url)
        secrets = (self.token, *redact_values)
        attempts = settings.PROLIFIC_MAX_ATTEMPTS
        failure: ProlificApiError | None = None
        for attempt in range(1, attempts + 1):
            started = time.monotonic()
            wait = None
            try:
                response = self.session.request(
                    method,
                    url,
                    json=json_body,
                    params=params,
                    headers={"Authorization": f"Token {self.token}", "Accept": "application/json"},
                    timeout=TIMEOUT,
                    allow_redirects=False,
                )
            except requests.RequestException as exc:
                message = _("Prolific could not be reached: %(error)s") % {"error": type(exc).__name__}
                self._log(
                    method, url, json_body, params, None, "", redact(str(exc), secrets), attempt, started, secrets
                )
                failure = ProlificApiError(None, message)
                if not retry_unsafe:
                    raise failure from None
            else:
                self._log(
                    method,
                    url,
                    json_body,
                    params,
                    response.status_code,
                    self._loggable(response, secrets, secret_keys),
                    "",
                    attempt,
                    started,
                    secrets,
                )
                status = response.status_code
                if status < 400:
                    if not response.content:
                        return None, dict(response.headers)
                    try:
                        return response.json(), dict(response.headers)
                    except ValueError:
                        raise ProlificApiError(status, _("Prolific answered something that is not JSON.")) from None
                failure = self._failure(response)
                if status == 429 or (status >= 500 and retry_unsafe):
                    wait = _retry_after(response)
                else:
                    raise failure
            if attempt < attempts:
                delay = wait if wait is not None else settings.PROLIFIC_BACKOFF_BASE * 2 ** (attempt - 1)
                delay = min(delay, settings.PROLIFIC_RETRY_AFTER_CAP_S) if wait is not None else delay
                logger.info("Prolific busy (%s); attempt %s of %s, waiting %.2f s", failure, attempt, attempts, delay)
                time.sleep(delay)
        raise failure

    def get(self, path: str, **kwargs):
        return self.request("GET", path, retry_unsafe=True, **kwargs)[0]

    def post(self, path: str, json_body=None, **kwargs):
        return self.request("POST", path, json_body=json_body, **kwargs)[0]

    def paginate(self, path: str, *, params: dict | None = None):
        """Every result of a list, following ``_links.next.href`` until it is null."""
        url, query = path, params
        seen = set()
        while url:
            page = self.get(url, params=query)
            if not isinstance(page, dict):
                raise ProlificApiError(200, _("Prolific answered a list in an unexpected shape."))
            yield from page.get("results") or []
            next_url = ((page.get("_links") or {}).get("next") or {}).get("href")
            if next_url in seen:
                raise ProlificApiError(200, _("Prolific's next page points back at a page already read."))
            seen.add(next_url)
            # The next link carries its own query (offset, limit).
            url, query = next_url, None

    # -- helpers -------------------------------------------------------------------------

    def _check_host(self, url: str):
        # The token goes only to the configured API: a next link elsewhere is not followed.
        base, there = urlsplit(self.base), urlsplit(url)
        if (base.scheme, base.netloc) != (there.scheme, there.netloc):
            raise ProlificApiError(None, _("Refusing to send the token to %(host)s.") % {"host": there.netloc})

    def _failure(self, response) -> ProlificApiError:
        status = response.status_code
        message = error_message(response)
        if status == 401:
            text = _("Prolific refused the API token (%(var)s): it is wrong or was deleted. %(message)s")
            return ProlificApiError(status, text % {"var": settings.PROLIFIC_API_TOKEN_ENV, "message": message})
        if status == 403:
            text = _("The Prolific API token (%(var)s) lacks the permission for this request. %(message)s")
            return ProlificApiError(status, text % {"var": settings.PROLIFIC_API_TOKEN_ENV, "message": message})
        if status == 429:
            return ProlificApiError(status, _("Prolific is rate limiting requests; try again later. %s") % message)
        return ProlificApiError(status, message or response.reason)

    @staticmethod
    def _loggable(response, secrets, secret_keys) -> str:
        if not response.content:
            return ""
        text = response.text
        if secret_keys:
            try:
                text = json.dumps(_redact_json(response.json(), secrets, secret_keys))
            except ValueError:
                return ""  # an answer meant to carry a secret, unreadable: nothing of it is kept
        return redact(text, secrets)[:RESPONSE_LOG_CHARS]

    def _log(self, method, url, body, params, status, answer, error, attempt, started, secrets):
        if params:
            url = f"{url}?{'&'.join(f'{k}={v}' for k, v in params.items())}"
        try:
            with transaction.atomic():
                ApiCall.objects.create(
                    study=self.study,
                    method=method,
                    url=redact(url, secrets)[:500],
                    request_body=_redact_json(body, secrets, ()) if body is not None else None,
                    status_code=status,
                    response_body=answer,
                    error=error[:2000],
                    attempt=attempt,
                    duration_ms=int((time.monotonic() - started) * 1000),
                )
        except SoftTimeLimitExceeded:
            raise
        except Exception:  # noqa: BLE001 - the log must never stop a payment's bookkeeping
            logger.exception("could not store the Prolific API call %s %s", method, url)
