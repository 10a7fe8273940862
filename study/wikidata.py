"""The Chinese label of an English term on Wikidata, as the paper glossed culture-specific terms (A.3).

The term is searched (``wbsearchentities``, English, top 1; a plural with no hit again in the
singular) and the item's Chinese label read
(``wbgetentities``). Every answer, a miss included, is kept in WikidataLookup so a term is asked
once. This runs in the preparation task and never during a participant's request; it follows
Wikidata's etiquette: a descriptive User-Agent, ``maxlag``, and backing off when told to.
"""

import logging
import time
from dataclasses import dataclass

import requests
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from .models import WikidataLookup
from .text import term_singular

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10
MAXLAG_SECONDS = 5
# A server asking for more than this is treated as asking for this: the task has a time limit.
MAX_RETRY_AFTER_SECONDS = 60
# Simplified Chinese first, since the Chinese participants read Simplified: zh-hans, then zh-cn
# (mainland, also Simplified), then the generic zh (script unspecified), then mul (a label valid
# in every language, often the native name).
LABEL_LANGUAGES = ("zh-hans", "zh-cn", "zh", "mul")
_BACKOFF_CODES = {"ratelimited", "maxlag"}
_BACKOFF_STATUSES = {429, 503}


class WikidataError(Exception):
    """Wikidata could not be asked: it kept refusing, or answered something unexpected."""


@dataclass(frozen=True)
class WikidataResult:
    qid: str
    zh: str
    language: str

    @property
    def found(self) -> bool:
        return bool(self.zh)


def lookup_key(term: str) -> str:
    return " ".join(term.split()).lower()


def wikidata_label(term: str) -> WikidataResult:
    """The top Wikidata item for ``term`` and its Chinese label; empty fields when there is none."""
    key = lookup_key(term)
    if not key:
        return WikidataResult("", "", "")
    cached = WikidataLookup.objects.filter(query=key).first()
    if cached is not None:
        return WikidataResult(cached.qid, cached.zh, cached.label_language)

    hits = _search(" ".join(term.split()))
    singular = term_singular(term)
    if not hits and singular.lower() != key:
        # Wikidata's labels are singular ("mandarin duck"): a term written in the plural, as a
        # model copies it from the text, is searched again in the singular.
        hits = _search(singular)
    raw = {"search": hits[:1]}
    result = WikidataResult("", "", "")
    if hits and hits[0].get("id"):
        qid = hits[0]["id"]
        entities = _ask(
            {"action": "wbgetentities", "ids": qid, "props": "labels", "languages": "|".join(LABEL_LANGUAGES)}
        )
        labels = (entities.get("entities") or {}).get(qid, {}).get("labels") or {}
        raw["labels"] = labels
        result = WikidataResult(qid, "", "")
        for language in LABEL_LANGUAGES:
            value = (labels.get(language) or {}).get("value", "")
            if value:
                result = WikidataResult(qid, value, language)
                break
    _remember(key, result, raw)
    return result


def _search(text: str) -> list:
    search = _ask(
        {"action": "wbsearchentities", "search": text, "language": "en", "uselang": "en", "type": "item", "limit": 1}
    )
    return search.get("search") or []


def _remember(key: str, result: WikidataResult, raw: dict) -> None:
    try:
        with transaction.atomic():
            WikidataLookup.objects.update_or_create(
                query=key, defaults={"qid": result.qid, "zh": result.zh, "label_language": result.language, "raw": raw}
            )
    except IntegrityError:
        pass  # another worker stored the same term first; its answer is as good


def _ask(params: dict) -> dict:
    """One API call, retried with exponential backoff while Wikidata says it is busy."""
    params = {**params, "format": "json", "maxlag": MAXLAG_SECONDS}
    headers = {"User-Agent": settings.WIKIDATA_USER_AGENT, "Accept": "application/json"}
    attempts = settings.WIKIDATA_MAX_ATTEMPTS
    reason = ""
    for attempt in range(1, attempts + 1):
        retry_after = None
        try:
            response = requests.get(settings.WIKIDATA_API_URL, params=params, headers=headers, timeout=TIMEOUT_SECONDS)
        except (requests.ConnectionError, requests.Timeout) as exc:
            reason = str(exc)
        else:
            retry_after = _retry_after(response)
            if response.status_code in _BACKOFF_STATUSES:
                reason = f"HTTP {response.status_code}"
            elif response.status_code != 200:
                raise WikidataError(
                    _("Wikidata answered HTTP %(status)s to %(action)s.")
                    % {"status": response.status_code, "action": params["action"]}
                )
            else:
                try:
                    data = response.json()
                except ValueError:
                    raise WikidataError(_("Wikidata answered something that is not JSON.")) from None
                error = data.get("error") if isinstance(data, dict) else None
                if not error:
                    return data
                code = error.get("code", "")
                if code not in _BACKOFF_CODES:
                    raise WikidataError(
                        _("Wikidata refused %(action)s: %(code)s %(info)s")
                        % {"action": params["action"], "code": code, "info": error.get("info", "")}
                    )
                reason = code
        if attempt < attempts:
            delay = retry_after if retry_after is not None else settings.WIKIDATA_BACKOFF_BASE * 2 ** (attempt - 1)
            logger.info("Wikidata busy (%s); attempt %s of %s, waiting %.1f s", reason, attempt, attempts, delay)
            time.sleep(min(delay, MAX_RETRY_AFTER_SECONDS))
    raise WikidataError(
        _("Wikidata was still busy after %(n)s attempts (%(reason)s); try again later.")
        % {"n": attempts, "reason": reason}
    )


def _retry_after(response) -> float | None:
    value = response.headers.get("Retry-After", "")
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
