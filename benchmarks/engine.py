"""Run engine throughput against the loopback OpenAI-compatible server.

1,600 items at a fixed latency under a concurrency cap: the ideal wall time is
items x latency / cap. Prints the measured time as a ratio to that ideal
(target: at most 1.15), then reruns the same run, which must send 0 requests.

    .venv/bin/python benchmarks/engine.py [--items 1600] [--latency-ms 400] [--cap 32]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test_bench .venv/bin/python benchmarks/engine.py

Uses a throwaway SQLite database unless DATABASE_URL names a throwaway one.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class FakeServer:
    """The loopback server in its own process, so it does not compete with the engine for the GIL."""

    def __init__(self, latency_ms: float):
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.latency_ms = latency_ms
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self):
        import subprocess
        import urllib.request

        self.process = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "tests/evaluation/fake_openai.py"),
                "--port",
                str(self.port),
                "--latency-ms",
                str(self.latency_ms),
                "--max-seconds",
                "900",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stats", timeout=1)
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the fake server did not start")

    def stats(self) -> dict:
        import json
        import urllib.request

        return json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stats", timeout=5))

    def reset(self) -> None:
        import urllib.request

        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{self.port}/_reset", method="POST"), timeout=5)

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1600)
    parser.add_argument("--latency-ms", type=float, default=400)
    parser.add_argument("--cap", type=int, default=32)
    parser.add_argument("--chunk", type=int, default=800, help="Items per Celery chunk task.")
    args = parser.parse_args()

    var = tempfile.mkdtemp(prefix="vivid-bench-engine-")
    os.environ.setdefault("VIVID_VAR_DIR", var)
    os.environ.setdefault("DJANGO_ENV", "test")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vivid_site.settings")
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    os.environ["EVAL_CHUNK_SIZE"] = str(args.chunk)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Dataset
    from annotation.services import expression_import
    from evaluation.selectors import run_progress
    from evaluation.services import model_add, run_start

    try:
        call_command("migrate", verbosity=0)
        corpus = "expression,explanation\n" + "".join(f"Câu thử số {n},Giải nghĩa số {n}\n" for n in range(args.items))
        expression_import(dataset_name="Engine bench", filename="b.csv", content=corpus.encode())
        dataset = Dataset.objects.get(name="Engine bench")
        with FakeServer(args.latency_ms) as server:
            model = model_add(
                name="bench", provider="openai", base_url=server.base_url, model_id="bench", max_concurrency=args.cap
            )
            ideal = args.items * args.latency_ms / 1000 / args.cap
            started = time.perf_counter()
            run = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=dataset)
            wall = time.perf_counter() - started
            progress = run_progress(run=run)
            stats = server.stats()
            sent = stats["requests"]
            print(f"database: {connection.vendor}")
            print(
                f"items: {args.items}, latency: {args.latency_ms:.0f} ms, cap: {args.cap}, chunk: {args.chunk}, "
                f"done: {progress['n_done']}, failed: {progress['n_failed']}"
            )
            print(f"requests sent: {sent}, most at once at the server: {stats['max_in_flight']}")
            print(f"wall time: {wall:.2f} s, ideal {ideal:.2f} s, ratio {wall / ideal:.3f} (target <= 1.15)")
            server.reset()
            started = time.perf_counter()
            rerun = run_start(kind="generation", model=model, prompt_name="zero-shot", dataset=dataset)
            cached_wall = time.perf_counter() - started
            cached = run_progress(run=rerun)
            print(
                f"cached rerun: {server.stats()['requests']} requests sent, {cached['n_cached']} cached items, "
                f"wall time {cached_wall:.2f} s"
            )
    finally:
        shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
