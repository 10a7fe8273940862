"""The peers a benchmark measures beside the app (Potato, lm-eval, Inspect) run on the app's Python."""

import sys

import pytest

from benchmarks import harnesses


@pytest.fixture
def commands(monkeypatch):
    ran = []
    monkeypatch.setattr(harnesses.subprocess, "run", lambda command, check: ran.append(command))
    return ran


def test_it_installs_a_peer_once_per_interpreter(commands, tmp_path, monkeypatch):
    monkeypatch.setattr(harnesses, "ROOT", tmp_path)
    venv = tmp_path / "var" / "peer-venv"
    venv.mkdir(parents=True)

    assert harnesses.venv_install(venv, ["peer==1.0"], marker=".peer-1.0") == venv / "bin"
    assert commands == [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [str(venv / "bin" / "pip"), "install", "-q", "peer==1.0"],
    ]

    commands.clear()
    harnesses.venv_install(venv, ["peer==1.0"], marker=".peer-1.0")
    assert commands == []

    # Made by another interpreter (the app's venv moved to another Python): made again.
    (venv / ".peer-1.0").write_text("/opt/another-python 3.11.0")
    harnesses.venv_install(venv, ["peer==1.0"], marker=".peer-1.0")
    assert commands[0] == [sys.executable, "-m", "venv", "--clear", str(venv)]
    assert (venv / ".peer-1.0").read_text() == f"{sys.base_prefix} {sys.version.split()[0]}"
