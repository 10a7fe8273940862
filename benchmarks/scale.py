"""The researcher's pages at a research team's size: each page's first visit, small beside large.

Builds rounds through the services (``round_create``, then every answer through ``assignment_submit``,
two annotators per item, about a third of the items disagreeing) in its own PostgreSQL database
(``vivid_bench_scale``, created and migrated when missing; the rounds are kept and reused by later
runs), with Redis as the shared cache, then asks each page in-process (Django's test client, as a
researcher) two ways, each the median of ``--repeat`` visits:

* after an answer: an annotator changes one answer (through ``assignment_submit``) just before the
  visit, and no background task has run yet: what a researcher gets on the first visit after an
  answer in an open round (the statistics page and the Quality tab show the figures of a moment ago,
  saying so, while the task recomputes them; downloads, figures and the API compute them);
* cold: the cache emptied before the visit, so everything is computed: what a visit costs when
  nothing was ever computed (and what the background refresh itself costs).

For each, the time and the number of queries of every page for every size side by side, then the
ratios the goals are about: 10x the items (500 -> 5,000 items x 4 annotators) and 4x the annotators
(2,000 items x 10 -> x 40).

    .venv/bin/python benchmarks/scale.py [--sizes 500x4,5000x4,2000x10,2000x40,10000x2] [--repeat 3]
        [--database-url URL] [--redis-url URL]
    .venv/bin/python benchmarks/scale.py --quick          # 100x4 and 1000x4 only

The round page reads its drift warnings from the summary a Celery task stores; that task's own
time (``summary refresh``) is printed as a line of its own.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from serving import ensure_database, migrate, server_env  # noqa: E402

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/vivid_bench_scale"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/13"
DEFAULT_SIZES = "500x4,5000x4,2000x10,2000x40,10000x2"


def parse_sizes(spec: str) -> list[tuple[int, int]]:
    sizes = []
    for part in spec.split(","):
        items, _, annotators = part.strip().partition("x")
        sizes.append((int(items), int(annotators)))
    return sizes


def round_build(items: int, annotators: int, *, seed: int = 29):
    """A round of ``items`` items and ``annotators`` annotators with every answer in (kept between runs)."""
    from django.contrib.auth.models import Group, User

    from annotation.models import AnnotationRound, Assignment, Dataset, Theme, Trait
    from annotation.services import assignment_submit, expression_import, round_create, suggestion_set_create
    from core.roles import ANNOTATOR, RESEARCHER

    name = f"scale-{items}x{annotators}"
    existing = AnnotationRound.objects.filter(name=name).first()
    if existing is not None:
        return existing
    started = time.perf_counter()
    dataset_name = f"scale-{items}"
    dataset = Dataset.objects.filter(name=dataset_name).first()
    if dataset is None:
        lines = ["expression,explanation"] + [f"Câu số {n} về quy mô,Giải nghĩa số {n}" for n in range(items)]
        expression_import(dataset_name=dataset_name, filename="scale.csv", content=("\n".join(lines) + "\n").encode())
        dataset = Dataset.objects.get(name=dataset_name)
    rng = random.Random(seed)
    traits = list(Trait.objects.order_by("number").values_list("code", flat=True))
    themes = list(Theme.objects.order_by("number").values_list("code", flat=True))
    suggestions = dataset.suggestion_sets.filter(name="scale").first() or suggestion_set_create(
        dataset=dataset,
        name="scale",
        model_name="scale-model",
        predictions=[
            (pk, rng.sample(traits, rng.randint(0, 3)), "") for pk in dataset.expressions.values_list("pk", flat=True)
        ],
    )
    group = Group.objects.get(name=ANNOTATOR)
    users = []
    for i in range(annotators):
        user, _ = User.objects.get_or_create(username=f"scale_ann_{i:03d}")
        user.groups.add(group)
        users.append(user)
    researcher, _ = User.objects.get_or_create(username="scale_researcher")
    researcher.groups.add(Group.objects.get(name=RESEARCHER))
    round_ = round_create(
        name=name,
        dataset=dataset,
        annotators=users,
        suggestion_set=suggestions,
        hide_suggestions_fraction=0.1,
        seed=seed,
        user=researcher,
    )
    by_pk = {user.pk: user for user in users}
    assignments = list(
        Assignment.objects.filter(round=round_)
        .select_related("item__round", "item__expression")
        .order_by("position", "id")
    )
    # Each item's gold answer; a third of the answers stray from it, so items disagree and kappas are real.
    gold = {}
    for n, assignment in enumerate(assignments):
        item = assignment.item
        if item.pk not in gold:
            gold[item.pk] = (rng.choice(themes), {c: rng.choice(["accept", "reject"]) for c in item.suggested or []})
        theme, decisions = gold[item.pk]
        if item.suggestions_hidden:
            decisions = {}
        if rng.random() < 0.33:
            theme = rng.choice(themes)
        assignment_submit(
            assignment=assignment,
            user=by_pk[assignment.annotator_id],
            theme=theme,
            trait_decisions=decisions,
            seconds=rng.uniform(2, 40),
        )
        if n % 2000 == 1999:
            print(f"  {name}: {n + 1} of {len(assignments)} answers", flush=True)
    print(f"built {name}: {len(assignments)} answers through the services in {time.perf_counter() - started:.0f} s")
    return round_


def pages(round_) -> list[tuple[str, str]]:
    from django.urls import reverse

    pk = round_.pk
    return [
        ("round page", reverse("annotation:round_detail", args=[pk])),
        ("round list", reverse("annotation:round_list")),
        ("quality tab", reverse("annotation:round_quality", args=[pk])),
        ("quality API", reverse("api:round_quality", args=[pk])),
        ("drift figure", reverse("annotation:round_quality_figure", args=[pk, "drift-pairs", "svg"])),
        ("statistics page", reverse("annotation:round_stats", args=[pk])),
        ("statistics API", reverse("api:round_stats", args=[pk])),
        ("themes figure", reverse("annotation:round_stats_figure", args=[pk, "themes", "svg"])),
        ("rounds API", reverse("api:round_list")),
        ("round API", reverse("api:round_detail", args=[pk])),
        ("dataset export", reverse("annotation:dataset_export", args=[round_.dataset_id]) + "?format=csv"),
    ]


def answer_changed(round_, rng: random.Random) -> None:
    """One annotator changes one of their answers, as the services do it (the round's stamp moves on)."""
    from annotation.models import Assignment, AssignmentStatus, Theme
    from annotation.services import assignment_submit

    assignment = (
        Assignment.objects.filter(round=round_, status=AssignmentStatus.SUBMITTED)
        .select_related("item__round", "annotator")
        .order_by("?")
        .first()
    )
    themes = list(Theme.objects.values_list("code", flat=True))
    assignment_submit(
        assignment=assignment,
        user=assignment.annotator,
        theme=rng.choice(themes),
        trait_decisions=dict(assignment.trait_decisions),
        added_traits=list(assignment.added_traits),
    )


def first_visit(client, url: str, repeat: int, *, before) -> tuple[float, int, int]:
    """Median seconds of ``repeat`` visits, each after ``before()``, and the queries of one."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, queries, status = [], 0, 0
    for _ in range(repeat):
        before()
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            if getattr(response, "streaming", False):
                b"".join(response.streaming_content)
            times.append(time.perf_counter() - started)
        queries, status = len(captured), response.status_code
    return statistics.median(times), queries, status


def summary_refresh(round_, repeat: int) -> float:
    from django.core.cache import cache

    from annotation.services import round_summary_refresh

    times = []
    for _ in range(repeat):
        cache.clear()
        started = time.perf_counter()
        round_summary_refresh(round_id=round_.pk)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="items x annotators, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100x4 and 1000x4 only, one visit each")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_SCALE_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_SCALE_REDIS_URL", DEFAULT_REDIS_URL))
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeat = "100x4,1000x4", 1
    sizes = parse_sizes(args.sizes)
    if not ensure_database(args.database_url):
        return
    env = server_env(args.database_url, tempfile.mkdtemp(prefix="vivid-bench-scale-"))
    # Redis as the deployment has it: the shared cache and the broker the refreshes are queued on (no
    # worker takes them here, so every visit meets the figures as the answer left them).
    import redis

    redis.Redis.from_url(args.redis_url).flushdb()
    env.update(
        {
            "CACHE_URL": args.redis_url,
            "CELERY_BROKER_URL": args.redis_url,
            "CELERY_QUEUE": "vivid-bench-scale",
            "ALLOWED_HOSTS": "testserver",
        }
    )
    for key in (
        "DATABASE_URL",
        "DJANGO_ENV",
        "DEBUG",
        "DJANGO_SETTINGS_MODULE",
        "VIVID_VAR_DIR",
        "CACHE_URL",
        "CELERY_BROKER_URL",
        "CELERY_QUEUE",
        "ALLOWED_HOSTS",
    ):
        os.environ[key] = env[key]
    migrate(env)
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from core.roles import RESEARCHER

    rounds = {size: round_build(*size) for size in sizes}
    researcher, _ = User.objects.get_or_create(username="scale_researcher")
    researcher.groups.add(Group.objects.get(name=RESEARCHER))
    client = Client()
    client.force_login(researcher)

    from django.core.cache import cache

    rng = random.Random(7)
    after_answer: dict[tuple, dict[str, tuple]] = {}
    cold: dict[tuple, dict[str, tuple]] = {}
    for size, round_ in rounds.items():
        after_answer[size], cold[size] = {}, {}
        for name, url in pages(round_):
            client.get(url)  # a researcher has been here before: the page's latest figures exist
            after_answer[size][name] = first_visit(
                client, url, args.repeat, before=lambda r=round_: answer_changed(r, rng)
            )
            cold[size][name] = first_visit(client, url, args.repeat, before=cache.clear)
        cold[size]["summary refresh (task)"] = (summary_refresh(round_, args.repeat), 0, 200)

    print()
    print(f"first visit after an answer (no background refresh yet), median of {args.repeat}: ms / queries")
    table(after_answer, sizes)
    print()
    print(f"cold: the cache emptied before each visit (everything computed), median of {args.repeat}: ms / queries")
    table(cold, sizes)


def table(results: dict, sizes: list) -> None:
    labels = [f"{items}x{annotators}" for items, annotators in sizes]
    print(f"{'page':<24}" + "".join(f"{label:>18}" for label in labels))
    for name in results[sizes[0]]:
        cells = []
        for size in sizes:
            seconds, queries, status = results[size][name]
            cell = f"{seconds * 1000:.0f} ms / {queries}" + ("" if status == 200 else f" ({status})")
            cells.append(f"{cell:>18}")
        print(f"{name:<24}" + "".join(cells))
    for small, large, what in (((500, 4), (5000, 4), "10x the items"), ((2000, 10), (2000, 40), "4x the annotators")):
        if small in results and large in results:
            print()
            print(f"{what} ({small[0]}x{small[1]} -> {large[0]}x{large[1]}): time ratio, queries small -> large")
            for name in results[small]:
                (t_small, q_small, _), (t_large, q_large, _) = results[small][name], results[large][name]
                print(f"  {name:<24} {t_large / t_small if t_small else float('nan'):>5.1f}x   {q_small} -> {q_large}")
    slowest = max(
        ((seconds, name, size) for size, pages_ in results.items() for name, (seconds, _q, _s) in pages_.items()),
        default=None,
    )
    if slowest:
        print(f"\nslowest: {slowest[1]} at {slowest[2][0]}x{slowest[2][1]}: {slowest[0] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
