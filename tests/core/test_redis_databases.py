"""The two passes of `make test` run side by side: no Redis database of one is another's."""

import itertools

import pytest

from tests.conftest import redis_test_url

ROLES = ("broker", "cache", "killed worker's broker")
BENCHMARK_DATABASES = {"11", "12", "13"}  # benchmarks/engine.py, review_load.py, scale.py


def databases(monkeypatch, database_url: str) -> dict[str, str]:
    monkeypatch.setenv("DATABASE_URL", database_url)
    return {role: redis_test_url(role) for role in ROLES}


def test_it_gives_each_pass_and_role_its_own_database(monkeypatch):
    monkeypatch.delenv("TEST_REDIS_URL", raising=False)
    on_sqlite = databases(monkeypatch, "")
    on_postgres = databases(monkeypatch, "postgres://postgres@127.0.0.1:5432/test")
    urls = [*on_sqlite.values(), *on_postgres.values()]
    assert len(set(urls)) == len(urls)
    assert all(url.startswith("redis://127.0.0.1:6379/") for url in urls)
    assert not {url.rsplit("/", 1)[1] for url in urls} & BENCHMARK_DATABASES


@pytest.mark.parametrize("server", ["redis://10.0.0.5:6380", "redis://10.0.0.5:6380/", "redis://10.0.0.5:6380/3"])
def test_it_keeps_the_database_numbers_on_another_server(monkeypatch, server):
    monkeypatch.setenv("TEST_REDIS_URL", server)
    on_sqlite = databases(monkeypatch, "")
    assert on_sqlite["cache"] == "redis://10.0.0.5:6380/14"
    assert all(a != b for a, b in itertools.combinations(on_sqlite.values(), 2))
