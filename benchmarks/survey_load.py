"""Survey load: synthetic Prolific participants taking the artwork study against gunicorn and PostgreSQL.

Starts gunicorn (gthread workers) serving vivid_site.wsgi on a free loopback port,
against its own PostgreSQL database (``vivid_bench`` by default, created and migrated
when missing, so the test suite's database is never touched), builds a live study of
14 artworks (12 per participant: a session is 56 pages) under a new slug, then:

1. paced run: ``--participants`` synthetic participants at once (one thread each), each
   waiting ``--pause`` seconds before sending a page, as people reading the page would.
   Prints p50/p95/max latency per kind of request, the errors, and the answers lost: every
   page the server accepted is compared with what is stored (symbols, each answer's choice,
   confidence and prior knowledge, each preference), and every participant's stored row
   counts with what their plan requires.
2. saturated run: ``--saturated-participants`` at once with no pause; prints answers
   (answer and preference rows) stored per second and pages per second.

Figures only, no targets. Skips with a message when PostgreSQL does not answer.

    .venv/bin/python benchmarks/survey_load.py [--participants 200] [--pause 2.0]
        [--saturated-participants 50] [--workers N] [--threads 4] [--database-url URL]
    .venv/bin/python benchmarks/survey_load.py --quick     # 20 participants, pause 0.2, 10 saturated
"""

import argparse
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/vivid_bench"
STEP_KINDS = ("entry", "consent", "instructions", "symbols", "qa", "post_symbols", "post_qa", "compare", "get")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}"


# --- PostgreSQL ------------------------------------------------------------------------------


def _connect_kwargs(url: str, dbname: str) -> dict:
    parsed = urlparse(url)
    kwargs = {"host": parsed.hostname or "127.0.0.1", "port": parsed.port or 5432, "dbname": dbname}
    if parsed.username:
        kwargs["user"] = parsed.username
    if parsed.password:
        kwargs["password"] = parsed.password
    return kwargs


def ensure_database(url: str) -> bool:
    """Create the benchmark database when missing; False when PostgreSQL does not answer."""
    import psycopg
    from psycopg import sql

    name = urlparse(url).path.lstrip("/")
    if not name:
        raise SystemExit(f"--database-url must name a database: {url}")
    try:
        connection = psycopg.connect(**_connect_kwargs(url, "postgres"), connect_timeout=3, autocommit=True)
    except psycopg.OperationalError as exc:
        print(f"skipped: PostgreSQL is unreachable at {url} ({str(exc).strip().splitlines()[0]})")
        return False
    with connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            print(f"created database {name}")
    return True


def server_env(url: str, var_dir: str) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_ENV": "development",
        "DEBUG": "0",
        "DJANGO_SETTINGS_MODULE": "vivid_site.settings",
        "VIVID_VAR_DIR": var_dir,
        "LOG_LEVEL": "WARNING",
    }
    env.pop("VIVID_TEST_SQLITE", None)
    return env


def migrate(env: dict) -> None:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if result.returncode:
        print(result.stdout[-2000:], result.stderr[-4000:], sep="\n")
        raise SystemExit("migrate failed")
    print(f"migrated in {time.perf_counter() - started:.1f} s")


# --- gunicorn --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Gunicorn:
    """gunicorn in its own process group, so stopping it stops its workers too."""

    def __init__(self, env: dict, *, workers: int, threads: int):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # Open for the server's lifetime and closed in stop(): no with-block can span it.
        self.log = tempfile.NamedTemporaryFile(prefix="vivid-bench-gunicorn-", suffix=".log", delete=False)  # noqa: SIM115
        command = [
            sys.executable, "-m", "gunicorn", "vivid_site.wsgi",
            "--bind", f"127.0.0.1:{self.port}",
            "--workers", str(workers),
            "--worker-class", "gthread",
            "--threads", str(threads),
            # Longer than a participant's pause, so a reading participant keeps its connection.
            "--keep-alive", "10",
            "--timeout", "120",
            "--log-level", "warning",
            # Import the app once in the master (vivid_site/wsgi.py loads every view), then fork.
            "--preload",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_ready(self, timeout: float = 60) -> None:
        import requests

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"gunicorn exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                requests.get(self.base + "/accounts/login/", timeout=2)
                return
            except requests.RequestException:
                time.sleep(0.2)
        raise SystemExit(f"gunicorn did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, n: int = 4000) -> str:
        return Path(self.log.name).read_text(errors="replace")[-n:]

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.log.close()


# --- participants ----------------------------------------------------------------------------


def recording_transport():
    """HttpTransport that remembers every page the server accepted with the data sent: a 200
    (the next page comes in the answer) or a 303 (to Prolific at the end); 422 is a refusal."""
    from study.services.simulation import HttpTransport

    class RecordingTransport(HttpTransport):
        def __init__(self):
            super().__init__()
            self.accepted: list[dict] = []

        def post(self, url, data):
            page = super().post(url, data)
            if page.status in (200, 303):
                self.accepted.append(data)
            return page

    return RecordingTransport()


def take_part(base: str, slug: str, key, *, index: int, tag: str, group: str, pause: float, seed: int):
    from study.services.simulation import Outcome, SyntheticParticipant, entry_url

    pid = f"BENCH-{tag}-{index:04d}"
    transport = recording_transport()
    # A little jitter so a crowd does not send its pages in lock step.
    rng = random.Random(seed)
    participant = SyntheticParticipant(transport, key=key, rng=rng, pause=pause * rng.uniform(0.75, 1.25))
    started = time.perf_counter()
    try:
        outcome = participant.run(entry_url(base, slug, pid=pid, group=group), pid)
    except Exception as exc:  # a dropped connection ends this participant, not the run
        outcome = Outcome(pid=pid, errors=[f"{type(exc).__name__}: {exc}"])
    return outcome, transport.accepted, time.perf_counter() - started


def crowd(base: str, study, *, n: int, pause: float, tag: str, stop: threading.Event):
    from study.services.simulation import answer_key

    key = answer_key(study=study)
    groups = study.groups
    results = []
    pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="participant")
    try:
        futures = [
            pool.submit(take_part, base, study.slug, key, index=i, tag=tag, group=groups[i % len(groups)],
                        pause=pause, seed=i)
            for i in range(n)
        ]  # fmt: skip
        for future in futures:
            while True:
                if stop.is_set():
                    raise KeyboardInterrupt
                try:
                    results.append(future.result(timeout=0.5))
                    break
                except TimeoutError:
                    continue
    except BaseException:
        # Do not wait for the crowd: once gunicorn is stopped, every participant ends on its next request.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results


# --- what was stored -------------------------------------------------------------------------


def check_stored(results) -> dict:
    """Every accepted page against the database, and every participant's rows against their plan."""
    from django.db.models import Count

    from study.models import Answer, Assignment, Criterion, Participant, Phase, Preference
    from study.selectors.participants import step_parse

    pids = [outcome.pid for outcome, _accepted, _seconds in results]
    participants = {p.prolific_pid: p for p in Participant.objects.filter(prolific_pid__in=pids, is_preview=False)}
    assignments = defaultdict(dict)
    for a in Assignment.objects.filter(participant__in=participants.values()).annotate(
        n_questions=Count("artwork__questions")
    ):
        assignments[a.participant_id][a.order] = a
    answers = {
        (a.assignment_id, a.question_id, a.phase): a
        for a in Answer.objects.filter(assignment__participant__in=participants.values())
    }
    preferences = {
        (p.assignment_id, p.criterion): p
        for p in Preference.objects.filter(assignment__participant__in=participants.values())
    }
    answers_per_assignment = Counter(assignment_id for assignment_id, _q, _p in answers)
    preferences_per_assignment = Counter(assignment_id for assignment_id, _c in preferences)
    report = {"accepted_pages": 0, "lost_values": 0, "missing_participants": 0, "count_mismatch": 0,
              "finished": 0, "finished_incomplete": 0, "answers": 0, "preferences": 0, "statuses": defaultdict(int)}  # fmt: skip
    for outcome, accepted, _seconds in results:
        participant = participants.get(outcome.pid)
        if participant is None:
            report["missing_participants"] += 1
            continue
        report["statuses"][participant.status] += 1
        mine = assignments[participant.pk]
        # Each accepted page, value by value.
        for data in accepted:
            report["accepted_pages"] += 1
            step = step_parse(data["step"])
            if step.order is None:
                continue
            assignment = mine.get(step.order)
            if assignment is None:
                report["lost_values"] += 1
                continue
            if step.kind in ("symbols", "post_symbols"):
                stored = assignment.symbols_pre if step.kind == "symbols" else assignment.symbols_post
                if stored is None or sorted(stored) != sorted(data.get("symbols", [])):
                    report["lost_values"] += 1
            elif step.kind in ("qa", "post_qa"):
                phase = Phase.PRE if step.kind == "qa" else Phase.POST
                for name, value in data.items():
                    if not name.endswith("-choice"):
                        continue
                    pk = int(name[1:].split("-", 1)[0])
                    answer = answers.get((assignment.pk, pk, phase))
                    if answer is None or (answer.choice, str(answer.confidence), answer.knew_before) != (
                        value,
                        data[f"q{pk}-confidence"],
                        data[f"q{pk}-knew"] == "yes",
                    ):
                        report["lost_values"] += 1
            elif step.kind == "compare":
                for criterion in Criterion.values:
                    preference = preferences.get((assignment.pk, criterion))
                    if preference is None or preference.side != data[criterion]:
                        report["lost_values"] += 1
        # Stored rows against the plan: every page passed must have all its rows, and no more.
        expected_answers = expected_preferences = 0
        for key in participant.plan[: participant.step_index]:
            step = step_parse(key)
            if step.kind in ("qa", "post_qa"):
                expected_answers += mine[step.order].n_questions
            elif step.kind == "compare":
                expected_preferences += len(Criterion.values)
        stored_answers = sum(answers_per_assignment[a.pk] for a in mine.values())
        stored_preferences = sum(preferences_per_assignment[a.pk] for a in mine.values())
        report["answers"] += stored_answers
        report["preferences"] += stored_preferences
        finished = "cc=" in outcome.final_url
        report["finished"] += finished
        if (stored_answers, stored_preferences) != (expected_answers, expected_preferences):
            report["count_mismatch"] += 1
            report["finished_incomplete"] += finished
    return report


# --- report ----------------------------------------------------------------------------------


def print_latencies(results) -> None:
    by_kind = defaultdict(list)
    for outcome, _accepted, _seconds in results:
        for label, seconds in outcome.timings:
            by_kind[label].append(seconds)
    print(f"  {'request':<14}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for kind in [*STEP_KINDS, *sorted(set(by_kind) - set(STEP_KINDS))]:
        values = by_kind.get(kind)
        if not values:
            continue
        print(f"  {kind:<14}{len(values):>7}{ms(percentile(values, 0.5)):>9}{ms(percentile(values, 0.95)):>9}"
              f"{ms(max(values)):>9}")  # fmt: skip
    everything = [s for values in by_kind.values() for s in values]
    if everything:
        print(f"  {'all':<14}{len(everything):>7}{ms(percentile(everything, 0.5)):>9}"
              f"{ms(percentile(everything, 0.95)):>9}{ms(max(everything)):>9}")  # fmt: skip


def print_outcomes(results, report: dict) -> None:
    errors = [error for outcome, _a, _s in results for error in outcome.errors]
    print(f"  participants {len(results)}, reached Prolific {report['finished']}, "
          f"statuses {dict(report['statuses'])}")  # fmt: skip
    print(f"  errors: {len(errors)}")
    for error, count in sorted(Counter(errors).items(), key=lambda item: -item[1])[:5]:
        print(f"    {count} × {error}")
    print(f"  pages accepted {report['accepted_pages']}, answers stored {report['answers']}, "
          f"preferences stored {report['preferences']}")  # fmt: skip
    print(f"  LOST ANSWERS: {report['lost_values']} values sent and accepted but not stored as sent; "
          f"{report['count_mismatch']} participants whose stored rows differ from their plan "
          f"({report['finished_incomplete']} of them reached Prolific); "
          f"{report['missing_participants']} participants not found")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--pause", type=float, default=2.0, help="Seconds a participant waits before sending a page.")
    parser.add_argument("--saturated-participants", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn workers.")
    parser.add_argument("--threads", type=int, default=4, help="Threads per gunicorn worker.")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--quick", action="store_true", help="20 participants, pause 0.2 s, 10 saturated.")
    args = parser.parse_args()
    if args.quick:
        args.participants, args.pause, args.saturated_participants = 20, 0.2, 10

    if not ensure_database(args.database_url):
        return 0
    var_dir = tempfile.mkdtemp(prefix="vivid-bench-survey-")
    env = server_env(args.database_url, var_dir)
    migrate(env)
    for name in ("DATABASE_URL", "DJANGO_ENV", "DEBUG", "DJANGO_SETTINGS_MODULE", "VIVID_VAR_DIR", "LOG_LEVEL"):
        os.environ[name] = env[name]
    os.environ.pop("VIVID_TEST_SQLITE", None)
    import django

    django.setup()

    stop = threading.Event()
    server = None

    def interrupted(signum, frame):
        stop.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    # Also when started in the background, where a shell leaves SIGINT ignored.
    signal.signal(signal.SIGINT, interrupted)
    try:
        server = Gunicorn(env, workers=args.workers, threads=args.threads)
        server.wait_ready()
        database = urlparse(args.database_url)
        print(f"gunicorn on {server.base}: {args.workers} gthread workers × {args.threads} threads; "
              f"PostgreSQL {database.hostname}:{database.port or 5432}{database.path}")  # fmt: skip
        run(args, server, stop)
    except KeyboardInterrupt:
        stop.set()
        print("\ninterrupted")
        return 130
    finally:
        if server is not None:
            server.stop()
            print("gunicorn stopped")
        shutil.rmtree(var_dir, ignore_errors=True)
    return 0


def new_study(label: str, quota: int):
    from study.models import StudyStatus
    from tests.study.factories import make_study, package_dict

    slug = f"bench-{label}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    # Quotas high enough that every synthetic participant gets a place.
    return make_study(package_dict(slug=slug, quota_per_group=quota), status=StudyStatus.LIVE)


def run(args, server: Gunicorn, stop: threading.Event) -> None:
    from django.db import close_old_connections

    study = new_study("paced", args.participants)
    steps = 2 + 10 * 5 + 2 * 2
    print(f"\nPaced run: {args.participants} participants at once, {args.pause:g} s pause per page, "
          f"study {study.slug} ({steps} pages a session)")  # fmt: skip
    started = time.perf_counter()
    results = crowd(server.base, study, n=args.participants, pause=args.pause, tag=uuid.uuid4().hex[:6], stop=stop)
    wall = time.perf_counter() - started
    close_old_connections()
    report = check_stored(results)
    sessions = sorted(seconds for _o, _a, seconds in results)
    print(f"  wall {wall:.1f} s; session p50 {percentile(sessions, 0.5):.1f} s, max {max(sessions):.1f} s; "
          f"time a participant waited on the server: "
          f"{sum(s for o, _a, _s in results for _l, s in o.timings) / max(1, len(results)):.2f} s on average")  # fmt: skip
    print_latencies(results)
    print_outcomes(results, report)

    if args.saturated_participants <= 0:
        return
    study = new_study("saturated", args.saturated_participants)
    print(f"\nSaturated run: {args.saturated_participants} participants at once, no pause, study {study.slug}")
    started = time.perf_counter()
    results = crowd(server.base, study, n=args.saturated_participants, pause=0.0, tag=uuid.uuid4().hex[:6], stop=stop)
    wall = time.perf_counter() - started
    close_old_connections()
    report = check_stored(results)
    rows = report["answers"] + report["preferences"]
    requests_made = sum(len(o.timings) for o, _a, _s in results)
    print(f"  wall {wall:.1f} s; {rows / wall:,.0f} answers stored per second "
          f"({report['answers']} answers + {report['preferences']} preferences); "
          f"{report['accepted_pages'] / wall:,.0f} pages sent per second; {requests_made / wall:,.0f} requests per second")  # fmt: skip
    print_latencies(results)
    print_outcomes(results, report)


if __name__ == "__main__":
    sys.exit(main())
