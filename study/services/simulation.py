"""Test responses: synthetic participants that take a study through its real pages, like Qualtrics'
test responses, marked as test data.

A participant reads each page's form (the hidden step, the radio groups, the checkboxes)
and answers it, so it exercises exactly what a person's browser sends. The transport is
anything with ``get(url)`` and ``post(url, data)`` returning a ``Page``: Django's test
client in-process, or HTTP against a running server (the load benchmark).
"""

import random
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin

from ..models import Question, Study, StudyStatus
from .participants import synthetic_entry_token


@dataclass
class Page:
    status: int
    url: str
    html: str
    location: str = ""


@dataclass
class FormSpec:
    step: str = ""
    radios: dict[str, list[str]] = field(default_factory=dict)
    checkboxes: dict[str, list[str]] = field(default_factory=dict)
    buttons: list[tuple[str, str]] = field(default_factory=list)
    csrf: str = ""


class _FormParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.spec: FormSpec | None = None
        self._in_form = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and "data-step-form" in attrs and self.spec is None:
            self.spec = FormSpec()
            self._in_form = True
            return
        if not self._in_form:
            return
        if tag == "input":
            kind, name, value = attrs.get("type", "text"), attrs.get("name", ""), attrs.get("value", "")
            if kind == "hidden" and name == "step":
                self.spec.step = value
            elif kind == "hidden" and name == "csrfmiddlewaretoken":
                self.spec.csrf = value
            elif kind == "radio":
                self.spec.radios.setdefault(name, []).append(value)
            elif kind == "checkbox":
                self.spec.checkboxes.setdefault(name, []).append(value)
        elif tag == "button" and attrs.get("name"):
            self.spec.buttons.append((attrs["name"], attrs.get("value", "")))

    def handle_endtag(self, tag):
        if tag == "form":
            self._in_form = False


def parse_form(html: str) -> FormSpec | None:
    parser = _FormParser()
    parser.feed(html)
    return parser.spec


@dataclass
class AnswerKey:
    """What a synthetic participant needs to answer well or badly on purpose: question pk -> (answer, is_qc)."""

    answers: dict[int, tuple[str, bool]]


@dataclass
class Outcome:
    pid: str
    final_url: str = ""
    steps: int = 0
    errors: list[str] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)


class SyntheticParticipant:
    """One participant. ``fail_qc`` answers every quality-control question wrongly;
    ``accuracy`` is the chance of answering an ordinary question correctly."""

    def __init__(
        self,
        transport,
        *,
        key: AnswerKey,
        rng: random.Random,
        fail_qc: bool = False,
        accuracy: float = 0.6,
        pause: float = 0.0,
        consent: bool = True,
        max_steps: int = 500,
    ):
        self.transport = transport
        self.key = key
        self.rng = rng
        self.fail_qc = fail_qc
        self.accuracy = accuracy
        self.pause = pause
        self.consent = consent
        self.max_steps = max_steps

    def run(self, entry_url: str, pid: str) -> Outcome:
        outcome = Outcome(pid=pid)
        page = self._timed(outcome, "entry", lambda: self.transport.get(entry_url))
        page = self._follow(page, outcome)
        while outcome.steps < self.max_steps:
            if page.location and "prolific" in page.location:
                outcome.final_url = page.location
                return outcome
            if page.status >= 400 and page.status != 422:
                outcome.errors.append(f"{page.status} at {page.url}")
                return outcome
            spec = parse_form(page.html)
            if spec is None:
                outcome.final_url = page.location or page.url
                return outcome
            data = self.answer(spec)
            if self.pause:
                time.sleep(self.pause)
            url = page.url
            page = self._timed(outcome, spec.step.split(":")[-1], lambda u=url, d=data: self.transport.post(u, d))
            outcome.steps += 1
            if page.status == 422:
                outcome.errors.append(f"rejected answers on {spec.step}")
                return outcome
            page = self._follow(page, outcome)
        outcome.errors.append("too many steps")
        return outcome

    def _timed(self, outcome: Outcome, label: str, call) -> Page:
        started = time.perf_counter()
        page = call()
        outcome.timings.append((label, time.perf_counter() - started))
        return page

    def _follow(self, page: Page, outcome: Outcome) -> Page:
        while page.status in (301, 302, 303) and page.location:
            if "prolific.com" in page.location or page.location.startswith("https://app.prolific"):
                return page
            target = urljoin(page.url, page.location)
            page = self._timed(outcome, "get", lambda t=target: self.transport.get(t))
        return page

    def answer(self, spec: FormSpec) -> dict:
        data: dict = {"step": spec.step}
        if spec.csrf:
            data["csrfmiddlewaretoken"] = spec.csrf
        if spec.step == "consent":
            data["consent"] = "yes" if self.consent else "no"
            return data
        if spec.step == "group":
            data["group"] = self.rng.choice(spec.radios["group"])
            return data
        if "symbols" in spec.checkboxes:
            options = spec.checkboxes["symbols"]
            picked = [name for name in options if self.rng.random() < 0.4]
            if picked:
                data["symbols"] = picked
            else:
                data["none"] = "1"
            return data
        for name, values in spec.radios.items():
            if name.endswith("-choice"):
                pk = int(name[1:].split("-", 1)[0])
                answer, is_qc = self.key.answers.get(pk, ("", False))
                wrong = [v for v in values if v != answer] or values
                if is_qc:
                    data[name] = self.rng.choice(wrong) if self.fail_qc else answer
                else:
                    data[name] = (
                        answer if self.rng.random() < self.accuracy and answer in values else self.rng.choice(values)
                    )
            else:
                data[name] = self.rng.choice(values)
        return data


def entry_url(base: str, slug: str, *, pid: str, group: str = "", synthetic_token: str = "", session: str = "") -> str:
    params = {"PROLIFIC_PID": pid, "STUDY_ID": "synthetic", "SESSION_ID": session or f"s-{pid}"}
    if group:
        params["group"] = group
    if synthetic_token:
        params["test_token"] = synthetic_token
    return f"{base.rstrip('/')}/s/{slug}/?{urlencode(params)}"


class DjangoClientTransport:
    """In-process transport: Django's test client, through every middleware and view."""

    def __init__(self, client=None):
        from django.test import Client

        self.client = client or Client(HTTP_HOST="localhost")

    def _page(self, response, url) -> Page:
        body = response.content.decode() if not getattr(response, "streaming", False) else ""
        return Page(status=response.status_code, url=url, html=body, location=response.get("Location", ""))

    def get(self, url: str) -> Page:
        return self._page(self.client.get(url), url.split("?")[0] if "/run/" in url else url)

    def post(self, url: str, data: dict) -> Page:
        return self._page(self.client.post(url, data), url)


class HttpTransport:
    """Real HTTP with a cookie session, for a server started elsewhere (gunicorn in the load benchmark)."""

    def __init__(self):
        import requests

        self.session = requests.Session()

    def get(self, url: str) -> Page:
        response = self.session.get(url, allow_redirects=False, timeout=30)
        return Page(response.status_code, url, response.text, response.headers.get("Location", ""))

    def post(self, url: str, data: dict) -> Page:
        headers = {"Referer": url, "X-CSRFToken": self.session.cookies.get("csrftoken", "")}
        response = self.session.post(url, data=data, allow_redirects=False, timeout=30, headers=headers)
        return Page(response.status_code, url, response.text, response.headers.get("Location", ""))


# -- the service ------------------------------------------------------------------------------------


class SimulationError(ValueError):
    pass


def answer_key(*, study: Study) -> AnswerKey:
    rows = Question.objects.filter(artwork__study=study).values_list("pk", "answer", "artwork__is_qc")
    return AnswerKey(answers={pk: (answer, is_qc) for pk, answer, is_qc in rows})


def synthetic_responses_generate(
    *, study: Study, n: int, seed: int | None = None, qc_fail_rate: float = 0.0, transport_factory=None, progress=None
) -> list[Outcome]:
    """Send ``n`` synthetic participants through the study, alternating groups.

    Each is a fresh browser (its own cookie session) that enters with a signed test token,
    so its rows carry ``is_test`` and never count towards quotas or default results.
    """
    if n < 1:
        raise SimulationError("--n must be at least 1.")
    if not 0 <= qc_fail_rate <= 1:
        raise SimulationError("--qc-fail-rate must be between 0 and 1.")
    if study.status == StudyStatus.CLOSED:
        raise SimulationError(f"Study {study.slug} is closed.")
    rng = random.Random(seed)
    key = answer_key(study=study)
    token = synthetic_entry_token(study.slug)
    make_transport = transport_factory or DjangoClientTransport
    run_tag = f"{rng.getrandbits(32):08x}"
    outcomes = []
    fails = set(rng.sample(range(n), round(n * qc_fail_rate)))
    for index in range(n):
        group = study.groups[index % len(study.groups)]
        pid = f"TEST-{run_tag}-{index + 1:04d}"
        participant = SyntheticParticipant(
            make_transport(), key=key, rng=random.Random(rng.getrandbits(64)), fail_qc=index in fails
        )
        outcomes.append(participant.run(entry_url("", study.slug, pid=pid, group=group, synthetic_token=token), pid))
        if progress:
            progress(1)
    return outcomes
