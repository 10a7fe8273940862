"""Issue 12, item 8 and issue 23, item 1: what `make demo` prints, and when, and how it stops.

The URL, the accounts and the two participant links come last, once the server
answers and the worker has printed its banner (`demo_summary` prints the README's links, `make demo`
fresh ones). A taken port stops the script at once with how to choose another; the server failing
to start, or Ctrl-C, stops the worker with it.
"""

import contextlib
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
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import call_command
from django.test import Client

from study.models import Participant, ParticipantStatus
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
def test_it_prints_participants_who_have_not_entered_yet_with_new_participants(monkeypatch, _var):
    """`make demo` asks for these: a second run must not print links whose participants finished."""
    _fake_prepare(monkeypatch)
    _run("seed_demo", "--no-summary")
    _run("seed_demo_study", "--no-links")
    first = _run("demo_summary", "--new-participants").splitlines()[-2:]
    second = _run("demo_summary", "--new-participants").splitlines()[-2:]
    links = [line.split(": ", 1)[1] for line in first + second]
    assert len(set(links)) == 4 and not set(links) & set(README_LINKS)
    assert first[0].startswith("Entry link, american participant: ")
    assert second[1].startswith("Entry link, chinese participant: ")
    for link in links:
        query = parse_qs(urlsplit(link).query)
        assert all(re.fullmatch(r"[0-9a-f]{24}", query[key][0]) for key in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
    client = Client()
    response = client.get(links[0].removeprefix("http://127.0.0.1:8000"))
    assert response.status_code == 302
    pid = parse_qs(urlsplit(links[0]).query)["PROLIFIC_PID"][0]
    assert Participant.objects.get(prolific_pid=pid).status == ParticipantStatus.ENTERED


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
# Stands in for .venv/bin/python: manage.py commands are echoed, the server starts late
# (or, with STUB_SERVER_FAILS, says its port is taken and stops, as runserver does).
if [ "$1" = scripts/service_up.py ]; then exec {python} "$@"; fi
case "$2" in
  runserver)
    echo $$ > var/server.pid
    sleep 0.4
    if [ -n "$STUB_SERVER_FAILS" ]; then echo "Error: That port is already in use."; exit 1; fi
    echo "Starting development server at http://$3/"
    exec {python} -m http.server --bind 127.0.0.1 "${{3##*:}}" >/dev/null 2>&1 ;;
  demo_summary) echo "SUMMARY $4 $5" ;;
  *) echo "ran $2" ;;
esac
"""
STUB_CELERY = """#!/usr/bin/env bash
echo $$ > var/worker.pid
sleep 0.7
echo " -------------- [queues]"
exec sleep 60
"""


@pytest.fixture
def demo(tmp_path):
    """scripts/demo.sh in a copy of the repository whose Django and Celery are stand-ins that start slowly."""
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
    yield tmp_path
    # Whatever the script left running (nothing, when it works) goes with the test.
    for pid in _stub_pids(tmp_path):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _stub_pids(root: Path) -> list[int]:
    return [int(f.read_text()) for f in (root / "var" / "worker.pid", root / "var" / "server.pid") if f.exists()]


def _running(pid: int) -> bool:
    """Alive and not a zombie (an exited child nobody has reaped yet has stopped all the same)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _start(root: Path, port: int, *, command: str | None = None, **env) -> subprocess.Popen:
    # Started as from a terminal, where Ctrl-C's SIGINT has its default action. A suite run in the
    # background (nohup, `make test &` in a script) has SIGINT ignored, which a child inherits and
    # bash can then neither trap nor reset: the script would never see the Ctrl-C. The default is
    # set in the child alone, so the test process's own handler is never swapped.
    return subprocess.Popen(
        ["bash", "-c", command or f"exec bash {root / 'scripts' / 'demo.sh'}"],
        cwd=root,
        env={**os.environ, "VIVID_DEMO_PORT": str(port), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _read_until(process: subprocess.Popen, prefix: str) -> list[str]:
    seen = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line.strip())
        if line.startswith(prefix):
            break
    return seen


def test_it_prints_the_summary_only_once_the_server_and_the_worker_are_up(demo):
    port = _free_port()
    process = _start(demo, port)
    try:
        seen = _read_until(process, "SUMMARY")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    assert seen[:4] == ["ran migrate", "ran seed_demo", "ran seed_demo_study", "ran seed_demo_artworks"]
    # Fresh participant links at every start: those of the last run may have finished.
    assert seen[-1] == f"SUMMARY http://127.0.0.1:{port}/ --new-participants"
    assert f"Starting development server at http://127.0.0.1:{port}/" in seen
    assert "-------------- [queues]" in seen


def test_it_stops_at_once_naming_the_port_and_how_to_choose_another_when_it_is_taken(demo):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = _start(demo, port)
        output, _ = process.communicate(timeout=20)
    assert process.returncode != 0
    assert f"Port {port} on 127.0.0.1 is taken" in output
    assert "make demo PORT=8800" in output and "VIVID_DEMO_PORT" in output
    # Said before the seeding, and nothing was started.
    assert "ran migrate" not in output
    assert _stub_pids(demo) == []


def test_it_refuses_a_port_that_is_not_a_number(demo):
    process = _start(demo, "80a0")
    output, _ = process.communicate(timeout=20)
    assert process.returncode == 2
    assert "VIVID_DEMO_PORT=80a0 is not a port number" in output and "make demo PORT=8800" in output


def test_it_exits_with_an_error_and_stops_the_worker_when_the_server_cannot_start(demo):
    """The port was free when checked but the server could not have it (or failed otherwise):
    the script ends, with the worker, and leaves its caller's process group alone."""
    port = _free_port()
    command = f"sleep 60 >/dev/null 2>&1 & echo $! > var/caller.pid; exec bash {demo / 'scripts' / 'demo.sh'}"
    process = _start(demo, port, command=command, STUB_SERVER_FAILS="1")
    try:
        output, _ = process.communicate(timeout=30)
        caller = int((demo / "var" / "caller.pid").read_text())
        assert _running(caller), "the script stopped a process of its caller's group"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 1
    assert "Error: That port is already in use." in output
    assert f"The server did not start on port {port}" in output and "make demo PORT=8800" in output
    assert "SUMMARY" not in output
    worker, server = _stub_pids(demo)
    assert not _running(worker) and not _running(server)


def test_it_stops_the_server_and_the_worker_on_ctrl_c(demo):
    port = _free_port()
    process = _start(demo, port)
    try:
        seen = _read_until(process, "SUMMARY")
        assert seen[-1].startswith("SUMMARY")
        # Bash drops a SIGINT that reaches it as a foreground child exits normally (it takes the
        # child to have handled it): a person's Ctrl-C comes later than the summary's last line,
        # once the script waits in its loop, and so does this one.
        time.sleep(0.5)
        # What a terminal does on Ctrl-C: SIGINT to the script's process group.
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode != 0
    pids = _stub_pids(demo)
    assert len(pids) == 2
    assert not any(_running(pid) for pid in pids)
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


def test_it_takes_the_port_from_make_demo_port():
    if not shutil.which("make"):
        pytest.skip("make is missing")
    # -n prints the recipe without running it (nor the install it depends on).
    dry = subprocess.run(["make", "-n", "demo", "PORT=8800"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    assert "VIVID_DEMO_PORT=8800 bash scripts/demo.sh" in dry.stdout.splitlines()
    env = {key: value for key, value in os.environ.items() if key != "PORT"}
    plain = subprocess.run(["make", "-n", "demo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert "bash scripts/demo.sh" in plain.stdout.splitlines()
