"""Study results at scale: the results page, its downloads and figures, and the results API, for a
study of 100 and one of 1,000 synthetic participants, on PostgreSQL.

Builds (or reuses, when a run before left them) two draft copies of the demo study under their own
slugs in their own database (``vivid_bench_study`` by default, created and migrated when missing,
so neither the test suite's nor the app's database is touched), filled with synthetic participants
through the participant pages' services (``synthetic_responses_generate``, 10% failing quality
control), then ANALYZEs the tables as autovacuum would. For each page it prints, small beside large:

- first visit: the shared cache cleared and the bootstrap draws forgotten, as the first request of
  a fresh process after a change (median of ``--repeat``);
- after an answer: the study's stamp bumped in a warm process, as the first visit after a new
  answer usually is;
- the queries of the first visit, and the ratio large / small of its time.

Then the rate of ``generate_test_responses`` on the demo study (``--rate-participants`` more
synthetic participants, in one process and in two). Every request goes through Django's test
client in this process (middleware, views, templates, the streamed bodies read to the end); no
server. Figures only, no targets. Skips with a message when PostgreSQL does not answer.

    .venv/bin/python benchmarks/study_results_scale.py [--sizes 100 1000] [--repeat 3]
        [--rate-participants 200] [--database-url URL]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from serving import ensure_database, migrate, server_env  # noqa: E402

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/vivid_bench_study"


def study_of(size: int, *, workers: int, slug: str = ""):
    """The benchmark's study of ``size`` participants: the demo package under its own slug, filled up."""
    from study.demo import write_demo_package
    from study.models import Participant, Study
    from study.services.imports import study_import
    from study.services.simulation import synthetic_responses_generate

    slug = slug or f"bench-scale-{size}"
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        folder = Path(tempfile.mkdtemp(prefix="vivid-bench-study-"))
        write_demo_package(folder)
        package = json.loads((folder / "study.json").read_text())
        package["slug"] = slug
        (folder / "study.json").write_text(json.dumps(package, ensure_ascii=False))
        # A draft: synthetic participants may take it, nothing else needs it launched.
        study = study_import(source=folder, start_prepare=False)
    missing = size - Participant.objects.filter(study=study, is_test=True).count()
    if missing > 0:
        started = time.perf_counter()
        synthetic_responses_generate(study=study, n=missing, qc_fail_rate=0.1, workers=workers)
        seconds = time.perf_counter() - started
        print(f"{slug}: {missing} participants made in {seconds:.1f} s ({missing / seconds:.1f} per second)")
    elif size:
        print(f"{slug}: reused ({size} participants)")
    return study


def urls(slug: str) -> dict[str, str]:
    results = f"/studies/{slug}/results/"
    responses = f"/api/study/{slug}/responses/"
    return {
        "results page": results + "?include_test=1",
        "results fragment (htmx)": results + "?include_test=1",
        "results JSON download": results + "?format=json&include_test=1",
        "figure SVG": f"/studies/{slug}/results/figure/preferences.svg?include_test=1",
        "figure PDF": f"/studies/{slug}/results/figure/preferences.pdf?include_test=1",
        "export.csv": f"/studies/{slug}/export.csv?include_test=1",
        "export.csv with Prolific ids": f"/studies/{slug}/export.csv?include_test=1&raw_pid=1",
        "API results": f"/api/study/{slug}/results/?include_test=1",
        "API responses (page 1)": responses + "?include_test=1",
        "API responses (last page of 1000)": responses + "?include_test=1&page=last&page_size=1000",
        "API responses CSV": responses + "?include_test=1&format=csv",
    }


def visit(client, url: str, *, fragment: bool) -> tuple[float, int, int]:
    """Seconds to the last byte, queries, bytes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    headers = {"HTTP_HX_REQUEST": "true"} if fragment else {}
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        response = client.get(url, **headers)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        seconds = time.perf_counter() - started
    if response.status_code not in (200, 404):
        raise SystemExit(f"{url}: {response.status_code}")
    return seconds, len(captured), len(body)


def measure(client, study, *, repeat: int) -> dict[str, dict]:
    from django.core.cache import cache

    from core.stamps import stamp_bump
    from study import analysis
    from study.selectors.results import study_results_scope

    figures = {}
    for name, url in urls(study.slug).items():
        fragment = "htmx" in name
        cold, warm, queries, size = [], [], 0, 0
        for _ in range(repeat):
            cache.clear()
            analysis.Draws.forget()
            seconds, queries, size = visit(client, url, fragment=fragment)
            cold.append(seconds)
            stamp_bump(scope=study_results_scope(study.pk))
            warm.append(visit(client, url, fragment=fragment)[0])
        figures[name] = {
            "cold": statistics.median(cold),
            "warm": statistics.median(warm),
            "queries": queries,
            "bytes": size,
        }
    return figures


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def print_table(sizes: list[int], results: dict[int, dict]) -> None:
    small, large = sizes[0], sizes[-1]
    print(
        f"\n{'':34}{'first visit':>24}{'after an answer':>24}{'queries':>12}{'large/small':>13}\n"
        f"{'':34}{small:>11,}{large:>13,}{small:>11,}{large:>13,}{small:>6,}{large:>6,}"
    )
    for name in results[small]:
        a, b = results[small][name], results[large][name]
        ratio = b["cold"] / a["cold"] if a["cold"] else float("nan")
        print(
            f"{name:34}{ms(a['cold']):>11}{ms(b['cold']):>13}{ms(a['warm']):>11}{ms(b['warm']):>13}"
            f"{a['queries']:>6}{b['queries']:>6}{ratio:>12.1f}x"
        )


def generate_rate(study, n: int) -> None:
    from study.services.simulation import synthetic_responses_generate

    for workers in (1, 2):
        started = time.perf_counter()
        outcomes = synthetic_responses_generate(study=study, n=n, qc_fail_rate=0.1, workers=workers)
        seconds = time.perf_counter() - started
        failed = sum(1 for outcome in outcomes if outcome.errors)
        print(
            f"generate_test_responses, demo study, {workers} process{'es' if workers > 1 else ''}: "
            f"{n / seconds:.1f} participants per second ({n} in {seconds:.1f} s, {failed} failed)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[100, 1000], metavar=("SMALL", "LARGE"))
    parser.add_argument("--repeat", type=int, default=3, help="First visits per page and size (the median counts).")
    parser.add_argument("--rate-participants", type=int, default=200)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL))
    args = parser.parse_args()

    if not ensure_database(args.database_url):
        return 0
    var_dir = tempfile.mkdtemp(prefix="vivid-bench-study-")
    env = server_env(args.database_url, var_dir)
    migrate(env)
    for name in ("DATABASE_URL", "DJANGO_ENV", "DEBUG", "DJANGO_SETTINGS_MODULE", "VIVID_VAR_DIR", "LOG_LEVEL"):
        os.environ[name] = env[name]
    os.environ.pop("VIVID_TEST_SQLITE", None)
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test import Client

    from core.roles import RESEARCHER

    studies = {size: study_of(size, workers=2) for size in args.sizes}
    # The rate is measured on a study of its own (it grows by a few hundred participants a run).
    rate_study = study_of(0, workers=1, slug="bench-scale-rate")
    with connection.cursor() as cursor:
        # What autovacuum does after bulk writes (some servers run without it): plans from real row counts.
        cursor.execute("ANALYZE")

    user, _ = User.objects.get_or_create(username="bench-researcher")
    user.groups.add(Group.objects.get(name=RESEARCHER))
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    # Imports, templates, matplotlib's fonts: loaded once by any process, not part of a visit.
    for url in urls(studies[args.sizes[0]].slug).values():
        client.get(url)
    results = {size: measure(client, study, repeat=args.repeat) for size, study in studies.items()}
    print(f"\n{os.cpu_count()} cores; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print_table(args.sizes, results)
    print()
    generate_rate(rate_study, args.rate_participants)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
