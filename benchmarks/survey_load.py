"""Survey load: synthetic Prolific participants taking the artwork study against gunicorn and PostgreSQL.

Serves vivid_site.wsgi with gunicorn as the README's Deployment documents it (``gunicorn.conf.py``;
only the address differs, unless ``--workers``/``--threads`` say otherwise) on free loopback ports,
against its own PostgreSQL database (``vivid_bench`` by default, created and migrated when missing,
so the test suite's database is never touched), builds a live study of 14 artworks (12 per
participant: a session is 56 pages) under a new slug for each phase, then:

1. launch burst: ``--burst`` participants (200) arriving within one second, each opening the
   entry link (and its redirect to the consent page), reading it ``--pause`` seconds (jittered)
   and agreeing, for ``--burst-places`` places per group (90 for 100 arrivals a group, so some
   must be turned away). Prints entry/consent p50/p95/max, then per group: admitted, turned
   away, stored sessions holding a place, overfill, turned away while places remained, outcomes
   that differ from the database, sessions without all their assignments: QUOTA CHECK ok or not.
2. saturated run: ``--saturated-participants`` at once with no pause: the CAPACITY (pages per
   second), answers stored per second, and the CPU time per request of every gunicorn process
   and of this load generator (the most stable figure from day to day); then how busy the cores
   were and the busiest gunicorn process's share of gunicorn's CPU (spread evenly over 5 workers
   and the master: about 20 %).
3. paced run: ``--participants`` at once (one thread each), each waiting ``--pause`` seconds
   before sending a page, as people reading the page would: the OFFERED LOAD next to the
   saturated capacity, p50/p95/max latency per kind of request.
4. open loop: ``--open-participants`` (200) each in the middle of a session (past the consent and
   instructions, a random number of pages further), pages arriving at random (a Poisson process,
   serving.open_loop) at ``--open-fraction`` (0.5) of the capacity the saturated run just measured,
   for ``--open-duration`` (30) seconds, each sent by a participant not waiting for a page of their
   own: offered and served pages per second, p50/p95/max latency counted from each arrival's
   instant (a page waiting for a free thread is counted), errors, gunicorn's CPU per request.
   A closed loop slows down with the server and hides its queueing; this one does not.

0. page weight (``--page-weight``, on by default): one participant in Chromium at 360 x 740 on a
   2x touch screen, with the browser cache off, through the first artwork's pages; for each kind of
   page the bytes it transfers before its artwork image (as served here, and gzipped as WhiteNoise
   serves static files in production) and the bytes of the image copy the phone picked.

Every run checks the database against what the load generator saw: every page the server
accepted against what is stored (symbols, each answer's choice, confidence and prior knowledge,
each preference), and every participant's stored rows against their plan: LOST ANSWERS 0.
``--instances 2`` starts two gunicorn instances on two ports (each with the configured workers)
and spreads the participants over them, as a proxy in front of several servers would.
``--profile N`` starts no server: N participants in this process through Django's test client,
each kind of page's queries and CPU time, then N more under cProfile: a page's CPU by layer
(sessions, CSRF, templates, the ORM, ...; benchmarks/layers.py). Figures only, no targets. Skips with a message when
PostgreSQL does not answer.

    .venv/bin/python benchmarks/survey_load.py [--participants 200] [--pause 2.0]
        [--saturated-participants 50] [--burst 200] [--burst-places 90] [--instances 1]
        [--open-participants 200] [--open-fraction 0.5] [--open-duration 30]
        [--workers N] [--threads N] [--database-url URL]
    .venv/bin/python benchmarks/survey_load.py --quick     # 20 participants, pause 0.2, 10 saturated, burst 20,
                                                           # open loop 20 participants for 5 s
    .venv/bin/python benchmarks/survey_load.py --profile 4 [--save PATH]   # PATH: the profile, for pstats
    .venv/bin/python benchmarks/survey_load.py --burst 0 --saturated-participants 0 --participants 0 \
        --open-fraction 0                                    # the page weight table alone
"""

import argparse
import os
import queue
import random
import runpy
import shutil
import signal
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from layers import layers_print, profiler  # noqa: E402
from serving import Server, Spread, ensure_database, gunicorn, migrate, open_loop, percentile, server_env  # noqa: E402

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/vivid_bench"
# The instructions, 10 artworks of 5 pages and 2 quality-control artworks of 2, the consent.
SESSION_PAGES = 2 + 10 * 5 + 2 * 2
STEP_KINDS = ("entry", "consent", "instructions", "symbols", "qa", "post_symbols", "post_qa", "compare", "get")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}"


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
    from study.services.participants import prolific_id_for
    from study.services.simulation import Outcome, SyntheticParticipant, entry_url

    pid = prolific_id_for(f"BENCH-{tag}-{index:04d}")
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


def crowd(bases: list[str], study, *, n: int, pause: float, tag: str, stop: threading.Event):
    from study.services.simulation import answer_key

    key = answer_key(study=study)
    groups = study.groups
    results = []
    pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="participant")
    try:
        futures = [
            pool.submit(take_part, bases[i % len(bases)], study.slug, key, index=i, tag=tag, group=groups[i % len(groups)],
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


# --- launch burst ----------------------------------------------------------------------------


def arrive(base: str, slug: str, *, pid: str, group: str, start_at: float, pause: float, seed: int) -> dict:
    """One Prolific arrival: the entry link (and its redirect to the consent page), a read of the
    consent page, the consent. ``admitted`` when the instructions page follows, ``turned_away``
    when the study answers that the group is full."""
    from study.services.simulation import HttpTransport, entry_url, parse_form

    rng = random.Random(seed)
    transport = HttpTransport()
    result = {"pid": pid, "group": group, "timings": [], "admitted": False, "turned_away": False, "error": ""}

    def timed(label, call):
        started = time.perf_counter()
        page = call()
        result["timings"].append((label, time.perf_counter() - started))
        return page

    time.sleep(max(0.0, start_at - time.perf_counter()))
    try:
        page = timed("entry", lambda: transport.get(entry_url(base, slug, pid=pid, group=group)))
        if page.status in (301, 302, 303):
            target = base + page.location if page.location.startswith("/") else page.location
            page = timed("get", lambda: transport.get(target))
        spec = parse_form(page.html) if page.status == 200 else None
        if spec is None or spec.step != "consent":
            result["error"] = f"no consent page: {page.status} at {page.url}"
            return result
        time.sleep(pause * rng.uniform(0.75, 1.25))
        data = {"step": "consent", "consent": "yes", "csrfmiddlewaretoken": spec.csrf}
        page = timed("consent", lambda: transport.post(page.url, data))
        following = parse_form(page.html) if page.status == 200 else None
        if following is not None and following.step == "instructions":
            result["admitted"] = True
        elif page.status == 403 and 'data-reason="full"' in page.html:
            result["turned_away"] = True
        else:
            result["error"] = f"consent answered {page.status}"
    except Exception as exc:  # a dropped connection ends this arrival, not the run
        result["error"] = f"{type(exc).__name__}: {exc}"
    return result


def run_burst(args, bases: list[str], stop: threading.Event) -> None:
    """``--burst`` participants arriving within one second, each reading the consent page for
    ``--pause`` seconds (jittered) before agreeing; the quota per group is ``--burst-places``."""
    from django.db import close_old_connections
    from django.db.models import Count

    from study.models import Participant, ParticipantStatus
    from study.services.participants import prolific_id_for

    n, places = args.burst, args.burst_places
    study = new_study("burst", places)
    groups = study.groups
    arrivals = Counter(groups[i % len(groups)] for i in range(n))
    print(f"\nLaunch burst: {n} participants arriving within 1 s, {args.pause:g} s on the consent page, "
          f"{places} places per group ({dict(arrivals)} arrive), study {study.slug}")  # fmt: skip
    tag = uuid.uuid4().hex[:6]
    start = time.perf_counter() + 0.5
    pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="arrival")
    try:
        futures = [
            pool.submit(arrive, bases[i % len(bases)], study.slug, pid=prolific_id_for(f"BURST-{tag}-{i:04d}"), group=groups[i % len(groups)],
                        start_at=start + i / n, pause=args.pause, seed=i)
            for i in range(n)
        ]  # fmt: skip
        results = []
        for future in futures:
            while not stop.is_set():
                try:
                    results.append(future.result(timeout=0.5))
                    break
                except TimeoutError:
                    continue
            if stop.is_set():
                raise KeyboardInterrupt
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    close_old_connections()

    by_kind = defaultdict(list)
    for result in results:
        for label, seconds in result["timings"]:
            by_kind[label].append(seconds)
    print(f"  {'request':<14}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for kind in ("entry", "get", "consent"):
        values = by_kind.get(kind)
        if values:
            print(f"  {kind:<14}{len(values):>7}{ms(percentile(values, 0.5)):>9}{ms(percentile(values, 0.95)):>9}"
                  f"{ms(max(values)):>9}")  # fmt: skip
    errors = Counter(r["error"] for r in results if r["error"])
    print(f"  errors: {sum(errors.values())}")
    for error, count in errors.most_common(5):
        print(f"    {count} × {error}")
    # What the load generator saw against what is stored, group by group.
    stored = {
        p.prolific_pid: p
        for p in Participant.objects.filter(study=study, is_preview=False).annotate(n_assignments=Count("assignments"))
    }
    bad = 0
    for group in groups:
        mine = [r for r in results if r["group"] == group]
        admitted = sum(r["admitted"] for r in mine)
        turned_away = sum(r["turned_away"] for r in mine)
        holding = [p for p in stored.values() if p.group == group and p.status == ParticipantStatus.IN_PROGRESS]
        expected = min(places, arrivals[group] - sum(bool(r["error"]) for r in mine))
        wrong = [
            r["pid"] for r in mine
            if r["admitted"] != (r["pid"] in stored and stored[r["pid"]].status == ParticipantStatus.IN_PROGRESS)
        ]  # fmt: skip
        incomplete = [
            p.prolific_pid for p in holding
            if p.n_assignments != len({key.split(":", 1)[0] for key in p.plan if ":" in key})
        ]  # fmt: skip
        overfilled = max(0, len(holding) - places)
        # Turned away while places remained: fewer admitted than places, yet someone was refused.
        refused_early = turned_away if len(holding) < places else 0
        bad += len(wrong) + len(incomplete) + overfilled + refused_early + (admitted != expected)
        print(f"  group {group}: {arrivals[group]} arrived, {places} places: {admitted} admitted, "
              f"{turned_away} turned away; stored {len(holding)} holding a place; overfilled by {overfilled}; "
              f"turned away while places remained {refused_early}; {len(wrong)} outcomes differing from the "
              f"database, {len(incomplete)} sessions without all their assignments")  # fmt: skip
    print(f"  QUOTA CHECK: {'ok' if bad == 0 else f'FAILED ({bad})'}")


# --- what was stored -------------------------------------------------------------------------


def check_stored(results) -> dict:
    """Every accepted page against the database, and every participant's rows against their plan."""
    from django.db.models import Count

    from study.models import Answer, Assignment, Criterion, Participant, Phase, Preference
    from study.steps import step_parse

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
                    # "Did you know it?" is asked only where the question names a symbol; elsewhere null.
                    knew = data.get(f"q{pk}-knew")
                    if answer is None or (answer.choice, str(answer.confidence), answer.knew_before) != (
                        value,
                        data[f"q{pk}-confidence"],
                        None if knew is None else knew == "yes",
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


# --- profile -------------------------------------------------------------------------------


def profile_pages(study, *, n: int, save: str | None = None) -> None:
    """``n`` participants in this process through Django's test client (every middleware and view,
    no HTTP): each kind of page's queries and CPU time, the cost that bounds saturated capacity."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from study.services.participants import prolific_id_for
    from study.services.simulation import DjangoClientTransport, SyntheticParticipant, answer_key, entry_url

    cpu = defaultdict(list)
    queries = defaultdict(list)

    class Measured(DjangoClientTransport):
        def _measure(self, call, url, *args):
            with CaptureQueriesContext(connection) as captured:
                started = time.thread_time()
                page = call(url, *args)
                spent = time.thread_time() - started
            kind = args[0]["step"].split(":")[-1] if args else ("entry" if "PROLIFIC_PID" in url else "get")
            cpu[kind].append(spent)
            queries[kind].append(len(captured))
            return page

        def get(self, url):
            return self._measure(super().get, url)

        def post(self, url, data):
            return self._measure(super().post, url, data)

    key = answer_key(study=study)

    def take_part(i: int) -> None:
        pid = prolific_id_for(f"PROF-{uuid.uuid4().hex[:8]}-{i}")
        participant = SyntheticParticipant(Measured(), key=key, rng=random.Random(i))
        outcome = participant.run(
            entry_url("http://localhost", study.slug, pid=pid, group=study.groups[i % len(study.groups)]), pid
        )
        if outcome.errors:
            print(f"  {pid}: {outcome.errors}")

    for i in range(n):
        take_part(i)
    print(f"  {'request':<14}{'n':>7}{'queries':>9}{'CPU ms':>9}")
    total_cpu = total_n = 0
    for kind in [*STEP_KINDS, *sorted(set(cpu) - set(STEP_KINDS))]:
        if kind not in cpu:
            continue
        values = cpu[kind]
        total_cpu += sum(values)
        total_n += len(values)
        print(
            f"  {kind:<14}{len(values):>7}{sum(queries[kind]) / len(values):>9.1f}{1000 * sum(values) / len(values):>9.1f}"
        )
    print(
        f"  {'all':<14}{total_n:>7}{sum(map(sum, queries.values())) / total_n:>9.1f}{1000 * total_cpu / total_n:>9.1f}"
    )
    # The same again under the profiler: where a page's CPU goes, by layer (benchmarks/layers.py).
    profile = profiler()
    profile.enable()
    for i in range(n, 2 * n):
        take_part(i)
    profile.disable()
    print("  a page's CPU by layer (cProfile own thread CPU, scaled to the unprofiled mean above):")
    layers_print(profile, cpu_ms=1000 * total_cpu / total_n)
    if save:
        profile.dump_stats(save)


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
    parser.add_argument("--workers", type=int, help="gunicorn workers (default: gunicorn.conf.py's).")
    parser.add_argument("--threads", type=int, help="Threads per gunicorn worker (default: gunicorn.conf.py's).")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument(
        "--quick", action="store_true", help="20 participants, pause 0.2 s, 10 saturated, open loop of 20 for 5 s."
    )
    parser.add_argument("--burst", type=int, default=200, help="Participants arriving within one second (0: none).")
    parser.add_argument(
        "--burst-places", type=int, default=90,
        help="Quota per group in the burst study: fewer places than arrivals, so some must be turned away.",
    )  # fmt: skip
    parser.add_argument(
        "--instances", type=int, default=1,
        help="gunicorn instances on as many ports; the load generator spreads participants over them.",
    )  # fmt: skip
    parser.add_argument(
        "--open-fraction", type=float, default=0.5,
        help="Open-loop load as a share of the saturated capacity (0: no open-loop run).",
    )  # fmt: skip
    parser.add_argument("--open-participants", type=int, default=200, help="Participants of the open-loop run.")
    parser.add_argument("--open-duration", type=float, default=30.0, help="Seconds of the open-loop run.")
    parser.add_argument(
        "--page-weight", action=argparse.BooleanOptionalAction, default=True,
        help="Print each participant page's bytes on a first visit at 360 px (needs Chromium).",
    )  # fmt: skip
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N",
        help="No server: N participants in this process; each kind of page's queries and CPU time.",
    )  # fmt: skip
    parser.add_argument("--save", metavar="PATH", help="with --profile: also write the profile (pstats) there")
    args = parser.parse_args()
    if args.quick:
        args.participants, args.pause, args.saturated_participants = 20, 0.2, 10
        args.burst, args.burst_places = 20, 8
        args.open_participants, args.open_duration = 20, 5.0

    if not ensure_database(args.database_url):
        return 0
    var_dir = tempfile.mkdtemp(prefix="vivid-bench-survey-")
    env = server_env(args.database_url, var_dir)
    # Every synthetic participant comes from this one address: the per-address limits would turn
    # the crowd away after the first few (they are what a real crowd, from many addresses, never meets).
    env.update(STUDY_ENTRY_RATE="off", STUDY_CONSENT_RATE="off")
    migrate(env)
    if args.page_weight and not args.profile:
        collectstatic(env)
    for name in ("DATABASE_URL", "DJANGO_ENV", "DEBUG", "DJANGO_SETTINGS_MODULE", "VIVID_VAR_DIR", "LOG_LEVEL",
                 "STUDY_ENTRY_RATE", "STUDY_CONSENT_RATE"):  # fmt: skip
        os.environ[name] = env[name]
    os.environ.pop("VIVID_TEST_SQLITE", None)
    import django

    django.setup()

    if args.profile:
        study = new_study("profile", args.profile)
        print(f"\nProfile: {args.profile} participants in-process (Django test client), study {study.slug}")
        profile_pages(study, n=args.profile, save=args.save)
        shutil.rmtree(var_dir, ignore_errors=True)
        return 0

    stop = threading.Event()
    servers: list[Server] = []

    def interrupted(signum, frame):
        stop.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    # Also when started in the background, where a shell leaves SIGINT ignored.
    signal.signal(signal.SIGINT, interrupted)
    try:
        for _ in range(args.instances):
            servers.append(gunicorn(env, workers=args.workers, threads=args.threads))
        for server in servers:
            server.wait_ready()
        database = urlparse(args.database_url)
        config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
        workers, threads = args.workers or config["workers"], args.threads or config["threads"]
        print(f"gunicorn.conf.py on {', '.join(s.base for s in servers)}: {workers} {config['worker_class']} "
              f"workers × {threads} threads each; PostgreSQL {database.hostname}:{database.port or 5432}"
              f"{database.path}; {os.cpu_count()} cores, shared with the load generator")  # fmt: skip
        run(args, servers, stop)
    except KeyboardInterrupt:
        stop.set()
        print("\ninterrupted")
        return 130
    finally:
        for server in servers:
            server.stop()
        if servers:
            print("gunicorn stopped")
        shutil.rmtree(var_dir, ignore_errors=True)
    return 0


def collectstatic(env: dict) -> None:
    """The static files into the server's own folder: with DEBUG off WhiteNoise serves only those."""
    import subprocess

    result = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if result.returncode:
        print(result.stderr[-2000:])
        raise SystemExit("collectstatic failed")


def run_page_weight(base: str) -> None:
    """One participant on a phone, cache off, through every kind of page of the first artwork."""
    from django.core.files.base import ContentFile

    from study.services.images import study_image_variants_make
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
    from tests.browser.page_weight import PAGE_BUDGET_BYTES, TransferLog, cold_cache, weights_table
    from tests.browser.study_helpers import click_next, current_step, entry_link, fill_page
    from tests.study.test_image_variants import photo

    if not Path(CHROMIUM).exists():
        print(f"\nPage weight: skipped, {CHROMIUM} is missing")
        return
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("\nPage weight: skipped, Playwright is not installed (requirements-dev.txt)")
        return
    study = new_study("weight", 2)
    # Museum photographs (2,000 x 1,400 JPEG), not the factory's thumbnails, with their copies made as at import.
    for artwork in study.artworks.all():
        artwork.image.save(f"weight-{artwork.key}.jpg", ContentFile(photo((2000, 1400), quality=88)))
    study_image_variants_make(study=study)
    weights = []
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the ORM reads answers while Playwright's loop runs
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(
            viewport={"width": 360, "height": 740}, device_scale_factor=2, is_mobile=True, has_touch=True
        )
        page = context.new_page()
        cold_cache(page)
        transfers = TransferLog(page)
        page.goto(entry_link(base, study.slug, pid="BENCH-WEIGHT", group="american"), wait_until="load")
        while (step := current_step(page)) is not None:
            page.wait_for_load_state("load")
            weights.append(transfers.take(step, gzip_estimate=True))
            if step.endswith(":compare"):
                break
            if step != "consent" and not step.endswith("instructions"):
                fill_page(page)
            click_next(page)
        browser.close()
    print(f"\nPage weight: first visit of each participant page at 360 x 740 (2x), cache off; budget "
          f"{PAGE_BUDGET_BYTES // 1024} KB before the image")  # fmt: skip
    for line in weights_table(weights):
        print(line)
    over = [w.step for w in weights if w.page_bytes > PAGE_BUDGET_BYTES]
    print(f"  PAGE WEIGHT: {'ok' if not over else 'over the budget on ' + ', '.join(over)}")


def new_study(label: str, quota: int):
    from study.models import StudyStatus
    from tests.study.factories import make_study, package_dict

    slug = f"bench-{label}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    # Quotas high enough that every synthetic participant gets a place.
    return make_study(package_dict(slug=slug, quota_per_group=quota), status=StudyStatus.LIVE)


def crowd_measured(servers: list[Server], study, *, n: int, pause: float, stop: threading.Event):
    """A crowd, with the wall time and the CPU seconds of the servers and of this load generator."""
    server_cpu, own_cpu, started = sum(s.cpu() for s in servers), time.process_time(), time.perf_counter()
    results = crowd([s.base for s in servers], study, n=n, pause=pause, tag=uuid.uuid4().hex[:6], stop=stop)
    wall = time.perf_counter() - started
    return results, wall, sum(s.cpu() for s in servers) - server_cpu, time.process_time() - own_cpu


def run(args, servers: list[Server], stop: threading.Event) -> None:
    from django.db import close_old_connections

    if args.page_weight:
        run_page_weight(servers[0].base)
    if args.burst > 0:
        run_burst(args, [s.base for s in servers], stop)
    capacity = None
    if args.saturated_participants > 0:
        study = new_study("saturated", args.saturated_participants)
        print(f"\nSaturated run: {args.saturated_participants} participants at once, no pause, study {study.slug}")
        spread = Spread(servers).start()
        results, wall, server_cpu, own_cpu = crowd_measured(
            servers, study, n=args.saturated_participants, pause=0.0, stop=stop
        )
        spread = spread.stop()
        close_old_connections()
        report = check_stored(results)
        rows = report["answers"] + report["preferences"]
        requests_made = sum(len(o.timings) for o, _a, _s in results)
        capacity = report["accepted_pages"] / wall
        print(f"  wall {wall:.1f} s; CAPACITY {capacity:,.0f} pages sent per second ({requests_made / wall:,.0f} "
              f"requests/s), {rows / wall:,.0f} answers stored per second ({report['answers']} answers + "
              f"{report['preferences']} preferences)")  # fmt: skip
        print(f"  CPU per request: server {1000 * server_cpu / requests_made:.1f} ms (every gunicorn process), "
              f"load generator {1000 * own_cpu / requests_made:.1f} ms; PostgreSQL and the rest share the same "
              f"{os.cpu_count()} cores")  # fmt: skip
        print(f"  {spread}")
        print_latencies(results)
        print_outcomes(results, report)

    if args.participants > 0:
        run_paced(args, servers, stop, capacity)
    if args.open_fraction > 0 and args.open_participants > 0 and capacity:
        run_open_loop(args, servers, stop, capacity)


def run_paced(args, servers: list[Server], stop: threading.Event, capacity: float | None) -> None:
    from django.db import close_old_connections

    steps = SESSION_PAGES
    study = new_study("paced", args.participants)
    print(f"\nPaced run: {args.participants} participants at once, {args.pause:g} s pause per page, "
          f"study {study.slug} ({steps} pages a session)")  # fmt: skip
    results, wall, server_cpu, own_cpu = crowd_measured(
        servers, study, n=args.participants, pause=args.pause, stop=stop
    )
    close_old_connections()
    report = check_stored(results)
    sessions = sorted(seconds for _o, _a, seconds in results)
    requests_made = sum(len(o.timings) for o, _a, _s in results)
    offered = report["accepted_pages"] / wall
    print(f"  wall {wall:.1f} s; session p50 {percentile(sessions, 0.5):.1f} s, max {max(sessions):.1f} s; "
          f"time a participant waited on the server: "
          f"{sum(s for o, _a, _s in results for _l, s in o.timings) / max(1, len(results)):.2f} s on average")  # fmt: skip
    headroom = (
        f"saturated capacity {capacity:,.0f} pages/s ({capacity / offered:.1f}x)" if capacity else "no saturated run"
    )
    print(f"  OFFERED LOAD {offered:,.0f} pages sent per second; {headroom}; server CPU per request "
          f"{1000 * server_cpu / requests_made:.1f} ms")  # fmt: skip
    print_latencies(results)
    print_outcomes(results, report)


# --- open loop -------------------------------------------------------------------------------


class ParticipantPool(queue.Queue):
    """The participants with a page in front of them. One that finishes or fails leaves the pool;
    should none come back (every request ends within HttpTransport's 30 s), an arrival gets None
    after WAIT seconds instead of blocking the run for ever."""

    WAIT = 35.0

    def get(self, block=True, timeout=None):
        try:
            return super().get(block, self.WAIT if timeout is None else timeout)
        except queue.Empty:
            return None


def run_open_loop(args, servers: list[Server], stop: threading.Event, capacity: float) -> None:
    """Participants in the middle of their sessions; pages arriving at random at a share of the
    saturated capacity, each sent by a participant whose previous page has come back."""
    from django.db import close_old_connections

    from study.services.participants import prolific_id_for
    from study.services.simulation import Outcome, SyntheticParticipant, answer_key, entry_url

    n, rate, duration = args.open_participants, args.open_fraction * capacity, args.open_duration
    steps = SESSION_PAGES
    # Pages each participant sends on average: they start at most this far from the end, so few
    # run out before the run ends (one that does leaves the pool).
    per_participant = rate * duration / n
    deepest = max(0, min(steps // 2, int(steps - 2 - 2 * per_participant)))
    study = new_study("open", n)
    print(f"\nOpen loop: {n} participants in the middle of a session, pages arriving at random at "
          f"{args.open_fraction:g} of the saturated capacity ({rate:,.1f} pages/s) for {duration:g} s, "
          f"study {study.slug}")  # fmt: skip
    key = answer_key(study=study)
    groups = study.groups
    tag = uuid.uuid4().hex[:6]
    bases = [s.base for s in servers]

    def start(i: int):
        """Enter, consent, read the instructions and answer a random number of pages, unmeasured."""
        pid = prolific_id_for(f"OPEN-{tag}-{i:04d}")
        rng = random.Random(i)
        participant = SyntheticParticipant(recording_transport(), key=key, rng=rng)
        outcome = Outcome(pid=pid)
        page = participant.enter(
            entry_url(bases[i % len(bases)], study.slug, pid=pid, group=groups[i % len(groups)]), outcome
        )
        for _ in range(2 + rng.randint(0, deepest)):
            if page is None or stop.is_set():
                break
            page = participant.step(page, outcome)
        return participant, outcome, page

    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="open-start") as pool:
        started = list(pool.map(start, range(n)))
    if stop.is_set():
        raise KeyboardInterrupt
    idle = ParticipantPool()
    for participant, outcome, page in started:
        if page is not None:
            idle.put((participant, outcome, page))
    warm_up = [len(o.timings) for _p, o, _page in started]
    print(f"  {idle.qsize()} participants ready, {sum(o.steps for _p, o, _page in started)} pages sent before "
          f"the clock starts; errors before it: {sum(len(o.errors) for _p, o, _page in started)}")  # fmt: skip

    def send(client):
        if client is None:
            return False, f"no participant free within {ParticipantPool.WAIT:g} s", None
        participant, outcome, page = client
        errors = len(outcome.errors)
        following = participant.step(page, outcome)
        if len(outcome.errors) > errors:
            return False, outcome.errors[-1], None
        # None: the page was accepted and the session ended (Prolific's redirect).
        return True, "", None if following is None else (participant, outcome, following)

    server_cpu, own_cpu = sum(s.cpu() for s in servers), time.process_time()
    result = open_loop(rate=rate, duration=duration, seed=0, clients=idle, send=send)
    server_cpu, own_cpu = sum(s.cpu() for s in servers) - server_cpu, time.process_time() - own_cpu
    close_old_connections()
    requests_made = sum(len(o.timings) - before for (_p, o, _page), before in zip(started, warm_up, strict=True))
    print(f"  OFFERED {result['offered_rate']:,.1f} pages/s, SERVED {result['rate']:,.1f} pages/s "
          f"({result['answers']} pages, {requests_made} requests); latency from each arrival's instant: "
          f"p50 {ms(result['p50'])} ms, p95 {ms(result['p95'])} ms, max {ms(result['max'])} ms; "
          f"errors {result['errors']}")  # fmt: skip
    for error in result["error_sample"]:
        print(f"    {error}")
    print(f"  CPU per request: server {1000 * server_cpu / max(1, requests_made):.1f} ms (every gunicorn process), "
          f"load generator {1000 * own_cpu / max(1, requests_made):.1f} ms; the generator sent late by "
          f"{ms(result['generator_lag_p95'])} ms at p95")  # fmt: skip
    print("  p95 per 5 s of arrivals: " + " ".join(ms(p95) for p95 in result["p95_by_slice"]) + " ms")
    results = [(outcome, participant.transport.accepted, 0.0) for participant, outcome, _page in started]
    print_outcomes(results, check_stored(results))


if __name__ == "__main__":
    sys.exit(main())
