import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.ratelimit import Rate, rate_parse
from vivid_site.settings import env_bool, env_int, env_list, env_rate

ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k" * 30 + "-production-secret-for-the-check-only-0123456789"


def run_manage(*args, **env_overrides):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "VIVID_TEST_SQLITE", "DJANGO_ENV"}}
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_it_fails_loudly_on_malformed_values(monkeypatch):
    monkeypatch.setenv("X_BOOL", "maybe")
    monkeypatch.setenv("X_INT", "ten")
    monkeypatch.setenv("X_SMALL", "0")
    with pytest.raises(ImproperlyConfigured, match="X_BOOL='maybe' is not a boolean"):
        env_bool("X_BOOL", False)
    with pytest.raises(ImproperlyConfigured, match="X_INT='ten' is not an integer"):
        env_int("X_INT", 1)
    with pytest.raises(ImproperlyConfigured, match="X_SMALL=0 must be at least 1"):
        env_int("X_SMALL", 1, minimum=1)


def test_it_reads_typed_values(monkeypatch):
    monkeypatch.setenv("X_BOOL", "Yes")
    monkeypatch.setenv("X_LIST", "a.example, b.example,")
    assert env_bool("X_BOOL", False) is True
    assert env_list("X_LIST", []) == ["a.example", "b.example"]
    assert env_int("X_MISSING", 7) == 7


@pytest.mark.parametrize("value", ["20", "20/min", "0/m", "-1/m", "20/d", "many"])
def test_it_refuses_a_malformed_rate(monkeypatch, value):
    monkeypatch.setenv("X_RATE", value)
    with pytest.raises(ImproperlyConfigured, match="X_RATE=.* is not a rate"):
        env_rate("X_RATE", "20/m")


def test_it_reads_a_rate_the_limiter_understands(monkeypatch):
    monkeypatch.setenv("X_RATE", " 5/S ")
    assert env_rate("X_RATE", "20/m") == "5/s" and rate_parse(env_rate("X_RATE", "20/m")) == Rate(5, 1)
    assert rate_parse(env_rate("X_MISSING_RATE", "20/m")) == Rate(20, 60)
    monkeypatch.setenv("X_RATE", "OFF")
    assert rate_parse(env_rate("X_RATE", "20/m")) is None


def test_it_refuses_to_start_in_production_without_secret_key_and_hosts(tmp_path):
    result = run_manage("check", DJANGO_ENV="production", VIVID_VAR_DIR=str(tmp_path))
    assert result.returncode != 0 and "SECRET_KEY is required" in result.stderr
    result = run_manage("check", DJANGO_ENV="production", SECRET_KEY=STRONG_KEY, VIVID_VAR_DIR=str(tmp_path))
    assert result.returncode != 0 and "ALLOWED_HOSTS is required" in result.stderr


def test_it_passes_the_deploy_check_in_production_with_no_warnings(tmp_path):
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_ENV="production",
        SECRET_KEY=STRONG_KEY,
        ALLOWED_HOSTS="vivid.example.org",
        VIVID_VAR_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_it_rejects_a_bad_database_url(tmp_path):
    result = run_manage("check", DATABASE_URL="nosuchdb://x", VIVID_VAR_DIR=str(tmp_path))
    assert result.returncode != 0 and "DATABASE_URL" in result.stderr


def test_it_uses_sqlite_in_wal_mode_by_default(tmp_path):
    result = run_manage(
        "shell",
        "-c",
        "from django.db import connection; c = connection.cursor(); c.execute('PRAGMA journal_mode'); print(c.fetchone()[0])",
        VIVID_VAR_DIR=str(tmp_path),
    )
    assert result.stdout.strip().splitlines()[-1] == "wal", result.stderr


def test_it_shares_a_file_cache_between_processes_by_default(tmp_path):
    """Two processes (gunicorn workers, a Celery worker) see one cache: what one stores the other reads."""
    written = run_manage(
        "shell", "-c", "from django.core.cache import cache; cache.set('shared', 29)", VIVID_VAR_DIR=str(tmp_path)
    )
    assert written.returncode == 0, written.stderr
    read = run_manage(
        "shell",
        "-c",
        "from django.core.cache import cache; from django.conf import settings; "
        "print(settings.CACHES['default']['BACKEND'], cache.get('shared'))",
        VIVID_VAR_DIR=str(tmp_path),
    )
    assert read.stdout.strip().splitlines()[-1] == "django.core.cache.backends.filebased.FileBasedCache 29", read.stderr


def test_it_picks_the_cache_from_cache_url(tmp_path):
    show = "from django.conf import settings; print(settings.CACHES['default']['BACKEND'])"
    redis = run_manage("shell", "-c", show, CACHE_URL="redis://127.0.0.1:6379/1", VIVID_VAR_DIR=str(tmp_path))
    assert redis.stdout.strip().splitlines()[-1] == "core.cache.RedisCache", redis.stderr
    local = run_manage("shell", "-c", show, CACHE_URL="locmem://", VIVID_VAR_DIR=str(tmp_path))
    assert local.stdout.strip().splitlines()[-1].endswith("LocMemCache"), local.stderr
    wrong = run_manage("check", CACHE_URL="memcached://127.0.0.1", VIVID_VAR_DIR=str(tmp_path))
    assert wrong.returncode != 0 and "CACHE_URL" in wrong.stderr
