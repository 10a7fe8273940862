"""Where an answer's CPU goes: the review page's save, profiled in one process, broken down by layer.

Profile before changing (issue 25): the load benchmark (``benchmarks/review_load.py``) says how many
answers per second gunicorn serves and how much CPU each costs; this says which part of Django and of
the app spends it. One annotator answers ``--answers`` items of a fresh round exactly as the browser's
htmx form does (POST with the CSRF token and the htmx headers, the next item's panel read from the
answer), through the whole middleware stack (CSRF enforced), against the benchmark's PostgreSQL
database and Redis (the deployment's cache and broker), in this process.

It prints the thread CPU per answer without a profiler (the figure to compare with the load
benchmark's gunicorn CPU per answer, which adds gunicorn's HTTP parsing), then, from a cProfile of
the same answers, each layer's share: every function's own time (``tottime``) is given to the layer
its file belongs to (sessions, auth, CSRF, the other middleware, URL routing, templates, forms, the
ORM, the database driver, the cache, Celery's enqueue, the app's own code, the rest of Django, the
standard library), so the shares add up to the whole.

    .venv/bin/python benchmarks/review_profile.py [--answers 300] [--top 25] [--save PATH] [--database-url URL]

``--save`` writes the profile for ``pstats`` (``print_callers``: which code calls a costly function).
"""

import argparse
import os
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from layers import layers_print, profiler  # noqa: E402
from review_load import (  # noqa: E402
    DEFAULT_DATABASE_URL,
    DEFAULT_REDIS_URL,
    FORM_ACTION,
    corpus_build,
    redis_ready,
    vivid_answer,
)
from serving import ensure_database, migrate, server_env  # noqa: E402


def answer_loop(client, url: str, panel: str, themes: list[str], *, answers: int, rng) -> tuple[int, str]:
    done = 0
    while done < answers:
        action = FORM_ACTION.search(panel)
        if action is None:
            raise SystemExit("the queue ran out: ask for fewer --answers or more --items")
        url = action.group(1)
        data, _expected = vivid_answer(panel, rng, themes)
        response = client.post(
            url, data, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="review-panel", HTTP_HX_CURRENT_URL=url, HTTP_REFERER=url
        )
        if response.status_code != 200 or not response.headers.get("HX-Push-Url"):
            raise SystemExit(f"{response.status_code} on {url}: {response.content[:300]!r}")
        panel = response.content.decode()
        done += 1
    return done, panel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=300, help="answers measured (and as many to warm up)")
    parser.add_argument("--top", type=int, default=25, help="functions listed by their own time")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--save", metavar="PATH", help="also write the profile (pstats) there, to read its callers")
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REVIEW_REDIS_URL", DEFAULT_REDIS_URL))
    parser.add_argument("--database-url", default=os.environ.get("BENCH_REVIEW_DATABASE_URL", DEFAULT_DATABASE_URL))
    args = parser.parse_args()

    if not ensure_database(args.database_url):
        return
    env = server_env(args.database_url, tempfile.mkdtemp(prefix="vivid-review-profile-"))
    redis_ready(args.redis_url)
    env.update({"CACHE_URL": args.redis_url, "CELERY_BROKER_URL": args.redis_url, "CELERY_QUEUE": "vivid-profile"})
    os.environ.update(env)
    os.environ["DB_CONN_MAX_AGE"] = "60"  # as a gunicorn thread keeps its connection between requests
    migrate(env)
    import django

    django.setup()
    from django.test import Client
    from django.urls import reverse

    from annotation.services import round_create

    corpus = corpus_build(items=args.items, annotators=2, seed=7)
    round_ = round_create(
        name=f"profile-{int(time.time() * 1000)}",
        dataset=corpus.dataset,
        # Two per item as in the paper; one answers, so each save leaves the item waiting for the other.
        annotators=corpus.annotators[:2],
        suggestion_set=corpus.suggestions,
        annotators_per_item=2,
        seed=7,
    )
    client = Client(enforce_csrf_checks=True)
    client.force_login(corpus.annotators[0])
    queue = reverse("annotation:review_queue", args=[round_.pk])
    page = client.get(queue, follow=True)
    panel = page.content.decode()
    rng = random.Random(7)

    _, panel = answer_loop(client, queue, panel, corpus.themes, answers=args.answers, rng=rng)  # warm-up
    started_cpu, started_wall = time.thread_time(), time.perf_counter()
    _, panel = answer_loop(client, queue, panel, corpus.themes, answers=args.answers, rng=rng)
    cpu = (time.thread_time() - started_cpu) / args.answers
    wall = (time.perf_counter() - started_wall) / args.answers

    profile = profiler()
    profile.enable()
    _, panel = answer_loop(client, queue, panel, corpus.themes, answers=args.answers, rng=rng)
    profile.disable()
    if args.save:
        profile.dump_stats(args.save)

    print(f"\nreview page, one answer (htmx POST, next panel rendered), {args.answers} answers measured:")
    print(f"  CPU {cpu * 1000:.2f} ms per answer in this process (wall {wall * 1000:.2f} ms, database and Redis waits)")
    print("  by layer (cProfile own thread CPU, built-ins charged to their callers, scaled to the unprofiled CPU):")
    layers_print(profile, cpu_ms=cpu * 1000)
    print(f"\n  top {args.top} functions by own time (profiled):")
    stream_stats = pstats.Stats(profile, stream=sys.stdout)
    stream_stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
