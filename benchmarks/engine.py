"""Engine throughput on the path users take, against the loopback OpenAI-compatible server.

PostgreSQL (its own database), Redis as the Celery broker, real `celery -A vivid_site worker`
processes started as the README documents, and the CLI `manage.py run_generation ... --wait`
as a subprocess. The fake endpoint answers after a fixed latency with a hard cap on
concurrent requests (beyond it: 429), so the ideal is items x latency / cap. Prints the
request phase (first request to last response, from the server's log) and the whole
command's wall time as ratios to that ideal (targets 1.10 and 1.25), verifies the database
against the server's log (every item done, each reply stored once, nothing lost or sent
twice), reruns the same run (it must send 0 requests), and runs the peer, lm-evaluation-harness
0.4.13, against the same server with the same cap and as many requests.

    .venv/bin/python benchmarks/engine.py [--items 1600] [--latency-ms 200] [--cap 32] [--workers 1]
    .venv/bin/python benchmarks/engine.py --workers 2 --no-peer   # two worker processes share one cap
    .venv/bin/python benchmarks/engine.py --eager --no-peer       # the old in-process mode (--inline)

Needs PostgreSQL (BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432, database
vivid_bench_engine, dropped and created anew) and Redis (BENCH_REDIS_URL, default
redis://127.0.0.1:6379/11, a db no test uses; flushed). lm-eval is pip-installed into
var/lmeval-venv on the first run.
"""

import argparse
import collections
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harnesses import LMEVAL_VERSION, lmeval_install  # noqa: E402

PG_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432")
PG_NAME = "vivid_bench_engine"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/11")
QUEUE = "bench-engine"
DATASET = "Engine bench"
MODEL = "bench"
PY = sys.executable
LAST_COMMAND_CPU = 0.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class FakeServer:
    """The loopback server in its own process with a hard cap, logging each request's start and end."""

    def __init__(self, *, latency_ms: float, cap: int, log: Path):
        self.port = free_port()
        self.latency_ms = latency_ms
        self.cap = cap
        self.log = log
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self):
        self.process = subprocess.Popen(
            [PY, str(ROOT / "tests/evaluation/fake_openai.py"), "--port", str(self.port)]
            + ["--latency-ms", str(self.latency_ms), "--max-concurrent", str(self.cap), "--over-cap", "refuse"]
            + ["--log", str(self.log), "--max-seconds", "1800"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                self.stats()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the fake server did not start")

    def stats(self) -> dict:
        return json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stats", timeout=5))

    def reset(self, *, keep_as: str | None = None) -> None:
        """Clear the counters and the request log (kept under ``keep_as`` beside it, to read later)."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/_reset", method="POST")
        urllib.request.urlopen(request, timeout=5)
        if keep_as:
            shutil.copyfile(self.log, self.log.with_name(keep_as))
        self.log.write_text("")

    def cpu_seconds(self) -> float:
        """The server process's CPU time so far (user + system), from /proc."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=10)


def request_phase(records: list[dict]) -> tuple[float, int]:
    """First request to last response, and the most requests the server worked on at once."""
    ok = [r for r in records if r["outcome"] == "ok"]
    if not ok:
        return 0.0, 0
    events = sorted([(r["at"], 1) for r in ok] + [(r["done"], -1) for r in ok])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return max(r["done"] for r in ok) - min(r["at"] for r in ok), most


def phase_profile(records: list[dict], cap: int) -> str:
    """Where the request phase loses time against the ideal: the ramp-up until ``cap`` requests are
    at the server at once, the mean in flight in between, and the tail once fewer than ``cap`` remain."""
    ok = [r for r in records if r["outcome"] == "ok"]
    if not ok:
        return "no requests"
    events = sorted([(r["at"], 1) for r in ok] + [(r["done"], -1) for r in ok])
    begin, end = events[0][0], events[-1][0]
    full_at = None
    last_full = begin
    area = 0.0
    now, previous = 0, begin
    for at, step in events:
        area += now * (at - previous)
        previous = at
        now += step
        if now >= cap:
            full_at = full_at if full_at is not None else at
            last_full = at
    full_at = full_at if full_at is not None else begin
    mean = area / (end - begin) if end > begin else 0.0
    return (
        f"ramp-up {full_at - begin:.2f} s until {cap} at once, mean {mean:.1f} in flight over the phase,"
        f" tail {end - last_full:.2f} s after the last moment with {cap} at once"
    )


def last_user(body: dict) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m.get("role") == "user")


# -- the app's side ------------------------------------------------------------------------


def app_env(var: Path, database_url: str) -> dict:
    return {
        **os.environ,
        "DJANGO_ENV": "development",
        "DEBUG": "0",  # a deployment runs without DEBUG (DEBUG keeps every query in memory)
        "DJANGO_SETTINGS_MODULE": "vivid_site.settings",
        "VIVID_VAR_DIR": str(var),
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": REDIS_URL,
        "CELERY_QUEUE": QUEUE,
        "PYTHONUNBUFFERED": "1",
    }


def database_fresh(name: str = PG_NAME) -> str:
    import psycopg

    with psycopg.connect(f"{PG_URL}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{PG_URL}/{name}"


def redis_flush() -> None:
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()


def app_prepare(*, items: int, cap: int, base_url: str) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from annotation.models import Dataset
    from annotation.services import expression_import
    from llm.models import ModelConfig
    from llm.services import model_add

    call_command("migrate", verbosity=0)
    if not Dataset.objects.filter(name=DATASET).exists():
        corpus = "expression,explanation\n" + "".join(f"Câu thử số {n},Giải nghĩa số {n}\n" for n in range(items))
        expression_import(dataset_name=DATASET, filename="b.csv", content=corpus.encode())
    ModelConfig.objects.filter(name=MODEL).delete()
    model_add(name=MODEL, provider="openai", base_url=base_url, model_id=MODEL, max_concurrency=cap)
    connections.close_all()


def workers_start(n: int, env: dict, var: Path, extra: list[str]) -> list[tuple[subprocess.Popen, Path]]:
    started = []
    for i in range(n):
        log = var / f"worker-{i}.log"
        # The README's command: `celery -A vivid_site worker`, its default pool and concurrency.
        command = [str(Path(PY).parent / "celery"), "-A", "vivid_site", "worker", "-l", "info", "-n", f"bench{i}@%h"]
        process = subprocess.Popen(
            command + extra, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True
        )
        started.append((process, log))
    deadline = time.monotonic() + 90
    for process, log in started:
        while "ready." not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"a worker did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
    return started


def workers_cpu(started) -> float:
    """CPU seconds (user + system) used so far by the worker processes and their pool children."""
    import psutil

    total = 0.0
    for process, _ in started:
        try:
            parent = psutil.Process(process.pid)
            for one in [parent, *parent.children(recursive=True)]:
                times = one.cpu_times()
                total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


def workers_stop(started) -> None:
    for process, _ in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process, _ in started:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def cli_generation(env: dict, *, inline: bool) -> tuple[float, int, str]:
    command = [PY, "manage.py", "run_generation", "--dataset", DATASET, "--model", MODEL, "--prompt", "zero-shot"]
    command += ["--wait"] + (["--inline"] if inline else [])
    import resource

    started = time.perf_counter()
    at = time.time()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    global LAST_COMMAND_CPU
    LAST_COMMAND_CPU = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode:
        raise RuntimeError(f"run_generation failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    return wall, int(done.stdout.split()[0]), done.stdout.strip().splitlines()[-1], at


def run_verify(run_id: int, records: list[dict]) -> dict:
    """The database against what the server saw: each item done once with the reply it was sent."""
    from django.db import connections

    from evaluation.models import ItemStatus, RunItem
    from tests.evaluation.fake_openai import default_reply

    sent = collections.Counter(last_user(r["body"]) for r in records if r["outcome"] == "ok")
    rows = list(RunItem.objects.filter(run_id=run_id).values_list("status", "messages", "response"))
    done = [row for row in rows if row[0] == ItemStatus.DONE]
    wrong = lost = 0
    for status, messages, response in rows:
        if status != ItemStatus.DONE:
            lost += 1
            continue
        text = last_user({"messages": messages})
        if sent.get(text) != 1 or response != default_reply({"messages": messages}):
            wrong += 1
    connections.close_all()
    return {
        "items": len(rows),
        "done": len(done),
        "lost": lost,
        "wrong": wrong,
        "sent_twice": sum(1 for n in sent.values() if n > 1),
        "sent": sum(sent.values()),
    }


def timeline(run_id: int, records: list[dict], at: float, wall: float) -> str:
    from django.db import connections

    from evaluation.models import Run

    run = Run.objects.get(pk=run_id)
    connections.close_all()
    ok = [r for r in records if r["outcome"] == "ok"]
    first, last = min(r["at"] for r in ok), max(r["done"] for r in ok)
    marks = [
        ("command start to run created", run.created_at.timestamp() - at),
        ("to fan-out", run.started_at.timestamp() - run.created_at.timestamp()),
        ("to first request", first - run.started_at.timestamp()),
        ("request phase", last - first),
        ("to run done", run.finished_at.timestamp() - last),
        ("to command exit", at + wall - run.finished_at.timestamp()),
    ]
    return ", ".join(f"{name} {seconds:.2f} s" for name, seconds in marks)


# -- the peer ---------------------------------------------------------------------------------


def lmeval_run(*, server: FakeServer, prompts: list[str], cap: int, var: Path) -> dict:
    """lm-eval's local-chat-completions model, num_concurrent=cap, over a generate_until task of our prompts."""
    binary = lmeval_install()
    tasks = var / "lmeval-tasks"
    tasks.mkdir(exist_ok=True)
    data = tasks / "items.jsonl"
    data.write_text("".join(json.dumps({"prompt": p, "target": ""}, ensure_ascii=False) + "\n" for p in prompts))
    (tasks / "vivid_engine_bench.yaml").write_text(
        "task: vivid_engine_bench\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        'doc_to_text: "{{prompt}}"\n'
        'doc_to_target: "{{target}}"\n'
        "generation_kwargs:\n  until: []\n  max_gen_toks: 150\n  temperature: 0.7\n  do_sample: true\n"
        "metric_list:\n  - metric: exact_match\n"
    )
    model_args = (
        f"model={MODEL},base_url={server.base_url}/chat/completions,num_concurrent={cap},"
        "max_retries=3,tokenized_requests=False,tokenizer_backend=None"
    )
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("VIRTUAL_ENV", None)
    server.reset()
    started = time.perf_counter()
    done = subprocess.run(
        [str(binary), "--model", "local-chat-completions", "--model_args", model_args]
        + ["--tasks", "vivid_engine_bench", "--include_path", str(tasks), "--apply_chat_template"]
        + ["--batch_size", "1"],
        cwd=var,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    wall = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"lm-eval failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    records = server.records()
    phase, most = request_phase(records)
    return {"wall": wall, "phase": phase, "most": most, "sent": len(records), "stats": server.stats()}


# -- main ---------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1600)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--cap", type=int, default=32)
    parser.add_argument("--workers", type=int, default=1, help="Celery worker processes sharing the model's cap.")
    parser.add_argument("--worker-args", default="", help="Extra arguments for each worker, e.g. '--pool=threads'.")
    parser.add_argument("--eager", action="store_true", help="The old in-process mode: run_generation --inline.")
    parser.add_argument("--no-peer", action="store_true", help="Skip lm-evaluation-harness.")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="Keep the temporary folder (worker logs, request logs: requests-run1.jsonl is the first run's).",
    )
    args = parser.parse_args()

    var = Path(tempfile.mkdtemp(prefix="vivid-bench-engine-"))
    database_url = database_fresh()
    env = app_env(var, database_url)
    os.environ.update({k: env[k] for k in ("DJANGO_ENV", "DEBUG", "DJANGO_SETTINGS_MODULE", "VIVID_VAR_DIR")})
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_QUEUE")})
    ideal = args.items * args.latency_ms / 1000 / args.cap
    workers = []
    try:
        with FakeServer(latency_ms=args.latency_ms, cap=args.cap, log=var / "requests.jsonl") as server:
            app_prepare(items=args.items, cap=args.cap, base_url=server.base_url)
            if not args.eager:
                redis_flush()
                workers = workers_start(args.workers, env, var, args.worker_args.split())
            mode = "in-process (--inline)" if args.eager else f"{args.workers} Celery worker(s) over Redis"
            print(
                f"PostgreSQL, {mode}; {args.items} items, endpoint at {args.latency_ms:.0f} ms with a hard cap of "
                f"{args.cap}: ideal {ideal:.2f} s"
            )
            cpu, engine_cpu = server.cpu_seconds(), workers_cpu(workers)
            wall, run_id, summary, at = cli_generation(env, inline=args.eager)
            server_cpu = server.cpu_seconds() - cpu
            engine_cpu = workers_cpu(workers) - engine_cpu + LAST_COMMAND_CPU
            records = server.records()
            stats = server.stats()
            phase, most = request_phase(records)
            check = run_verify(run_id, records)
            print(f"  {summary}")
            print(f"  where the whole command's time goes: {timeline(run_id, records, at, wall)}")
            print(
                f"  ours: request phase {phase:.2f} s ({phase / ideal:.3f}x ideal, target <= 1.10), "
                f"whole command {wall:.2f} s ({wall / ideal:.3f}x, target <= 1.25)"
            )
            print(f"  request phase: {phase_profile(records, args.cap)}")
            print(
                f"  capacity: {args.items / phase:.0f} requests/s at the endpoint (offered cap/latency "
                f"{args.cap / args.latency_ms * 1000:.0f}/s); at most {most} at once, {stats['refused']} refused "
                f"over the cap; server CPU {server_cpu * 1000 / max(1, len(records)):.2f} ms/request"
            )
            print(
                f"  engine CPU (workers + command, more stable than wall time on a shared machine): "
                f"{engine_cpu * 1000 / args.items:.2f} ms/item, of which the command {LAST_COMMAND_CPU:.2f} s"
            )
            print(
                f"  database: {check['done']}/{check['items']} items done, {check['sent']} requests, "
                f"{check['lost']} lost, {check['wrong']} wrong, {check['sent_twice']} sent twice"
            )
            server.reset(keep_as="requests-run1.jsonl" if args.keep else None)
            wall, _, summary, _ = cli_generation(env, inline=args.eager)
            print(f"  cached rerun: {server.stats()['requests']} requests sent, whole command {wall:.2f} s ({summary})")
            workers_stop(workers)
            workers = []
            if not args.no_peer:
                from django.db import connections

                from evaluation.models import RunItem

                prompts = [
                    last_user({"messages": m})
                    for m in RunItem.objects.filter(run_id=run_id).order_by("id").values_list("messages", flat=True)
                ]
                connections.close_all()
                peer = lmeval_run(server=server, prompts=prompts, cap=args.cap, var=var)
                print(
                    f"  lm-eval {LMEVAL_VERSION} (local-chat-completions, num_concurrent={args.cap}, a generate_until "
                    f"task over the same prompts): request phase {peer['phase']:.2f} s "
                    f"({peer['phase'] / ideal:.3f}x ideal), whole command {peer['wall']:.2f} s "
                    f"({peer['wall'] / ideal:.3f}x, its start-up included); {peer['sent']} requests, at most "
                    f"{peer['most']} at once, {peer['stats']['refused']} refused"
                )
    finally:
        workers_stop(workers)
        if args.keep:
            print(f"  kept {var}")
        else:
            shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
