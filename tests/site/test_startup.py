"""What every process pays to start Django (each manage.py command, a test's subprocess), and what
the long-running ones import ahead of their first request or task (core/warmup.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from celery.concurrency.prefork import TaskPool as PreforkTaskPool
from celery.concurrency.thread import TaskPool as ThreadTaskPool

ROOT = Path(__file__).resolve().parents[2]

# About a second of CPU together at every start (scipy.stats 0.5 s, scikit-learn 0.35 s, pandas
# 0.25 s, statsmodels, scipy.sparse 0.13 s, pyarrow 0.05 s): imported where a statistic is computed, a
# table read or a file written.
HEAVY = (
    "scipy.stats",
    "scipy.sparse",
    "sklearn",
    "pandas",
    "statsmodels",
    "krippendorff",
    "matplotlib",
    "torch",
    "pyarrow",
)
# What the warm-up imports (core/warmup.py), with what scipy.stats and pandas bring along.
WARMED = ("scipy.stats", "sklearn", "pandas", "statsmodels", "krippendorff", "scipy.sparse", "pyarrow")

LOADED = """
import json, sys
print(json.dumps(sorted(name for name in sys.modules if any(name == h or name.startswith(h + ".") for h in HEAVY))))
"""


def _heavy_modules_after(code: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "VIVID_TEST_SQLITE"}}
    env.update({"DJANGO_ENV": "test", "DJANGO_SETTINGS_MODULE": "vivid_site.settings", "PYTHONPATH": str(ROOT)})
    result = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{code}\n{LOADED}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _roots(modules: list[str]) -> set[str]:
    return {heavy for heavy in HEAVY if any(name == heavy or name.startswith(heavy + ".") for name in modules)}


def test_it_starts_django_its_urls_and_its_tasks_without_the_statistics_and_table_libraries():
    loaded = _heavy_modules_after(
        "import django\n"
        "django.setup()\n"
        "from django.urls import get_resolver\n"
        "get_resolver().url_patterns  # every view module\n"
        "from vivid_site.celery import app\n"
        "app.loader.import_default_modules()  # every tasks module\n"
    )
    assert loaded == [], f"imported at start: {loaded}"


def test_it_finds_no_tokenizer_for_an_endpoints_model_without_loading_torch():
    # A run's estimate looks for the model's tokenizer on this machine: a name that is no directory
    # here, or a hub id that is not in the local cache, must not cost the import of transformers.
    loaded = _heavy_modules_after(
        "import django\n"
        "django.setup()\n"
        "from llm.costs import _installed_tokenizer\n"
        "assert _installed_tokenizer('openai', 'bench', '') is None\n"
        "assert _installed_tokenizer('openai', 'Org/not-in-the-local-cache', '/srv/models/elsewhere') is None\n"
    )
    assert loaded == [], f"imported to find no tokenizer: {sorted(_roots(loaded))}"


def test_it_imports_them_in_the_web_server_before_it_forks():
    assert _roots(_heavy_modules_after("import vivid_site.wsgi")) == set(WARMED)


def _worker_init(pool: str) -> str:
    """worker_init as Celery sends it, its sender a worker whose pool is still the name it was given."""
    worker = "None" if pool == "no sender" else f"type('Worker', (), {{'pool_cls': {pool!r}}})()"
    return (
        f"from vivid_site.celery import app\nfrom celery.signals import worker_init\nworker_init.send(sender={worker})"
    )


@pytest.mark.parametrize("pool", ["prefork", "no sender"])
def test_it_imports_them_in_the_celery_worker_before_its_pool_forks(pool):
    assert _roots(_heavy_modules_after(_worker_init(pool))) == set(WARMED)


def test_it_leaves_them_to_the_first_task_in_a_worker_whose_pool_does_not_fork():
    assert _heavy_modules_after(_worker_init("solo")) == []


@pytest.mark.parametrize(
    ("pool", "forks"),
    [
        ("prefork", True),
        ("processes", True),
        ("celery.concurrency.prefork:TaskPool", True),
        (PreforkTaskPool, True),
        ("solo", False),
        ("threads", False),
        (ThreadTaskPool, False),
    ],
)
def test_it_knows_which_pools_fork(pool, forks):
    from vivid_site.celery import pool_forks

    assert pool_forks(type("Worker", (), {"pool_cls": pool})()) is forks
