"""Review load: N annotators answering items over HTTP against gunicorn and PostgreSQL, beside Potato.

Serves the app with gunicorn exactly as the README's Deployment documents it (``gunicorn.conf.py``
at the repository root) against its own PostgreSQL database (``vivid_bench_review`` by default,
created and migrated when missing), builds a 2,000-item corpus with model suggestions, and for
each scenario a fresh round of those items with two annotators per item, as in the VIVID paper
(4,000 answers shared among the N annotators). Each annotator is a thread on this machine with
its own HTTP session: it signs in through the login page, GETs the review queue (redirected to
its first item), then answers as the browser's htmx form does: POST of the form with the htmx
headers, the next item's panel read from the response (its form, revision and suggested traits).

Scenarios: N = 20, 100, 200 answering as fast as the server allows (saturated: the answers per
second are the capacity), then 200 annotators thinking 5 s per item (offered load 40 answers/s,
printed next to the saturated capacity), then an open loop: 200 annotators with an item open each and
answers arriving at random (a Poisson process) at half the measured capacity (``--open-fraction``),
as a team produces them, the save's latency counted from each arrival's instant (it starts once the
worker has refreshed the earlier scenarios' rounds, ROUND_SUMMARY_DELAY_SECONDS after their answers); then the start of a working day: 200 annotators (``--burst``)
entering a fresh round's queue within one second (GET of the queue, redirected to the first item),
with the entry's p50/p95/max and the time until the last annotator sees an item.

The server side is the deployment's: gunicorn, PostgreSQL, Redis as the shared cache and the Celery
broker (``--redis-url``, a db no test uses, flushed), and a real ``celery -A vivid_site worker``
refreshing the round pages' stored summaries after answers; its CPU is printed per answer too. Each prints answers/s, the save's p50/p95/max, errors,
server CPU per answer (CPU time of every gunicorn process during the run / answers), and checks
every answer the server accepted against the database: 0 lost, 0 wrong, 0 stored twice. Under each
saturated row: how busy the cores were, and the busiest server process's share of the server's CPU.

The peer: Potato (potato-annotation 2.12.1, installed on first run into var/potato-venv, run with
``potato start config.yaml`` as its documentation says), configured with the same 2,000 items,
one radio for the theme (7) and checkboxes for the 5 traits, two annotators per item; its clients
follow its browser's path for one answer: POST /updateinstance (JSON), POST /annotate
{"action": "next_instance"}, GET /annotate (the whole next page). It keeps each annotator's state
in memory and rewrites that annotator's ``user_state.json`` on every save; the check reads those
files after the run.

    .venv/bin/python benchmarks/review_load.py [--annotators 20,100,200] [--think-annotators 200]
        [--think 5.0] [--duration 30] [--open-fraction 0.5] [--open-annotators 200] [--burst 200]
        [--no-peer] [--database-url URL] [--redis-url URL]
    .venv/bin/python benchmarks/review_load.py --quick     # 10 and 20 annotators, 8 s each, 400 items
"""

import argparse
import json
import os
import queue
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# The same database set-up, server environment and statistics as the survey benchmark.
from serving import (  # noqa: E402
    Server,
    Spread,
    ensure_database,
    free_port,
    gunicorn,
    migrate,
    open_loop,
    percentile,
    server_env,
)

from benchmarks.harnesses import venv_install  # noqa: E402

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/vivid_bench_review"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/12"
POTATO_VERSION = "2.12.1"
POTATO_VENV = ROOT / "var" / "potato-venv"
PASSWORD = "bench-review-password"
WORKER = None  # the Celery worker of the VIVID runs


def redis_ready(url: str) -> None:
    import redis

    try:
        redis.Redis.from_url(url).flushdb()
    except redis.RedisError as exc:
        raise SystemExit(f"Redis does not answer at {url} ({exc}): the benchmark runs the deployment's path") from exc


class Worker(Server):
    """``celery -A vivid_site worker`` as the README runs it, in its own process group (its CPU counted)."""

    def __init__(self, env: dict):
        command = [str(Path(sys.executable).parent / "celery"), "-A", "vivid_site", "worker", "-l", "info",
                   "-Q", env["CELERY_QUEUE"], "-n", "bench-review@%h"]  # fmt: skip
        super().__init__(command, cwd=ROOT, env=env, port=0, ready_path="")

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while "ready." not in self.log_tail(100_000):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the Celery worker did not start:\n{self.log_tail()}")
            time.sleep(0.2)


def celery_worker(env: dict) -> Worker:
    return Worker(env)


# --- PostgreSQL and the VIVID server ---------------------------------------------------------


# --- the corpus ------------------------------------------------------------------------------


@dataclass
class Corpus:
    dataset: object
    suggestions: object
    annotators: list
    texts: dict  # expression text by id, shared with Potato
    traits: list[str]
    themes: list[str]


def corpus_build(*, items: int, annotators: int, seed: int) -> Corpus:
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group, User

    from annotation.models import Dataset, Theme, Trait
    from annotation.services import expression_import, suggestion_set_create
    from core.roles import ANNOTATOR

    traits = list(Trait.objects.order_by("number").values_list("code", flat=True))
    themes = list(Theme.objects.order_by("number").values_list("code", flat=True))
    name = f"bench-review-{items}"
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        lines = ["expression,explanation"] + [
            f"Câu tục ngữ thử nghiệm số {n} về lúa và nước,Lời giải thích thứ {n} cho người đọc" for n in range(items)
        ]
        expression_import(dataset_name=name, filename="bench.csv", content=("\n".join(lines) + "\n").encode())
        dataset = Dataset.objects.get(name=name)
    suggestions = dataset.suggestion_sets.filter(name="bench").first()
    if suggestions is None:
        rng = random.Random(seed)
        predictions = [
            (pk, rng.sample(traits, rng.randint(0, 3)), "") for pk in dataset.expressions.values_list("pk", flat=True)
        ]
        suggestions = suggestion_set_create(
            dataset=dataset, name="bench", model_name="bench-model", predictions=predictions
        )
    group = Group.objects.get(name=ANNOTATOR)
    names = [f"bench_ann_{i:03d}" for i in range(annotators)]
    existing = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    if len(existing) < len(names):
        hashed = make_password(PASSWORD)  # one hash for all: creating 200 users costs one PBKDF2
        User.objects.bulk_create([User(username=n, password=hashed) for n in names if n not in existing])
    users = list(User.objects.filter(username__in=names).order_by("username"))
    for user in users:
        user.groups.add(group)
    texts = dict(dataset.expressions.values_list("pk", "text"))
    return Corpus(dataset, suggestions, users, texts, traits, themes)


# --- VIVID clients ---------------------------------------------------------------------------

FORM_ACTION = re.compile(r'<form id="review-form"[^>]*\bhx-post="([^"]+)"')
REVISION = re.compile(r'name="revision" value="(\d+)"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
DECISION = re.compile(r'name="decision_([a-z_]+)"')
ADDED = re.compile(r'name="added_traits" value="([a-z_]+)"')
ASSIGNMENT = re.compile(r"/review/(\d+)/$")


@dataclass
class Tally:
    latencies: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    sent: dict = field(default_factory=dict)  # assignment id (or (user, item)) -> what was answered
    first: float = 0.0
    last: float = 0.0


def vivid_login(base: str, username: str):
    import requests

    session = requests.Session()
    page = session.get(base + "/accounts/login/", timeout=120)
    token = CSRF.search(page.text).group(1)
    answer = session.post(
        base + "/accounts/login/",
        data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token},
        headers={"Referer": base + "/accounts/login/"},
        timeout=120,
    )
    if answer.status_code != 200 or "sessionid" not in session.cookies:
        raise RuntimeError(f"sign-in of {username} failed: {answer.status_code}")
    return session


def vivid_answer(panel: str, rng: random.Random, themes: list[str]) -> tuple[dict, dict]:
    """Form data for the panel's item (a random but complete answer) and what must be stored."""
    theme = rng.choice(themes)
    decisions = {code: rng.choice(["accept", "reject", "unsure"]) for code in DECISION.findall(panel)}
    added = sorted({code for code in ADDED.findall(panel) if rng.random() < 0.3})
    flagged = rng.random() < 0.05
    note = f"note {rng.randrange(10**6)}" if rng.random() < 0.1 else ""
    data = {
        "csrfmiddlewaretoken": CSRF.search(panel).group(1),
        "revision": REVISION.search(panel).group(1),
        "theme": theme,
        "note": note,
        **{f"decision_{code}": d for code, d in decisions.items()},
    }
    if added:
        data["added_traits"] = added
    if flagged:
        data["flagged"] = "on"
    expected = {"theme": theme, "decisions": decisions, "added": added, "flagged": flagged, "note": note}
    return data, expected


def vivid_post(base: str, session, panel: str, rng: random.Random, themes: list[str]):
    """One answer to the panel's item as the htmx form sends it: (response, assignment id, what was
    answered, the form's path). The panel must hold the review form."""
    path = FORM_ACTION.search(panel).group(1)
    url = base + path
    data, expected = vivid_answer(panel, rng, themes)
    response = session.post(
        url,
        data=data,
        headers={"HX-Request": "true", "HX-Target": "review-panel", "HX-Current-URL": url, "Referer": url},
        timeout=120,
    )
    return response, int(ASSIGNMENT.search(path).group(1)), expected, path


def vivid_annotator(base, session, queue_url, themes, *, seed, think, start, window, tally, lock):
    rng = random.Random(seed)
    start.wait()
    try:
        # The queue redirects to the first open item's page, as for a person following the round's link.
        page = queue_get(session, base + queue_url)
        if page.status_code != 200:
            raise RuntimeError(f"{page.status_code} on the queue")
        panel = page.text
        while time.monotonic() < window["deadline"]:
            if FORM_ACTION.search(panel) is None:
                return  # the queue panel: nothing left
            if think:
                time.sleep(think * rng.uniform(0.75, 1.25))
            sent = time.perf_counter()
            response, assignment, expected, path = vivid_post(base, session, panel, rng, themes)
            took = time.perf_counter() - sent
            with lock:
                if response.status_code == 200 and response.headers.get("HX-Push-Url"):
                    tally.latencies.append(took)
                    tally.sent[assignment] = expected
                    tally.last = max(tally.last, time.perf_counter())
                else:
                    tally.errors.append(f"{response.status_code} on {path}")
                    return
            panel = response.text
    except Exception as exc:  # a dropped connection ends this annotator, not the run
        with lock:
            tally.errors.append(f"{type(exc).__name__}: {exc}")


def vivid_check(round_, tally) -> dict:
    """Every accepted answer against the database; nothing stored that was not sent, nothing twice."""
    from annotation.models import Assignment, AssignmentStatus

    stored = {
        a["pk"]: a
        for a in Assignment.objects.filter(item__round=round_, status=AssignmentStatus.SUBMITTED).values(
            "pk", "theme__code", "trait_decisions", "added_traits", "flagged", "note", "revision"
        )
    }
    lost = wrong = twice = 0
    for pk, expected in tally.sent.items():
        row = stored.get(pk)
        if row is None:
            lost += 1
            continue
        if (row["theme__code"], row["trait_decisions"], sorted(row["added_traits"]), row["flagged"], row["note"]) != (
            expected["theme"],
            expected["decisions"],
            expected["added"],
            expected["flagged"],
            expected["note"],
        ):
            wrong += 1
        if row["revision"] != 1:  # a second save of the same answer bumps the revision
            twice += 1
    unexpected = len(set(stored) - set(tally.sent))
    return {"lost": lost, "wrong": wrong, "twice": twice, "unexpected": unexpected, "stored": len(stored)}


def fresh_round(corpus, *, n: int, seed: int, label: str):
    """A new round of the corpus for the first ``n`` annotators, two per item as in the paper:
    the round and its review queue's path."""
    from django.urls import reverse

    from annotation.services import round_create

    round_ = round_create(
        name=f"bench-review-{label}-{int(time.time() * 1000)}",
        dataset=corpus.dataset,
        annotators=corpus.annotators[:n],
        suggestion_set=corpus.suggestions,
        annotators_per_item=2,
        seed=seed,
    )
    return round_, reverse("annotation:review_queue", args=[round_.pk])


def queue_get(session, url: str):
    """GET of a queue page; a session idle since the previous scenario may find its keep-alive
    connection closed as it is reused, and a GET is safe to send again (a POST is never resent)."""
    import requests

    try:
        return session.get(url, timeout=120)
    except requests.ConnectionError:
        return session.get(url, timeout=120)


def vivid_scenario(server, corpus, sessions, *, n, think, duration, seed, label):
    round_, queue_path = fresh_round(corpus, n=n, seed=seed, label=label)
    queue_url = queue_path
    return run_clients(
        server,
        n,
        lambda i, **clock: vivid_annotator(
            server.base, sessions[i], queue_url, corpus.themes, seed=seed * 1000 + i, think=think, **clock
        ),
        duration=duration,
        check=lambda tally: vivid_check(round_, tally),
    )


def open_loop_scenario(server, corpus, sessions, *, n, rate, duration, seed, label) -> dict:
    """``n`` annotators with an item open each; answers arrive at random at ``rate`` per second
    (serving.open_loop), each from an annotator not waiting for an answer of their own."""
    from concurrent.futures import ThreadPoolExecutor

    round_, queue_path = fresh_round(corpus, n=n, seed=seed, label=label)
    queue_url = server.base + queue_path
    tally, lock = Tally(), threading.Lock()

    def enter(i: int):
        page = queue_get(sessions[i], queue_url)
        return i, page.text, random.Random(seed * 1000 + i)

    idle: queue.Queue = queue.Queue()
    with ThreadPoolExecutor(max_workers=8) as pool:
        for client in pool.map(enter, range(n)):
            if FORM_ACTION.search(client[1]):
                idle.put(client)

    def send(client):
        i, panel, rng = client
        response, assignment, expected, path = vivid_post(server.base, sessions[i], panel, rng, corpus.themes)
        if response.status_code == 200 and response.headers.get("HX-Push-Url"):
            with lock:
                tally.sent[assignment] = expected
            # The round's pairs are drawn at random, so a few annotators hold fewer items than the
            # window asks of them: one whose queue is done leaves the team (its answer counted),
            # as a participant who reaches Prolific does in the survey's open loop.
            following = (i, response.text, rng) if FORM_ACTION.search(response.text) else None
            return True, "", following
        return False, f"{response.status_code} on {path}", None

    cpu, worker_cpu = server.cpu(), (WORKER.cpu() if WORKER else 0.0)
    maintenance = autovacuum_runs()
    result = open_loop(rate=rate, duration=duration, seed=seed, clients=idle, send=send)
    result["autovacuum_runs"] = autovacuum_runs() - maintenance
    answers = result["answers"]
    result["cpu_ms"] = 1000 * (server.cpu() - cpu) / answers if answers else float("nan")
    result["worker_cpu_ms"] = 1000 * ((WORKER.cpu() if WORKER else 0.0) - worker_cpu) / answers if answers else 0.0
    result.update(vivid_check(round_, tally))
    return result


def worker_settle(*, quiet_for: float = 3.0, limit: float = 150.0) -> float:
    """Wait for the round-summary refreshes the earlier scenarios queued (each runs
    ROUND_SUMMARY_DELAY_SECONDS after a round's answers) and for the worker to go quiet: the open
    loop then measures its own load, its own round's refreshes included, not the bill of the
    saturated runs before it. Returns the seconds waited."""
    from django.conf import settings

    started = time.monotonic()
    time.sleep(settings.ROUND_SUMMARY_DELAY_SECONDS + 1)
    last, quiet_since = WORKER.cpu() if WORKER else 0.0, time.monotonic()
    while WORKER and time.monotonic() - started < limit:
        time.sleep(0.5)
        now = WORKER.cpu()
        if now > last + 0.05:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_for:
            break
    return time.monotonic() - started


def _error_sample(result: dict) -> str:
    """What the first errors were, so a run's errors can be told apart (a refused request, a dropped connection)."""
    return f" (first: {'; '.join(result['error_sample'])})" if result.get("error_sample") else ""


def open_loop_row(name: str, result: dict) -> str:
    return (
        f"{name:<10} offered {result['offered_rate']:>5.1f}/s  served {result['rate']:>5.1f}/s"
        f"  p50 {result['p50'] * 1000:>5.0f} ms  p95 {result['p95'] * 1000:>5.0f} ms  max {result['max'] * 1000:>5.0f} ms"
        f"  errors {result['errors']}  CPU/answer {result['cpu_ms']:>5.1f} ms"
        + (f" (+ worker {result['worker_cpu_ms']:.1f} ms)" if result.get("worker_cpu_ms") else "")
        + f"  (generator late by {result['generator_lag_p95'] * 1000:.0f} ms at p95)"
        + "\n           p95 per 5 s of arrivals: "
        + " ".join(f"{p95 * 1000:.0f}" for p95 in result["p95_by_slice"])
        + f" ms; PostgreSQL autovacuum and autoanalyze runs meanwhile: {result.get('autovacuum_runs', 0)}"
    )


def autovacuum_runs() -> int:
    """How many times PostgreSQL's autovacuum and autoanalyze have run on the benchmark's tables."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_user_tables")
        (runs,) = cursor.fetchone()
    return int(runs)


def burst_scenario(server, corpus, sessions, *, n, seed, label) -> dict:
    """``n`` annotators entering a fresh round's queue within one second, each at a random instant:
    the queue entry (redirected to the first item's page) under the burst of a working day's start."""
    _round, queue_path = fresh_round(corpus, n=n, seed=seed, label=label)
    queue_url = server.base + queue_path
    rng = random.Random(seed)
    offsets = sorted(rng.uniform(0, 1.0) for _ in range(n))
    latencies, errors, lock = [], [], threading.Lock()
    start = threading.Barrier(n + 1)

    def enter(i):
        start.wait()
        time.sleep(max(0.0, begin + offsets[i] - time.monotonic()))
        sent = time.perf_counter()
        try:
            page = queue_get(sessions[i], queue_url)
            ok = page.status_code == 200 and FORM_ACTION.search(page.text) is not None
        except Exception as exc:
            ok, page = False, exc
        took = time.perf_counter() - sent
        with lock:
            if ok:
                latencies.append(took)
            else:
                errors.append(str(getattr(page, "status_code", page)))

    threads = [threading.Thread(target=enter, args=(i,), daemon=True) for i in range(n)]
    for thread in threads:
        thread.start()
    cpu = server.cpu()
    begin = time.monotonic() + 0.2
    start.wait()
    for thread in threads:
        thread.join()
    last_in = time.monotonic() - begin
    entered = len(latencies)
    return {
        "entered": entered,
        "p50": percentile(latencies, 0.50) if entered else float("nan"),
        "p95": percentile(latencies, 0.95) if entered else float("nan"),
        "max": max(latencies, default=float("nan")),
        "last_in": last_in,
        "errors": len(errors),
        "error_sample": errors[:3],
        "cpu_ms": 1000 * (server.cpu() - cpu) / entered if entered else float("nan"),
    }


def burst_row(name: str, result: dict) -> str:
    return (
        f"{name:<8} {result['entered']:>4} entered  p50 {result['p50'] * 1000:>6.0f} ms  p95 {result['p95'] * 1000:>6.0f} ms"
        f"  max {result['max'] * 1000:>6.0f} ms  all in after {result['last_in']:.2f} s  errors {result['errors']}"
        f"  CPU/entry {result['cpu_ms']:>5.1f} ms"
    )


def run_clients(server, n, work, *, duration, check) -> dict:
    """Start ``n`` clients; the clock and the server's CPU count start once every client is signed in."""
    tally, lock = Tally(), threading.Lock()
    window = {}

    def go():  # runs once, when the last client reaches the barrier
        window["spread"] = Spread([server]).start()
        window["cpu"] = server.cpu()
        window["worker_cpu"] = WORKER.cpu() if WORKER else 0.0
        window["deadline"] = time.monotonic() + duration
        tally.first = time.perf_counter()

    start = threading.Barrier(n, action=go)

    threads = [
        threading.Thread(target=lambda i=i: work(i, start=start, window=window, tally=tally, lock=lock), daemon=True)
        for i in range(n)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = (tally.last or time.perf_counter()) - tally.first
    cpu = server.cpu() - window["cpu"]
    spread = window["spread"].stop()
    # The worker refreshes the round's figures ROUND_SUMMARY_DELAY_SECONDS after answers, as deployed:
    # what it spends during the window is counted here (a refresh may land in the next scenario's).
    worker_cpu = (WORKER.cpu() - window["worker_cpu"]) if WORKER else 0.0
    answers = len(tally.latencies)
    result = {
        "answers": answers,
        "rate": answers / elapsed if elapsed > 0 else 0.0,
        "p50": percentile(tally.latencies, 0.50) if answers else float("nan"),
        "p95": percentile(tally.latencies, 0.95) if answers else float("nan"),
        "max": max(tally.latencies, default=float("nan")),
        "errors": len(tally.errors),
        "error_sample": tally.errors[:3],
        "cpu_ms": 1000 * cpu / answers if answers else float("nan"),
        "worker_cpu_ms": 1000 * worker_cpu / answers if answers else float("nan"),
        "spread": spread,
    }
    result.update(check(tally))
    return result


# --- Potato ----------------------------------------------------------------------------------


def potato_install() -> Path:
    return (
        venv_install(POTATO_VENV, [f"potato-annotation=={POTATO_VERSION}"], marker=f".potato-{POTATO_VERSION}")
        / "potato"
    )


def potato_server(binary: Path, corpus: Corpus, task_dir: Path) -> Server:
    """A fresh Potato task: the same items, one radio (theme) and five checkboxes (traits), two annotators per item."""
    task_dir.mkdir(parents=True)
    with (task_dir / "data.jsonl").open("w") as out:
        for pk, text in corpus.texts.items():
            out.write(json.dumps({"id": str(pk), "text": text}, ensure_ascii=False) + "\n")
    config = {
        "annotation_task_name": "VIVID review (benchmark)",
        "task_dir": ".",
        "data_files": ["data.jsonl"],
        "item_properties": {"id_key": "id", "text_key": "text"},
        "output_annotation_dir": "annotation_output",
        "export_annotation_format": "jsonl",
        "require_password": False,
        "user_config": {"allow_all_users": True},
        "max_annotations_per_item": 2,
        "annotation_schemes": [
            {"annotation_type": "radio", "name": "theme", "description": "Theme", "labels": corpus.themes},
            {"annotation_type": "multiselect", "name": "traits", "description": "Traits", "labels": corpus.traits},
        ],
    }
    # JSON is YAML: no YAML writer needed here.
    (task_dir / "config.yaml").write_text(json.dumps(config, ensure_ascii=False, indent=2))
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return Server(
        [str(binary), "start", "config.yaml", "-p", str(port)], cwd=task_dir, env=env, port=port, ready_path="/"
    )


INSTANCE = re.compile(r'name="instance_id" type="hidden" value="([^"]*)"')


def potato_annotator(base, username, corpus, *, seed, think, start, window, tally, lock):
    import requests

    rng = random.Random(seed)
    session = requests.Session()
    page = None
    try:
        # Potato's sign-in: a user name, no password (require_password: false); it lands on /annotate.
        page = session.post(base + "/auth", data={"email": username, "pass": ""}, timeout=120)
    except Exception as exc:
        with lock:
            tally.errors.append(f"sign-in: {type(exc).__name__}: {exc}")
    start.wait()
    if page is None:
        return
    try:
        while time.monotonic() < window["deadline"]:
            found = INSTANCE.search(page.text)
            if found is None:
                return  # done page: no item left for this annotator
            instance = found.group(1)
            if think:
                time.sleep(think * rng.uniform(0.75, 1.25))
            theme = rng.choice(corpus.themes)
            traits = sorted(code for code in corpus.traits if rng.random() < 0.3)
            labels = {f"theme:{theme}": theme, **{f"traits:{code}": code for code in traits}}
            sent = time.perf_counter()
            # The browser's three requests for one answer (static/annotation.js: saveAnnotations, navigateToNext).
            saved = session.post(
                base + "/updateinstance",
                json={"instance_id": instance, "annotations": labels, "span_annotations": []},
                timeout=120,
            )
            moved = session.post(
                base + "/annotate",
                json={"action": "next_instance", "instance_id": instance},
                headers={"X-Potato-Navigation": "1"},
                timeout=120,
            )
            page = session.get(base + "/annotate", timeout=120)
            took = time.perf_counter() - sent
            with lock:
                if saved.status_code == moved.status_code == page.status_code == 200:
                    if (username, instance) in tally.sent:
                        tally.errors.append(f"{instance} handed out twice to {username}")
                        return
                    tally.latencies.append(took)
                    tally.sent[(username, instance)] = {"theme": theme, "traits": traits}
                    tally.last = max(tally.last, time.perf_counter())
                else:
                    tally.errors.append(f"{saved.status_code}/{moved.status_code}/{page.status_code} on {instance}")
                    return
    except Exception as exc:
        with lock:
            tally.errors.append(f"{type(exc).__name__}: {exc}")


def potato_check(task_dir: Path, tally) -> dict:
    """Potato's own files after the run: each annotator's user_state.json."""
    stored = {}
    for state_file in (task_dir / "annotation_output").glob("*/user_state.json"):
        state = json.loads(state_file.read_text())
        for instance, pairs in (state.get("instance_id_to_label_to_value") or {}).items():
            theme = [value for label, value in pairs if label["schema"] == "theme"]
            traits = sorted(value for label, value in pairs if label["schema"] == "traits")
            stored[(state["user_id"], instance)] = {"theme": theme[0] if len(theme) == 1 else theme, "traits": traits}
    lost = sum(1 for key in tally.sent if key not in stored)
    wrong = sum(1 for key, expected in tally.sent.items() if key in stored and stored[key] != expected)
    per_item = {}
    for _user, instance in stored:
        per_item[instance] = per_item.get(instance, 0) + 1
    return {
        "lost": lost,
        "wrong": wrong,
        # One annotator's answer to an item is one entry of a dict: it cannot be stored twice.
        "twice": 0,
        # What Potato can do is hand an item to more annotators than max_annotations_per_item (2).
        "over_cap": sum(1 for count in per_item.values() if count > 2),
        "unexpected": len(set(stored) - set(tally.sent)),
        "stored": len(stored),
    }


# --- report ----------------------------------------------------------------------------------


def row(name: str, result: dict | None) -> str:
    if not result:
        return f"{name:<8} {'-':>9}"
    return (
        f"{name:<8} {result['rate']:>7.1f}/s  p50 {result['p50'] * 1000:>6.0f} ms  p95 {result['p95'] * 1000:>6.0f} ms"
        f"  max {result['max'] * 1000:>6.0f} ms  errors {result['errors']:>3}  CPU/answer {result['cpu_ms']:>5.1f} ms"
        + (f" (+ worker {result['worker_cpu_ms']:.1f} ms)" if result.get("worker_cpu_ms") else "")
        + f"  answers {result['answers']:>5}  lost {result['lost']} wrong {result['wrong']} twice {result['twice']}"
        f" unexpected {result['unexpected']}"
        + (f"  items over the 2-annotator cap {result['over_cap']}" if "over_cap" in result else "")
        + (f"\n         {result['spread']}" if result.get("spread") else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", default="20,100,200", help="saturated scenarios: annotators each")
    parser.add_argument("--think-annotators", type=int, default=200, help="0: no thinking scenario")
    parser.add_argument("--think", type=float, default=5.0, help="seconds each annotator reads an item")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per saturated scenario")
    parser.add_argument("--think-duration", type=float, default=40.0, help="seconds of the thinking scenario")
    parser.add_argument(
        "--open-fraction", type=float, default=0.5, help="open-loop load as a share of the capacity (0: none)"
    )
    parser.add_argument("--open-annotators", type=int, default=200, help="annotators of the open-loop scenario")
    parser.add_argument("--open-duration", type=float, default=30.0, help="seconds of the open-loop scenario")
    parser.add_argument("--burst", type=int, default=200, help="annotators entering within 1 s (0: none)")
    parser.add_argument("--no-peer", action="store_true", help="skip Potato")
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REVIEW_REDIS_URL", DEFAULT_REDIS_URL))
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_REVIEW_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--quick", action="store_true", help="10 and 20 annotators, 8 s each, 400 items")
    args = parser.parse_args()
    if args.quick:
        args.annotators, args.think_annotators, args.think = "10,20", 20, 0.5
        args.items, args.duration, args.think_duration = 400, 8.0, 8.0
        args.burst = min(args.burst, 20)
        args.open_annotators, args.open_duration = 20, 8.0
    sizes = [int(n) for n in args.annotators.split(",") if n]
    scenarios = [(f"N={n}", n, 0.0, args.duration) for n in sizes]
    if args.think_annotators:  # 0 skips the thinking scenario
        scenarios.append(
            (f"{args.think_annotators}@{args.think:g}s", args.think_annotators, args.think, args.think_duration)
        )

    if not ensure_database(args.database_url):
        return
    var_dir = tempfile.mkdtemp(prefix="vivid-bench-review-")
    env = server_env(args.database_url, var_dir)
    redis_ready(args.redis_url)
    env.update(
        {
            "CACHE_URL": args.redis_url,
            "CELERY_BROKER_URL": args.redis_url,
            "CELERY_QUEUE": "vivid-bench-review",
            # The worker shares the 2 cores with gunicorn: run it as the README's Production says for that
            # case (WORKER_NICENESS=0 in the environment measures it at the web server's priority).
            "WORKER_NICENESS": os.environ.get("WORKER_NICENESS", "10"),
        }
    )
    os.environ.update(
        {
            k: env[k]
            for k in (
                "DATABASE_URL",
                "DJANGO_ENV",
                "DEBUG",
                "DJANGO_SETTINGS_MODULE",
                "VIVID_VAR_DIR",
                "CACHE_URL",
                "CELERY_BROKER_URL",
                "CELERY_QUEUE",
            )
        }
    )
    os.environ["DB_CONN_MAX_AGE"] = "0"
    started = time.perf_counter()
    migrate(env)
    import django

    django.setup()
    corpus = corpus_build(
        items=args.items, annotators=max([n for _, n, _, _ in scenarios] + [args.burst]), seed=args.seed
    )
    print(
        f"database ready, {args.items} items, {len(corpus.annotators)} annotators in {time.perf_counter() - started:.1f} s"
    )

    results: dict[str, dict] = {}
    peer: dict[str, dict] = {}
    server = gunicorn(env)
    global WORKER
    WORKER = celery_worker(env)
    burst = open_result = None
    try:
        server.wait_ready()
        WORKER.wait_ready()
        started = time.perf_counter()
        sessions = sign_in_all(server.base, corpus.annotators, args.database_url)
        print(f"{len(sessions)} annotators signed in through the login page in {time.perf_counter() - started:.1f} s")
        for label, n, think, duration in scenarios:
            results[label] = vivid_scenario(
                server, corpus, sessions, n=n, think=think, duration=duration, seed=args.seed, label=label
            )
            print("VIVID  " + row(label, results[label]), *results[label]["error_sample"], sep="\n  ", flush=True)
        saturated = [results[label]["rate"] for label, _n, think, _d in scenarios if not think]
        if args.open_fraction and saturated:
            settled = worker_settle()
            print(f"the worker's refreshes of the earlier rounds done after {settled:.0f} s", flush=True)
            rate = args.open_fraction * max(saturated)
            open_result = open_loop_scenario(
                server,
                corpus,
                sessions,
                n=min(args.open_annotators, len(sessions)),
                rate=rate,
                duration=args.open_duration,
                seed=args.seed,
                label="open",
            )
            print("VIVID  " + open_loop_row("open", open_result), *open_result["error_sample"], sep="\n  ", flush=True)
        if args.burst:
            burst = burst_scenario(server, corpus, sessions, n=args.burst, seed=args.seed, label=f"burst{args.burst}")
            print("VIVID  " + burst_row(f"burst {args.burst}", burst), *burst["error_sample"], sep="\n  ", flush=True)
    finally:
        server.stop()
        WORKER.stop()
    if not args.no_peer:
        binary = potato_install()
        work_dir = Path(tempfile.mkdtemp(prefix="potato-bench-", dir=ROOT / "var"))
        try:
            for label, n, think, duration in scenarios:
                peer[label] = potato_run(
                    binary, corpus, work_dir, n=n, think=think, duration=duration, seed=args.seed, label=label
                )
                print("Potato " + row(label, peer[label]), *peer[label]["error_sample"], sep="\n  ", flush=True)
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
    shutil.rmtree(var_dir, ignore_errors=True)
    report(results, peer, scenarios)
    if open_result:
        print(
            f"open loop: {args.open_annotators} annotators, answers arriving at random at"
            f" {args.open_fraction:.0%} of the capacity ({open_result['offered_rate']:.1f}/s offered):"
            f" save p50 {open_result['p50'] * 1000:.0f} ms, p95 {open_result['p95'] * 1000:.0f} ms,"
            f" max {open_result['max'] * 1000:.0f} ms, CPU {open_result['cpu_ms']:.1f} ms per answer;"
            f" {open_result['lost']} lost, {open_result['wrong']} wrong, {open_result['twice']} twice,"
            f" {open_result['errors']} errors" + _error_sample(open_result)
        )
    if burst:
        print(
            f"burst: {args.burst} annotators entering a fresh round within 1 s: queue entry p95"
            f" {burst['p95'] * 1000:.0f} ms, the last sees an item {burst['last_in']:.2f} s after the first arrives,"
            f" {burst['errors']} errors" + _error_sample(burst)
        )


SESSIONS_FILE = ROOT / "var" / "bench-review-sessions.json"


def sign_in_all(base: str, users: list, database_url: str) -> list:
    """Each annotator signed in through the login page, once: the session cookies of an earlier run
    against the same database are reused while the server still accepts them (a sign-in costs a
    password hash, about a second of CPU each on a busy 2-core machine, and is not what is measured)."""
    from concurrent.futures import ThreadPoolExecutor

    import requests

    try:
        saved = json.loads(SESSIONS_FILE.read_text()).get(database_url, {})
    except (OSError, ValueError):
        saved = {}

    def session_for(user):
        cookie = saved.get(user.username)
        if cookie:
            session = requests.Session()
            session.cookies.set("sessionid", cookie)
            probe = session.get(base + "/", allow_redirects=False, timeout=120)
            if probe.status_code == 200:
                return session
        return vivid_login(base, user.username)

    with ThreadPoolExecutor(max_workers=8) as pool:
        sessions = list(pool.map(session_for, users))
    try:
        stored = json.loads(SESSIONS_FILE.read_text())
    except (OSError, ValueError):
        stored = {}
    stored[database_url] = {user.username: s.cookies.get("sessionid") for user, s in zip(users, sessions, strict=True)}
    SESSIONS_FILE.write_text(json.dumps(stored))
    return sessions


def potato_run(binary, corpus, work_dir, *, n, think, duration, seed, label) -> dict:
    task_dir = work_dir / f"potato-{label.replace('@', '-at-').replace('=', '')}"
    server = potato_server(binary, corpus, task_dir)
    tallies = []
    try:
        server.wait_ready()

        def check(tally):
            tallies.append(tally)
            return {}

        result = run_clients(
            server,
            n,
            lambda i, **clock: potato_annotator(
                server.base, f"ann_{i:03d}", corpus, seed=seed * 1000 + i, think=think, **clock
            ),
            duration=duration,
            check=check,
        )
    finally:
        server.stop()
    result.update(potato_check(task_dir, tallies[0]))
    return result


def report(results: dict, peer: dict, scenarios: list) -> None:
    saturated = [r["rate"] for label, _n, think, _d in scenarios if not think for r in [results[label]]]
    capacity = max(saturated, default=0.0)
    print()
    print("review page: answers/s, save p95, server CPU per answer (VIVID: 1 POST per answer; Potato: 3 requests)")
    print(
        f"{'scenario':<10} {'VIVID':>10} {'p95':>8} {'CPU':>8}   {'Potato':>10} {'p95':>8} {'CPU':>8}   {'VIVID/Potato':>12}"
    )
    for label, n, think, _d in scenarios:
        mine, theirs = results[label], peer.get(label)
        line = f"{label:<10} {mine['rate']:>8.1f}/s {mine['p95'] * 1000:>6.0f}ms {mine['cpu_ms']:>6.1f}ms"
        if theirs:
            line += f"   {theirs['rate']:>8.1f}/s {theirs['p95'] * 1000:>6.0f}ms {theirs['cpu_ms']:>6.1f}ms"
            if not think:  # a thinking team's rate is its offered load, not a capacity
                line += f"   {mine['rate'] / theirs['rate']:>11.2f}x"
        if think:
            line += f"   offered {n / think:.0f}/s, saturated capacity {capacity:.0f}/s ({capacity / (n / think):.1f}x)"
        print(line)
    bad = [
        (who, label)
        for who, table in (("VIVID", results), ("Potato", peer))
        for label, r in table.items()
        if r["lost"] or r["wrong"] or r["twice"] or r["unexpected"]
    ]
    print(
        "stored answers checked against what the clients sent: "
        + ("0 lost, 0 wrong, 0 twice, 0 unexpected" if not bad else f"MISMATCH in {bad}")
    )
    over_cap = {label: r["over_cap"] for label, r in peer.items() if r.get("over_cap")}
    if over_cap:
        print(f"Potato gave items to more than 2 annotators (max_annotations_per_item: 2) under load: {over_cap}")
    print(
        "Potato's method: each answer is POST /updateinstance (JSON labels) + POST /annotate next_instance +"
        " GET /annotate (the whole next page); state kept in memory, each annotator's user_state.json rewritten"
        " on every save (annotation_output/<user>/)."
    )


if __name__ == "__main__":
    main()
