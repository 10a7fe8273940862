"""A loopback stand-in for the Wikidata API (``/w/api.php``), for the study tests.

It answers ``wbsearchentities`` and ``wbgetentities`` with the JSON shapes of the real API,
from a dict of known terms::

    with FakeWikidata({"peony": {"id": "Q171497", "labels": {"zh-hans": "牡丹", "zh": "牡丹"}}}) as wikidata:
        wikidata.busy(times=2)             # the next two requests get {"error": {"code": "ratelimited"}}
        ... requests.get(wikidata.url, params=...) ...
        wikidata.requests[0]["headers"]["User-Agent"]

Labels are filtered by the ``languages`` parameter as the real API does. Every request is
recorded (path, query parameters, headers, what was answered).
"""

from __future__ import annotations

import collections
import json
import threading
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.loopback import LoopbackHandler, LoopbackServer, serve_in_thread, stop_serving


class FakeWikidata:
    def __init__(self, terms: dict[str, dict] | None = None):
        # term (any case) -> {"id": "Q..", "labels": {language: value}, "description": str}
        self.terms = {key.lower(): value for key, value in (terms or {}).items()}
        self.requests: list[dict] = []
        self._faults: collections.deque[dict] = collections.deque()
        self._lock = threading.Lock()
        self._httpd: LoopbackServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def busy(self, *, times: int = 1, code: str = "ratelimited", status: int = 200, retry_after: str | None = None):
        """Answer the next ``times`` requests with an API error ``code`` (HTTP ``status``)."""
        with self._lock:
            self._faults.extend([{"code": code, "status": status, "retry_after": retry_after}] * times)

    def add(self, term: str, qid: str, labels: dict[str, str]):
        self.terms[term.lower()] = {"id": qid, "labels": labels}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/w/api.php"

    def actions(self) -> list[str]:
        with self._lock:
            return [r["params"].get("action", "") for r in self.requests]

    # -- answers ------------------------------------------------------------

    def answer(self, params: dict) -> tuple[int, dict, dict]:
        """(status, headers, body) for one request."""
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
        if fault:
            headers = {"Retry-After": fault["retry_after"]} if fault["retry_after"] is not None else {}
            info = "You've exceeded your rate limit." if fault["code"] == "ratelimited" else "Waiting for a replica."
            return fault["status"], headers, {"error": {"code": fault["code"], "info": info}, "servedby": "fake"}
        if params.get("format") != "json":
            return 200, {}, {"error": {"code": "badformat", "info": "fake answers JSON only"}}
        action = params.get("action")
        if action == "wbsearchentities":
            return 200, {}, self._search(params)
        if action == "wbgetentities":
            return 200, {}, self._entities(params)
        return 200, {}, {"error": {"code": "badvalue", "info": f'Unrecognized value for parameter "action": {action}.'}}

    def _search(self, params: dict) -> dict:
        search = params.get("search", "")
        known = self.terms.get(search.lower())
        hits = []
        if known:
            hits.append(
                {
                    "id": known["id"],
                    "title": known["id"],
                    "pageid": 1,
                    "concepturi": f"http://www.wikidata.org/entity/{known['id']}",
                    "url": f"//www.wikidata.org/wiki/{known['id']}",
                    "label": search,
                    "description": known.get("description", ""),
                    "match": {"type": "label", "language": "en", "text": search},
                }
            )
        return {"searchinfo": {"search": search}, "search": hits[: int(params.get("limit", 7))], "success": 1}

    def _entities(self, params: dict) -> dict:
        languages = params.get("languages", "").split("|") if params.get("languages") else None
        entities = {}
        for qid in params.get("ids", "").split("|"):
            known = next((t for t in self.terms.values() if t["id"] == qid), None)
            if known is None:
                entities[qid] = {"id": qid, "missing": ""}
                continue
            labels = {
                language: {"language": language, "value": value}
                for language, value in known["labels"].items()
                if languages is None or language in languages
            }
            entities[qid] = {"type": "item", "id": qid, "labels": labels}
        return {"entities": entities, "success": 1}

    # -- life ---------------------------------------------------------------

    def __enter__(self) -> FakeWikidata:
        fake = self

        class Handler(LoopbackHandler):
            def do_GET(self):  # noqa: N802 - the http.server API
                parts = urlsplit(self.path)
                params = {key: values[-1] for key, values in parse_qs(parts.query).items()}
                status, headers, body = fake.answer(params)
                # Recorded before the reply, so a client that has its answer finds the request listed.
                with fake._lock:
                    fake.requests.append(
                        {
                            "path": parts.path,
                            "params": params,
                            "headers": dict(self.headers),
                            "status": status,
                            "error": body.get("error", {}).get("code", ""),
                        }
                    )
                payload = json.dumps(body, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = LoopbackServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self._thread = serve_in_thread(self._httpd, name=f"fake-wikidata-{self.port}")
        return self

    def __exit__(self, *exc):
        stop_serving(self._httpd, self._thread)


KNOWN_TERMS = {
    "peony": {"id": "Q171497", "labels": {"zh-hans": "牡丹", "zh": "牡丹花", "en": "peony"}},
    "crane": {"id": "Q25420", "labels": {"zh": "鹤", "en": "crane"}},
    "long life": {"id": "Q1", "labels": {"zh-hans": "长寿"}},
    "qilin": {"id": "Q1058469", "labels": {"mul": "麒麟", "en": "qilin"}},
    "shan shui": {"id": "Q1146395", "labels": {"zh-cn": "山水画", "zh": "山水畫"}},
    "calligraphy": {"id": "Q12681", "labels": {"en": "calligraphy"}},
}


@pytest.fixture
def fake_wikidata(settings):
    """The fake server with KNOWN_TERMS, wired into the settings with a backoff of a millisecond."""
    with FakeWikidata({key: dict(value) for key, value in KNOWN_TERMS.items()}) as server:
        settings.WIKIDATA_API_URL = server.url
        settings.WIKIDATA_BACKOFF_BASE = 0.001
        settings.WIKIDATA_USER_AGENT = "VIVIDStudioTests/1.0 (test suite; research@example.org)"
        yield server
