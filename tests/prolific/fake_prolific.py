"""A loopback stand-in for Prolific's REST API (``/api/v1/``), for the Prolific tests.

It answers in the shapes of /work/shared/reference/prolific-api.md and keeps its state in
memory::

    with FakeProlific(page_size=2) as prolific:
        study_id = ...  # created by the app through POST /api/v1/studies/
        sub = prolific.add_submission(study_id, "PID1", status="AWAITING REVIEW")
        prolific.set_status(sub, "RETURNED")
        prolific.fail(status=429, times=2, retry_after="0")   # the next two requests get 429
        prolific.refuse(sub, "Submission cannot be approved")  # its approval answers 400
        prolific.pay_counts[bulk_bonus_id]                      # how often a bulk bonus was paid
        prolific.post_webhook(url, {"resource_id": sub, ...})   # signed with prolific.webhook_secret

Every request is recorded (method, path, query, JSON body, Authorization header, status).
A request without ``Authorization: Token <prolific.token>`` gets 401.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import hmac
import itertools
import json
import threading
import time
from decimal import ROUND_CEILING, Decimal
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests

from tests.loopback import LoopbackHandler, LoopbackServer, serve_in_thread, stop_serving

TOKEN = "fake-prolific-token-0123456789"
WEBHOOK_SECRET = "fake-webhook-secret-abcdef"
WORKSPACE_ID = "ws0000000000000000000001"
# Prolific's service fee on bonuses, a third rounded up to a hundredth of the minor unit: the
# documentation's two bonuses of 4.25 answer "amount": 850, "fees": 283.34. VAT left at zero.
FEE_RATE = Decimal(1) / Decimal(3)
SUBMISSION_ACTIONS = {
    "APPROVE": "APPROVED",
    "REJECT": "REJECTED",
    "RETURN": "RETURNED",
    "SCREEN_OUT": "SCREENED OUT",
    "COMPLETE": "AWAITING REVIEW",
    "START": "ACTIVE",
    "UNREJECT": "AWAITING REVIEW",
    "UNRETURN": "ACTIVE",
}
REJECTION_CATEGORIES = {
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
}


def _number(value: Decimal) -> int | float:
    """850, not 850.0: a whole amount is a JSON integer, as Prolific writes it."""
    return int(value) if value == value.to_integral_value() else float(value)


# The first hex digits of each kind of id: st(udy) 5d, s(u)b(mission) 5b, sec(ret) 5ec, ...
ID_PREFIXES = {"st": "5d", "sb": "5b", "sc": "5ec", "hk": "400c", "cf": "cf", "bb": "bb"}


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Prolific's webhook signature: base64(HMAC-SHA256(secret, timestamp + raw body))."""
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()


class FakeProlific:
    def __init__(self, *, page_size: int = 50, bulk_approve_limit: int = 1000, token: str = TOKEN):
        self.token = token
        self.page_size = page_size
        self.bulk_approve_limit = bulk_approve_limit
        self.webhook_secret = WEBHOOK_SECRET
        self.workspace_id = WORKSPACE_ID
        self.studies: dict[str, dict] = {}
        self.submissions: dict[str, dict] = {}
        self.bonuses: dict[str, dict] = {}
        self.pay_counts: collections.Counter = collections.Counter()
        self.subscriptions: dict[str, dict] = {}
        self.requests: list[dict] = []
        self.refusals: dict[str, str] = {}
        # Seconds each request waits before it is answered (a slow Prolific, for races).
        self.delay = 0.0
        self._faults: collections.deque[dict] = collections.deque()
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._httpd: LoopbackServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- set-up helpers ------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1/"

    def new_id(self, kind: str) -> str:
        # 24 hex characters, like Prolific's ObjectIds (the entry link refuses any other shape); the
        # kind's hex prefix keeps them readable in failures.
        prefix = ID_PREFIXES[kind]
        with self._lock:
            return f"{prefix}{next(self._ids):0{24 - len(prefix)}x}"

    def fail(self, *, status: int = 429, times: int = 1, retry_after: str | None = None, path: str = ""):
        """Answer the next ``times`` requests (whose path contains ``path``) with HTTP ``status``."""
        with self._lock:
            self._faults.extend([{"status": status, "retry_after": retry_after, "path": path}] * times)

    def refuse(self, submission_id: str, message: str = "This submission cannot be approved."):
        """Approvals of this submission (alone or in a bulk) answer 400 with ``message``."""
        with self._lock:
            self.refusals[submission_id] = message

    def add_study(self, **fields) -> str:
        study_id = self.new_id("st")
        with self._lock:
            self.studies[study_id] = {
                "id": study_id,
                "status": "UNPUBLISHED",
                "name": "",
                "internal_name": "",
                **fields,
            }
        return study_id

    def add_submission(
        self,
        study_id: str,
        participant_id: str,
        *,
        status: str = "ACTIVE",
        submission_id: str | None = None,
        study_code: str = "",
    ) -> str:
        """A participant's submission to a study (its id is what Prolific puts in SESSION_ID)."""
        submission_id = submission_id or self.new_id("sb")
        with self._lock:
            self.submissions[submission_id] = {
                "id": submission_id,
                "study_id": study_id,
                "participant_id": participant_id,
                "status": status,
                "started_at": "2026-12-01T10:00:00.000000Z",
                "completed_at": "2026-12-01T10:20:00.000000Z" if status not in ("ACTIVE", "RESERVED") else None,
                "is_complete": status not in ("ACTIVE", "RESERVED", "RETURNED", "TIMED-OUT"),
                "time_taken": 1200,
                "reward": 300,
                "study_code": study_code,
                "bonus_payments": [],
            }
        return submission_id

    def set_status(self, submission_id: str, status: str):
        with self._lock:
            self.submissions[submission_id]["status"] = status

    def status_of(self, submission_id: str) -> str:
        with self._lock:
            return self.submissions[submission_id]["status"]

    def calls(self, method: str | None = None, path_contains: str = "") -> list[dict]:
        with self._lock:
            return [
                r
                for r in self.requests
                if (method is None or r["method"] == method) and path_contains in r["path"] and r["status"] != 401
            ]

    def signed_headers(self, body: bytes, *, secret: str | None = None, timestamp: str | None = None) -> dict:
        timestamp = timestamp if timestamp is not None else str(int(time.time()))
        return {
            "Content-Type": "application/json",
            "X-Prolific-Request-Timestamp": timestamp,
            "X-Prolific-Request-Signature": sign(secret or self.webhook_secret, timestamp, body),
        }

    def webhook_body(self, submission_id: str, status: str | None = None) -> bytes:
        with self._lock:
            submission = self.submissions[submission_id]
            return json.dumps(
                {
                    "resource_id": submission_id,
                    "event_type": "submission.status.change",
                    "participant_id": submission["participant_id"],
                    "status": status or submission["status"],
                }
            ).encode()

    def post_webhook(self, url: str, submission_id: str, status: str | None = None, **sign_options):
        """POST Prolific's submission.status.change event for a submission to ``url``, signed."""
        body = self.webhook_body(submission_id, status)
        return requests.post(url, data=body, headers=self.signed_headers(body, **sign_options), timeout=10)

    # -- answers -------------------------------------------------------------------------

    def _error(self, status: int, title: str, detail, headers: dict | None = None):
        body = {"error": {"status": status, "title": title, "error_code": status * 100, "detail": detail}}
        return status, headers or {}, body

    def _page(self, items: list[dict], query: dict, path: str) -> dict:
        offset = int(query.get("offset", 0) or 0)
        limit = min(int(query.get("limit", self.page_size) or self.page_size), self.page_size)
        page = items[offset : offset + limit]

        def link(at):
            return {"href": f"http://127.0.0.1:{self.port}{path}?{urlencode({'offset': at, 'limit': limit})}"}

        return {
            "results": page,
            "_links": {
                "self": link(offset),
                "next": link(offset + limit) if offset + limit < len(items) else {"href": None},
                "previous": link(max(0, offset - limit)) if offset else {"href": None},
                "last": link(max(0, (len(items) - 1) // limit * limit)),
            },
            "meta": {"count": len(items)},
        }

    def answer(self, method: str, path: str, query: dict, body, headers) -> tuple[int, dict, dict | None]:
        if headers.get("Authorization") != f"Token {self.token}":
            return self._error(401, "Unauthorized", "Invalid token.")
        with self._lock:
            fault = next((f for f in self._faults if f["path"] in path), None)
            if fault is not None:
                self._faults.remove(fault)
        if fault:
            extra = {"Retry-After": fault["retry_after"]} if fault["retry_after"] is not None else {}
            title = "Too Many Requests" if fault["status"] == 429 else "Server Error"
            return self._error(fault["status"], title, "Injected by the fake.", extra)
        parts = [p for p in path.split("/") if p][2:]  # after api/v1
        route = (method, *parts)
        with self._lock:
            return self._route(route, query, body if isinstance(body, dict) else {})

    def _route(self, route: tuple, query: dict, body: dict):  # noqa: C901, PLR0911, PLR0912 - one table of routes
        match route:
            case ("GET", "workspaces"):
                return (
                    200,
                    {},
                    self._page([{"id": self.workspace_id, "title": "Fake workspace"}], query, "/api/v1/workspaces/"),
                )
            case ("POST", "studies"):
                missing = [
                    f for f in ("name", "description", "completion_codes", "total_available_places") if f not in body
                ]
                if missing:
                    return self._error(400, "Bad Request", {field: ["This field is required."] for field in missing})
                if not isinstance(body.get("reward"), int) or body["reward"] <= 0:
                    return self._error(400, "Bad Request", {"reward": ["A positive integer in the minor unit."]})
                devices = body.get("device_compatibility", [])
                if not isinstance(devices, list) or not set(devices) <= {"desktop", "tablet", "mobile"}:
                    return self._error(
                        400, "Bad Request", {"device_compatibility": ["Each of desktop, tablet or mobile."]}
                    )
                study_id = self.new_id("st")
                self.studies[study_id] = {**body, "id": study_id, "status": "UNPUBLISHED", "places_taken": 0}
                return 201, {}, self.studies[study_id]
            case ("GET", "studies"):
                return 200, {}, self._page(list(self.studies.values()), query, "/api/v1/studies/")
            case ("GET", "studies", study_id):
                if study_id not in self.studies:
                    return self._error(404, "Not Found", "Study not found.")
                return 200, {}, self.studies[study_id]
            case ("PATCH", "studies", study_id):
                study = self.studies.get(study_id)
                if study is None:
                    return self._error(404, "Not Found", "Study not found.")
                if study["status"] != "UNPUBLISHED":
                    return self._error(400, "Bad Request", "Only a draft study can be changed.")
                study.update(body)
                return 200, {}, study
            case ("POST", "studies", study_id, "transition"):
                study = self.studies.get(study_id)
                if study is None:
                    return self._error(404, "Not Found", "Study not found.")
                action = body.get("action")
                allowed = {"PUBLISH": ("UNPUBLISHED", "ACTIVE"), "PAUSE": ("ACTIVE", "PAUSED"),
                           "START": ("PAUSED", "ACTIVE"), "STOP": (None, "AWAITING REVIEW")}  # fmt: skip
                if action not in allowed:
                    return self._error(400, "Bad Request", f"Unknown action {action}.")
                before, after = allowed[action]
                if before is not None and study["status"] != before:
                    return self._error(400, "Bad Request", f"Cannot {action} a study that is {study['status']}.")
                study["status"] = after
                return 200, {}, study
            case ("GET", "studies", study_id, "submissions"):
                items = [s for s in self.submissions.values() if s["study_id"] == study_id]
                return 200, {}, self._page(items, query, f"/api/v1/studies/{study_id}/submissions/")
            case ("GET", "studies", study_id, "submissions", "counts"):
                counts = collections.Counter(
                    s["status"] for s in self.submissions.values() if s["study_id"] == study_id
                )
                return 200, {}, dict(counts)
            case ("GET", "submissions", submission_id):
                if submission_id not in self.submissions:
                    return self._error(404, "Not Found", "Submission not found.")
                return 200, {}, self.submissions[submission_id]
            case ("POST", "submissions", "bulk-approve"):
                return self._bulk_approve(body)
            case ("POST", "submissions", "bonus-payments"):
                return self._bonus_create(body)
            case ("POST", "submissions", submission_id, "transition"):
                return self._transition(submission_id, body)
            case ("POST", "submissions", submission_id, "request-return"):
                submission = self.submissions.get(submission_id)
                if submission is None:
                    return self._error(404, "Not Found", "Submission not found.")
                reasons = body.get("request_return_reasons")
                if not isinstance(reasons, list) or not reasons:
                    return self._error(400, "Bad Request", {"request_return_reasons": ["At least one reason."]})
                submission["return_requested"] = reasons
                return 200, {}, submission
            case ("POST", "bulk-bonus-payments", bonus_id, "pay"):
                if bonus_id not in self.bonuses:
                    return self._error(404, "Not Found", "Bulk bonus payment not found.")
                self.pay_counts[bonus_id] += 1
                return 202, {}, None
            case ("GET", "hooks", "event-types"):
                types = ["submission.status.change", "study.status.change", "study.progress.change"]
                return 200, {}, {"results": [{"event_type": t, "description": t} for t in types]}
            case ("POST", "hooks", "secrets"):
                return (
                    200,
                    {},
                    {"id": self.new_id("sc"), "value": self.webhook_secret, "workspace_id": body.get("workspace_id")},
                )
            case ("GET", "hooks", "subscriptions"):
                return 200, {}, {"results": list(self.subscriptions.values())}
            case ("POST", "hooks", "subscriptions"):
                if body.get("event_type") != "submission.status.change" or not body.get("target_url"):
                    return self._error(400, "Bad Request", "event_type and target_url are required.")
                hook_id = self.new_id("hk")
                confirm = self.new_id("cf")
                self.subscriptions[hook_id] = {**body, "id": hook_id, "is_enabled": False, "_confirm": confirm}
                return (
                    201,
                    {"X-Hook-Secret": confirm},
                    {k: v for k, v in self.subscriptions[hook_id].items() if k[0] != "_"},
                )
            case ("POST", "hooks", "subscriptions", hook_id):
                hook = self.subscriptions.get(hook_id)
                if hook is None:
                    return self._error(404, "Not Found", "Subscription not found.")
                if body.get("secret") != hook["_confirm"]:
                    return self._error(400, "Bad Request", "The secret does not match.")
                hook["is_enabled"] = True
                return 200, {}, {k: v for k, v in hook.items() if k[0] != "_"}
        return self._error(404, "Not Found", f"No route {' '.join(route)}.")

    def _transition(self, submission_id: str, body: dict):
        submission = self.submissions.get(submission_id)
        if submission is None:
            return self._error(404, "Not Found", "Submission not found.")
        action = body.get("action")
        if action not in SUBMISSION_ACTIONS:
            return self._error(400, "Bad Request", f"Unknown action {action}.")
        target = SUBMISSION_ACTIONS[action]
        if submission["status"] == target:
            return 200, {}, submission  # Prolific documents transitions as idempotent
        if action in ("APPROVE", "REJECT") and submission["status"] != "AWAITING REVIEW":
            return self._error(400, "Bad Request", f"Submission is {submission['status']}, not AWAITING REVIEW.")
        if action == "APPROVE" and submission_id in self.refusals:
            return self._error(400, "Bad Request", self.refusals[submission_id])
        if action == "REJECT":
            if not body.get("message") or len(body["message"]) < 100:
                return self._error(400, "Bad Request", {"message": ["At least 100 characters."]})
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                return self._error(400, "Bad Request", {"rejection_category": ["Not a valid category."]})
        submission["status"] = target
        return 200, {}, submission

    def _bulk_approve(self, body: dict):
        ids = body.get("submission_ids")
        if ids is None and body.get("participant_ids") is not None:
            ids = [
                s["id"]
                for s in self.submissions.values()
                if s["study_id"] == body.get("study_id") and s["participant_id"] in body["participant_ids"]
            ]
        if not isinstance(ids, list) or not ids:
            return self._error(400, "Bad Request", "submission_ids or study_id and participant_ids are required.")
        if len(ids) > self.bulk_approve_limit:
            return self._error(400, "Bad Request", f"At most {self.bulk_approve_limit} submissions at once.")
        refused = [
            i for i in ids if i in self.refusals or self.submissions.get(i, {}).get("status") != "AWAITING REVIEW"
        ]
        if refused:
            return self._error(400, "Bad Request", f"These submissions cannot be approved: {', '.join(refused)}.")
        for submission_id in ids:
            self.submissions[submission_id]["status"] = "APPROVED"
        return 200, {}, {"message": "The request to bulk approve has been made successfully."}

    def _bonus_create(self, body: dict):
        study_id = body.get("study_id")
        if study_id not in self.studies:
            return self._error(400, "Bad Request", {"study_id": ["Unknown study."]})
        participants = {s["participant_id"] for s in self.submissions.values() if s["study_id"] == study_id}
        total = Decimal("0")
        bad = []
        for line in (body.get("csv_bonuses") or "").splitlines():
            if not line.strip():
                continue
            pid, _, amount = line.partition(",")
            if pid.strip() not in participants:
                bad.append(pid.strip())
                continue
            total += Decimal(amount.strip())
        if bad or total <= 0:
            return self._error(400, "Bad Request", f"Invalid participant ids: {', '.join(bad) or '-'}.")
        bonus_id = self.new_id("bb")
        # The csv is in the major unit; the answer's money is in the minor unit (pence, cents).
        amount = total * 100
        fees = (amount * FEE_RATE).quantize(Decimal("0.01"), rounding=ROUND_CEILING)
        self.bonuses[bonus_id] = {
            "id": bonus_id,
            "study": study_id,
            "amount": _number(amount),
            "fees": _number(fees),
            "vat": 0,
            "total_amount": _number(amount + fees),
            "csv_bonuses": body["csv_bonuses"],
        }
        return 201, {}, {k: v for k, v in self.bonuses[bonus_id].items() if k != "csv_bonuses"}

    # -- life ----------------------------------------------------------------------------

    def __enter__(self) -> FakeProlific:
        fake = self

        class Handler(LoopbackHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self, method: str):
                parts = urlsplit(self.path)
                query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                if fake.delay:
                    time.sleep(fake.delay)
                status, headers, answer = fake.answer(method, parts.path, query, body, self.headers)
                # Recorded before the reply, so a client that has its answer finds the request listed.
                with fake._lock:
                    fake.requests.append(
                        {
                            "method": method,
                            "path": parts.path,
                            "query": query,
                            "body": body,
                            "authorization": self.headers.get("Authorization", ""),
                            "status": status,
                        }
                    )
                payload = json.dumps(answer).encode() if answer is not None else b""
                self.send_response(status)
                if payload:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # noqa: N802 - the http.server API
                self._handle("GET")

            def do_POST(self):  # noqa: N802
                self._handle("POST")

            def do_PATCH(self):  # noqa: N802
                self._handle("PATCH")

            def do_DELETE(self):  # noqa: N802
                self._handle("DELETE")

        self._httpd = LoopbackServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self._thread = serve_in_thread(self._httpd, name=f"fake-prolific-{self.port}")
        return self

    def __exit__(self, *exc):
        stop_serving(self._httpd, self._thread)


@pytest.fixture
def fake_prolific(settings, monkeypatch):
    """The fake server, with the app pointed at it: PROLIFIC_API_URL, the token and webhook secret in the
    environment variables the settings name, and a backoff of a millisecond."""
    with FakeProlific() as server:
        settings.PROLIFIC_API_URL = server.base_url
        settings.PROLIFIC_BACKOFF_BASE = 0.001
        settings.PROLIFIC_RETRY_AFTER_CAP_S = 0
        monkeypatch.setenv(settings.PROLIFIC_API_TOKEN_ENV, server.token)
        monkeypatch.setenv(settings.PROLIFIC_WEBHOOK_SECRET_ENV, server.webhook_secret)
        yield server
