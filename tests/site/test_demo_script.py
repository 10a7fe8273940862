"""Issue 12, item 8: what `make demo` prints, and when.

The URL, the accounts and the two participant links come last, once the server
answers and the worker has printed its banner, and the links are the README's.
"""

import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.study.test_demo import _fake_prepare

ROOT = Path(__file__).resolve().parents[2]
README_LINKS = re.findall(r"^http://127\.0\.0\.1:8000/s/demo-artworks/\?\S+$", (ROOT / "README.md").read_text(), re.M)


@pytest.fixture
def _var(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.VAR_DIR = tmp_path / "var"


def _run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_it_prints_the_url_the_accounts_and_then_the_readme_links_last(monkeypatch, _var):
    _fake_prepare(monkeypatch)
    seeding = _run("seed_demo", "--no-summary") + _run("seed_demo_study", "--no-links")
    assert "open http" not in seeding and "Entry link" not in seeding and "Password" not in seeding

    lines = [line for line in _run("demo_summary").splitlines() if line.strip()]
    text = "\n".join(lines)
    opening = next(i for i, line in enumerate(lines) if "open http://127.0.0.1:8000/" in line)
    table = next(i for i, line in enumerate(lines) if line.split() == ["Username", "Role", "Password"])
    assert opening < table
    for username in ("annotator_a", "annotator_b", "adjudicator", "researcher", "admin"):
        assert re.search(rf"^  {username} .*vivid-demo$", text, re.M), username
    assert len(README_LINKS) == 2
    assert [line.split(": ", 1)[1] for line in lines[-2:]] == README_LINKS
    assert lines[-2].startswith("Entry link, american participant: ")
    assert lines[-1].startswith("Entry link, chinese participant: ")


@pytest.mark.django_db
def test_it_says_so_when_the_demo_study_is_missing(_var):
    lines = _run("demo_summary", "--base-url", "http://localhost:9000/").splitlines()
    assert "open http://localhost:9000/" in "\n".join(lines)
    assert "demo study 'demo-artworks' is missing" in lines[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STUB_PYTHON = """#!/usr/bin/env bash
# Stands in for .venv/bin/python: manage.py commands are echoed, the server starts late.
if [ "$1" = scripts/service_up.py ]; then exec {python} "$@"; fi
case "$2" in
  runserver)
    sleep 1
    echo "Starting development server at http://$3/"
    exec {python} -m http.server --bind 127.0.0.1 "${{3##*:}}" >/dev/null 2>&1 ;;
  demo_summary) echo "SUMMARY $4" ;;
  *) echo "ran $2" ;;
esac
"""
STUB_CELERY = """#!/usr/bin/env bash
sleep 1.5
echo " -------------- [queues]"
exec sleep 60
"""


def test_it_prints_the_summary_only_once_the_server_and_the_worker_are_up(tmp_path):
    """scripts/demo.sh itself, with stand-ins for Django and Celery that start slowly."""
    if not shutil.which("bash"):
        pytest.skip("bash is missing")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "var").mkdir()
    for name in ("demo.sh", "service_up.py"):
        shutil.copy(ROOT / "scripts" / name, tmp_path / "scripts" / name)
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text(STUB_PYTHON.format(python=sys.executable))
    (bin_dir / "celery").write_text(STUB_CELERY)
    for stub in bin_dir.iterdir():
        stub.chmod(0o755)
    port = _free_port()

    process = subprocess.Popen(
        ["bash", str(tmp_path / "scripts" / "demo.sh")],
        env={**os.environ, "VIVID_DEMO_PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen = []
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line.strip())
            if line.startswith("SUMMARY"):
                break
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    assert seen[:4] == ["ran migrate", "ran seed_demo", "ran seed_demo_study", "ran seed_demo_artworks"]
    assert seen[-1] == f"SUMMARY http://127.0.0.1:{port}/"
    assert f"Starting development server at http://127.0.0.1:{port}/" in seen
    assert "-------------- [queues]" in seen
