"""Personas shared by every test: annotator A, annotator B, adjudicator, researcher, outsider."""

import gc
import os
import subprocess
import sys
import tempfile
import zlib
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER
from tests import database_reset
from vivid_site.celery import app as celery_app

database_reset.install()

PASSWORD = "correct-horse-battery-staple"


def require_services() -> bool:
    return os.environ.get("REQUIRE_SERVICES", "") in {"1", "true", "yes"}


def skip_or_fail(reason: str):
    """A missing service skips on a laptop and fails in CI (REQUIRE_SERVICES=1)."""
    if require_services():
        pytest.fail(f"REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


# The two passes of `make test` run side by side against one Redis: a test that flushes its
# database, or a worker whose short visibility timeout hands back every unacknowledged message of
# its database, must not reach the other pass's. (A cache test's flush once emptied the broker
# database under the other pass's worker-kill test, whose fresh worker then waited for a task.)
_REDIS_DATABASES = {"broker": (15, 10), "cache": (14, 9), "killed worker's broker": (8, 7)}


def redis_test_url(role: str) -> str:
    """This pass's Redis database for one role; ``TEST_REDIS_URL`` names another server."""
    sqlite_db, postgres_db = _REDIS_DATABASES[role]
    on_postgres = os.environ.get("DATABASE_URL", "").startswith("postgres")
    server = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
    if server.rsplit("/", 1)[-1].isdigit():
        server = server.rsplit("/", 1)[0]
    return f"{server}/{postgres_db if on_postgres else sqlite_db}"


# pytest-django refuses the database to a test that asks for none of these, so a test without
# them gives the same answer on every engine.
DATABASE_FIXTURES = frozenset(
    {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}
)


def touches_database(item) -> bool:
    if item.get_closest_marker("django_db"):
        return True
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & DATABASE_FIXTURES:
        return True
    # A module fixture of ours that unblocks the database itself (the permission matrix's world);
    # pytest-django's own autouse fixtures ask for the blocker in every test.
    info = getattr(item, "_fixtureinfo", None)
    for definitions in info.name2fixturedefs.values() if info else ():
        for definition in definitions:
            if "django_db_blocker" in definition.argnames and not definition.func.__module__.startswith(
                "pytest_django"
            ):
                return True
    return False


def pytest_collection_finish(session):
    # A pass's heap is large and mostly lives to its end (Django, the test modules, matplotlib, the
    # tokenizers and models tests load), and each full collection walks all of it: 12-14 s of GC in
    # 130 s of tests (annotation, study results, token counts). What is alive after collection is
    # set aside (gc.freeze) and full collections run a tenth as often: 6.5 s. Young objects are
    # collected as before, so a test's garbage cycles do not pile up.
    gc.collect()
    gc.freeze()
    young, middle, _full = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


# Before pytest's own -m filter reads the markers added here.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # A transactional test ends by emptying every table; without serialized_rollback the roles,
    # taxonomy and prompts the data migrations wrote are gone for every test after it.
    unsafe = []
    for item in items:
        # What the PostgreSQL pass of `make test` leaves to the SQLite pass: the pages in Chromium
        # and the built-in model on the CPU test the app, not the database under it.
        if item.nodeid.startswith("tests/browser/"):
            item.add_marker(pytest.mark.browser)
        if "smollm2" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.model)
        if not touches_database(item):
            item.add_marker(pytest.mark.once)
            # Half of these modules (by a stable hash of the path, so a module's fixtures are built in one
            # pass only) run in the SQLite pass: the PostgreSQL pass, which has the permission matrix,
            # ended about 50 s after the SQLite one with all of them. Browser tests have their own place.
            module = item.nodeid.split("::")[0]
            if not module.startswith("tests/browser/") and zlib.crc32(module.encode()) % 2:
                item.add_marker(pytest.mark.sqlite_pass)
        marker = item.get_closest_marker("django_db")
        if marker and marker.kwargs.get("transaction") and not marker.kwargs.get("serialized_rollback"):
            unsafe.append(item.nodeid)
    if unsafe:
        raise pytest.UsageError("transactional tests need serialized_rollback=True as well: " + ", ".join(unsafe[:5]))


@pytest.fixture(autouse=True)
def _default_language():
    # A request in Vietnamese leaves the language active in this thread; the next test's
    # messages would come out translated.
    from django.utils import translation

    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fresh_cache():
    # Rolled-back tests reuse primary keys; a cached result must not leak between them.
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _taxonomy_rows_kept(monkeypatch):
    # The review pages re-read the taxonomy once their copy is 30 s old: on a slow machine that
    # happened in the middle of a test that counts queries, and it counted 2 more (CI, stop 43).
    # The test of the expiry itself sets its own lifetime.
    from annotation.selectors import corpus

    monkeypatch.setattr(corpus, "TAXONOMY_ROWS_SECONDS", float("inf"))


def make_user(username: str, *roles: str, **extra) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD, email=f"{username}@example.org", **extra)
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def annotator_a(db):
    return make_user("annotator_a", ANNOTATOR)


@pytest.fixture
def annotator_b(db):
    return make_user("annotator_b", ANNOTATOR)


@pytest.fixture
def adjudicator(db):
    return make_user("adjudicator", ADJUDICATOR)


@pytest.fixture
def researcher(db):
    return make_user("researcher", RESEARCHER)


@pytest.fixture
def outsider(db):
    """Signed in, but holds no role."""
    return make_user("outsider")


def _client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def researcher_client(researcher):
    return _client_for(researcher)


@pytest.fixture
def annotator_client(annotator_a):
    return _client_for(annotator_a)


@pytest.fixture
def adjudicator_client(adjudicator):
    return _client_for(adjudicator)


@pytest.fixture
def outsider_client(outsider):
    return _client_for(outsider)


@pytest.fixture
def anonymous_client():
    return Client()


@contextmanager
def celery_overrides(**values):
    """Pin Celery configuration keys for a block and put back exactly what was there.

    Celery reads Django settings only for keys nobody set on the app itself, so
    a restore must remove a pin that did not exist before rather than write the
    old value back. Connection pools are dropped on both sides because they are
    built from broker_url on first use.
    """
    # Reading a key finalises the lazy configuration; changes made before
    # that point would be lost when Celery later builds it from Django settings.
    celery_app.conf.broker_url  # noqa: B018
    changes = celery_app.conf.changes
    missing = object()
    saved = {key: changes.get(key, missing) for key in values}
    changes.update(values)
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is missing:
                changes.pop(key, None)
            else:
                changes[key] = value
        celery_app._pool = None
        celery_app.amqp._producer_pool = None


@pytest.fixture
def eager(settings):
    """Run Celery tasks inline, as soon as the enqueuing transaction commits."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    with celery_overrides(task_always_eager=True):
        yield


ROOT = Path(__file__).resolve().parents[1]


def worker_database_url() -> str:
    """The test database as a URL that a worker process can open."""
    from django.db import connection

    conf = connection.settings_dict
    if connection.vendor == "postgresql":
        host = conf["HOST"] or "127.0.0.1"
        user = conf["USER"] or "postgres"
        return f"postgres://{user}@{host}:{conf['PORT'] or 5432}/{conf['NAME']}"
    name = str(conf["NAME"])
    if "memory" in name or not name:
        skip_or_fail("the SQLite test database is in memory; set VIVID_TEST_SQLITE so a worker can share it")
    return f"sqlite:///{name}"


def start_worker(*, broker_url: str, queue: str, env: dict | None = None) -> subprocess.Popen:
    """A real Celery worker process on the test database, consuming one queue."""
    worker_env = {
        **os.environ,
        "DJANGO_ENV": "test",
        "DATABASE_URL": worker_database_url(),
        "CELERY_BROKER_URL": broker_url,
        "CELERY_QUEUE": queue,
        **(env or {}),
    }
    worker_env.pop("VIVID_TEST_SQLITE", None)
    # A file, not a pipe: a pipe nobody reads fills up and blocks the worker.
    log = tempfile.NamedTemporaryFile(prefix=f"worker-{queue}-", suffix=".log", delete=False)  # noqa: SIM115 - the worker's lifetime
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "vivid_site",
            "worker",
            "--pool=solo",
            "--loglevel=info",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"{queue}-{os.getpid()}@localhost",
        ],
        cwd=ROOT,
        env=worker_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    process.log_path = log.name
    return process


def worker_log(process: subprocess.Popen) -> str:
    return Path(process.log_path).read_text(errors="replace")


def stop_worker(process: subprocess.Popen) -> None:
    # Killed, not asked to stop: a warm (or cold) shutdown closes the broker connection for 2-5 s,
    # and no test reads anything the shutdown writes (the log is flushed line by line).
    if process.poll() is None:
        process.kill()
    process.wait(timeout=10)
