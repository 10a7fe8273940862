"""Test responses: synthetic participants that take a study through its real pages, like Qualtrics'
test responses, marked as test data.

A participant reads each page's form (the hidden step, the radio groups, the checkboxes)
and answers it, so it exercises exactly what a person's browser sends. The transport is
anything with ``get(url)`` and ``post(url, data)`` returning a ``Page``: the participant
pages' own services in-process (``ServiceTransport``, what ``generate_test_responses`` uses),
Django's test client through every middleware and template, or HTTP against a running server
(the load benchmark).
"""

import http.client
import http.cookiejar
import multiprocessing
import random
import re
import time
import urllib.request
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

from django.db import connection, connections

from ..content import CONFIDENCE_SCALE
from ..models import Criterion, Participant, Question, Study, StudyStatus
from ..rules import finish_url_leaves_study
from ..selectors.participants import assignment_for_step, participant_current
from ..selectors.studies import study_find
from ..steps import Step, element_order, question_options
from . import participants as flow
from .participants import synthetic_entry_token
from .results import study_results_changes_deferred


@dataclass
class Page:
    status: int
    url: str
    html: str
    location: str = ""
    # The page's form, when the transport knows it without HTML (ServiceTransport).
    spec: "FormSpec | None" = None


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


# The step form's start tag. Page text is escaped and the pages have no inline script, so "<form"
# in a page is a tag; forms do not nest, so the step form ends at the first "</form>" after it.
_STEP_FORM = re.compile(r"<form\b[^>]*\bdata-step-form\b[^>]*>", re.IGNORECASE)


def parse_form(html: str) -> FormSpec | None:
    """The page's step form: what a participant's browser would send. Only the form itself is
    parsed (a load generator reads thousands of pages a second, and most of a page is the artwork
    and its descriptions); a page where the form is not found that way is parsed whole."""
    found = _STEP_FORM.search(html)
    if found is not None:
        end = html.find("</form>", found.end())
        spec = _parse(html[found.start() : end + len("</form>")] if end != -1 else html[found.start() :])
        if spec is not None:
            return spec
    return _parse(html)


def _parse(html: str) -> FormSpec | None:
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
        page = self.enter(entry_url, outcome)
        while page is not None:
            page = self.step(page, outcome)
        return outcome

    def enter(self, entry_url: str, outcome: Outcome) -> Page | None:
        """Open the entry link: the first page to answer, or None when the session ended there."""
        page = self._timed(outcome, "entry", lambda: self.transport.get(entry_url))
        return self._next(self._follow(page, outcome), outcome)

    def step(self, page: Page, outcome: Outcome) -> Page | None:
        """Answer ``page`` (one ``enter`` or ``step`` returned) and send it: the page that follows,
        or None when the session ended (``outcome.final_url`` or ``outcome.errors`` says how).
        One page at a time, so a load generator can choose when each participant sends."""
        spec = page.spec if page.spec is not None else parse_form(page.html)
        data = self.answer(spec)
        if self.pause:
            time.sleep(self.pause)
        url = page.url
        page = self._timed(outcome, spec.step.split(":")[-1], lambda: self.transport.post(url, data))
        outcome.steps += 1
        if page.status == 422:
            outcome.errors.append(f"rejected answers on {spec.step}")
            return None
        return self._next(self._follow(page, outcome), outcome)

    def _next(self, page: Page, outcome: Outcome) -> Page | None:
        if outcome.steps >= self.max_steps:
            outcome.errors.append("too many steps")
            return None
        if page.location and finish_url_leaves_study(page.location):
            outcome.final_url = page.location
            return None
        if page.status >= 400 and page.status != 422:
            outcome.errors.append(f"{page.status} at {page.url}")
            return None
        spec = page.spec if page.spec is not None else parse_form(page.html)
        if spec is None:
            outcome.final_url = page.location or page.url
            return None
        # Read once: step() answers this form.
        page.spec = spec
        return page

    def _timed(self, outcome: Outcome, label: str, call) -> Page:
        started = time.perf_counter()
        page = call()
        outcome.timings.append((label, time.perf_counter() - started))
        return page

    def _follow(self, page: Page, outcome: Outcome) -> Page:
        while page.status in (301, 302, 303) and page.location:
            if finish_url_leaves_study(page.location):
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
    """The link Prolific would open for ``pid`` (Prolific-shaped: see ``prolific_id_for``); the study
    and session ids are made from the slug and the PID unless ``session`` is given."""
    params = {
        "PROLIFIC_PID": pid,
        "STUDY_ID": flow.prolific_id_for(f"study:{slug}"),
        "SESSION_ID": session or flow.prolific_id_for(f"session:{pid}"),
    }
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
        # URL-encoded, as the page's script (study.js) and a browser's plain form send it; the test
        # client's default, multipart, costs the server a parse no participant's page asks for.
        body = urlencode(data, doseq=True)
        return self._page(self.client.post(url, body, content_type="application/x-www-form-urlencoded"), url)


def form_spec(*, participant: Participant, step: Step) -> FormSpec:
    """The form of a step's page as ``parse_form`` reads it from the page drawn (tests check they
    agree for every kind of page): the same names, values and order, without drawing anything."""
    spec = FormSpec(step=step.key)
    if step.kind == "consent":
        spec.buttons = [("consent", "yes"), ("consent", "no")]
    elif step.kind == "group":
        spec.radios["group"] = list(participant.study.groups)
    elif step.kind in ("symbols", "post_symbols"):
        assignment = assignment_for_step(participant=participant, order=step.order)
        spec.checkboxes["symbols"] = element_order(participant=participant, artwork=assignment.artwork)
        spec.checkboxes["none"] = ["1"]
    elif step.kind in ("qa", "post_qa"):
        assignment = assignment_for_step(participant=participant, order=step.order)
        confidence = [value for value, _ in CONFIDENCE_SCALE]
        for question in assignment.artwork.questions.all():
            spec.radios[f"q{question.pk}-choice"] = question_options(participant=participant, question=question)
            spec.radios[f"q{question.pk}-confidence"] = list(confidence)
            if question.symbol:
                spec.radios[f"q{question.pk}-knew"] = ["yes", "no"]
    elif step.kind == "compare":
        for criterion in Criterion.values:
            spec.radios[criterion] = ["left", "right"]
    return spec


class ServiceTransport:
    """In-process, without HTTP or templates: each request runs what the participant view runs
    (``participant_enter`` for the entry link; ``participant_page_show`` and
    ``participant_page_submit`` for the run page), and the page comes back as its form
    (``form_spec``) instead of HTML. The rows written are the ones a browser's requests write;
    only the drawing of each page, which stores nothing, is left out.

    A GET reads the session as the view does. Between two POSTs the session stays the one the
    last request ended with (the services keep its step, plan and status current) instead of
    being read again, with the assignment the last page read: two queries less per page.
    """

    def __init__(self):
        self.participant: Participant | None = None
        self.slug = ""

    def _page(self, outcome, url: str) -> Page:
        participant = self.participant = outcome.participant
        run = f"/s/{self.slug}/run/"
        if outcome.again:
            return Page(303, url, "", location=run)
        if outcome.message:
            return Page(outcome.status, url, "")
        if outcome.finished:
            finish = flow.participant_finish_url(participant=participant)
            return Page(303, url, "", location=finish or run)
        return Page(outcome.status, run, "", spec=form_spec(participant=participant, step=outcome.step))

    def get(self, url: str) -> Page:
        parts = urlsplit(url)
        if not parts.path.rstrip("/").endswith("/run"):
            return self._enter(url)
        if self.participant is not None:
            self.participant = participant_current(slug=self.slug, pk=self.participant.pk)
        if self.participant is None:
            return Page(400, url, "")
        return self._page(flow.participant_page_show(participant=self.participant), url)

    def post(self, url: str, data: dict) -> Page:
        if self.participant is None:
            return Page(400, url, "")
        form = {name: value if isinstance(value, list) else [value] for name, value in data.items()}
        return self._page(flow.participant_page_submit(participant=self.participant, data=form), url)

    def _enter(self, url: str) -> Page:
        parts = urlsplit(url)
        self.slug = parts.path.strip("/").split("/")[1]
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        study = study_find(slug=self.slug, package=False)
        if study is None:
            return Page(404, url, "")
        try:
            self.participant = flow.participant_enter(
                study=study,
                pid=query.get("PROLIFIC_PID", "").strip(),
                prolific_study_id=query.get("STUDY_ID", "").strip(),
                session_id=query.get("SESSION_ID", "").strip(),
                group=query.get("group", ""),
                is_test=flow.synthetic_entry_token_valid(query.get("test_token", ""), self.slug),
            )
        except flow.EntryError as exc:
            self.participant = None
            return Page(flow.entry_refusal_status(exc.reason), url, "")
        return Page(302, url, "", location=f"/s/{self.slug}/run/")


class HttpTransport:
    """Real HTTP with a cookie session, for a server started elsewhere (gunicorn in the load benchmark).

    One keep-alive connection on the standard library's ``http.client``, and its ``CookieJar`` for
    the cookies a browser would keep and send (by path, deleted when the server says so): a load
    generator shares the machine's cores with the server it measures. With ``parse_form`` reading the
    step form alone, the survey benchmark's generator went from 3.3-4.1 ms of CPU a request
    (``requests``, the whole page parsed) to 1.0-1.5.
    """

    def __init__(self):
        self.cookies = http.cookiejar.CookieJar()
        self._connection: http.client.HTTPConnection | None = None
        self._address: tuple[str, int] | None = None

    def get(self, url: str) -> Page:
        return self._send("GET", url, None, {})

    def post(self, url: str, data: dict) -> Page:
        csrf = next((cookie.value for cookie in self.cookies if cookie.name == "csrftoken"), "")
        headers = {"Referer": url, "X-CSRFToken": csrf, "Content-Type": "application/x-www-form-urlencoded"}
        return self._send("POST", url, urlencode(data, doseq=True).encode(), headers)

    def _send(self, method: str, url: str, body: bytes | None, headers: dict) -> Page:
        request = urllib.request.Request(url, method=method)
        self.cookies.add_cookie_header(request)
        if request.has_header("Cookie"):
            headers["Cookie"] = request.get_header("Cookie")
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        for attempt in (1, 2):
            connection = self._connect(parts.hostname or "127.0.0.1", parts.port or 80)
            try:
                connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                html = response.read().decode(response.headers.get_content_charset() or "utf-8", "replace")
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed the kept-alive connection as this request went out (its
                # keep-alive timeout, a worker restarting) and nothing came back: send it once more.
                # Were it stored after all, the server refuses the page sent again as stale.
                self._close()
                if attempt == 2:
                    raise
        if response.will_close:
            self._close()
        self.cookies.extract_cookies(response, request)
        return Page(response.status, url, html, response.headers.get("Location", ""))

    def _connect(self, host: str, port: int) -> http.client.HTTPConnection:
        if self._connection is None or self._address != (host, port):
            self._close()
            self._connection = http.client.HTTPConnection(host, port, timeout=30)
            self._address = (host, port)
        return self._connection

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection = None


# -- the service ------------------------------------------------------------------------------------


class SimulationError(ValueError):
    pass


def answer_key(*, study: Study) -> AnswerKey:
    rows = Question.objects.filter(artwork__study=study).values_list("pk", "answer", "artwork__is_qc")
    return AnswerKey(answers={pk: (answer, is_qc) for pk, answer, is_qc in rows})


@dataclass(frozen=True)
class _Planned:
    """One synthetic participant, decided before any of them runs (so the same seed gives the same
    participants whatever the number of processes)."""

    pid: str
    group: str
    seed: int
    fail_qc: bool


def _take_part(planned: _Planned, *, slug: str, key: AnswerKey, token: str, make_transport) -> Outcome:
    participant = SyntheticParticipant(
        make_transport(), key=key, rng=random.Random(planned.seed), fail_qc=planned.fail_qc
    )
    # One bump of the study's results per participant, not one per page.
    with study_results_changes_deferred():
        return participant.run(
            entry_url("", slug, pid=planned.pid, group=planned.group, synthetic_token=token), planned.pid
        )


# What the worker processes of a run share: set before they are forked, read in each.
_run: dict = {}


def _take_part_in_worker(planned: _Planned) -> Outcome:
    return _take_part(planned, slug=_run["slug"], key=_run["key"], token=_run["token"], make_transport=ServiceTransport)


def synthetic_plan(*, groups: list[str], n: int, seed: int | None, qc_fail_rate: float) -> list[_Planned]:
    """The participants a run sends, in order: Prolific-shaped PIDs (the entry link refuses others),
    alternating groups, the same for the same seed."""
    rng = random.Random(seed)
    run_tag = f"{rng.getrandbits(32):08x}"
    fails = set(rng.sample(range(n), round(n * qc_fail_rate)))
    return [
        _Planned(
            pid=flow.prolific_id_for(f"TEST-{run_tag}-{index + 1:04d}"),
            group=groups[index % len(groups)],
            seed=rng.getrandbits(64),
            fail_qc=index in fails,
        )
        for index in range(n)
    ]


def synthetic_responses_generate(
    *,
    study: Study,
    n: int,
    seed: int | None = None,
    qc_fail_rate: float = 0.0,
    transport_factory=None,
    progress=None,
    workers: int = 1,
) -> list[Outcome]:
    """Send ``n`` synthetic participants through the study, alternating groups.

    Each is a fresh browser (its own session) that enters with a signed test token, so its rows
    carry ``is_test`` and never count towards quotas or default results. By default the pages
    run in-process through the participant pages' services (``ServiceTransport``);
    ``transport_factory`` gives each participant another transport (the test client, HTTP).
    The study's results are marked changed once per participant rather than once per page.

    ``workers`` > 1 runs the participants in as many forked processes, each with its own database
    connection, as a crowd of browsers would arrive; not inside a transaction (a test's), whose
    rows the other processes could not see, nor with another transport: then one at a time.
    """
    if n < 1:
        raise SimulationError("--n must be at least 1.")
    if not 0 <= qc_fail_rate <= 1:
        raise SimulationError("--qc-fail-rate must be between 0 and 1.")
    if workers < 1:
        raise SimulationError("--workers must be at least 1.")
    if study.status == StudyStatus.CLOSED:
        raise SimulationError(f"Study {study.slug} is closed.")
    key = answer_key(study=study)
    token = synthetic_entry_token(study.slug)
    planned = synthetic_plan(groups=study.groups, n=n, seed=seed, qc_fail_rate=qc_fail_rate)
    workers = min(workers, n)
    if workers > 1 and transport_factory is None and not connection.in_atomic_block:
        return _generate_in_processes(
            planned, slug=study.slug, key=key, token=token, workers=workers, progress=progress
        )
    outcomes = []
    for one in planned:
        outcomes.append(
            _take_part(one, slug=study.slug, key=key, token=token, make_transport=transport_factory or ServiceTransport)
        )
        if progress:
            progress(1)
    return outcomes


def _generate_in_processes(planned: list[_Planned], *, slug: str, key, token: str, workers: int, progress):
    # A forked child must not share the parent's database connections: each opens its own.
    connections.close_all()
    _run.update(slug=slug, key=key, token=token)
    outcomes = []
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            # Small batches keep the processes equally busy to the end; results come back in order.
            for outcome in pool.imap(_take_part_in_worker, planned, chunksize=4):
                outcomes.append(outcome)
                if progress:
                    progress(1)
    finally:
        _run.clear()
    return outcomes
