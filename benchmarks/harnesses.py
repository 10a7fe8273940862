"""The evaluation harnesses the benchmarks run beside the app, each in a virtualenv of its own under
var/, installed on first use (pinned: a benchmark's figures and the exported tasks are tested
against these versions). The versions are the ones evaluation/selectors/harness.py names in the
README of an exported task folder."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LMEVAL_VERSION = "0.4.13"
LMEVAL_VENV = ROOT / "var" / "lmeval-venv"
INSPECT_VERSION = "0.3.285"
# Inspect's openai provider needs the client; pinned with it.
INSPECT_OPENAI_VERSION = "3.63.0"
INSPECT_VENV = ROOT / "var" / "inspect-venv"


def venv_install(venv: Path, requirements: list[str], *, marker: str) -> Path:
    """The venv's bin folder, after installing ``requirements`` into it unless ``marker`` says it was done
    with this interpreter: a peer measured beside the app runs on the app's Python (`make install`
    may have moved the app to another one), else the ratio measures the interpreters."""
    done = venv / marker
    interpreter = f"{sys.base_prefix} {sys.version.split()[0]}"
    if not done.exists() or done.read_text() != interpreter:
        print(f"installing {' '.join(requirements)} into {venv.relative_to(ROOT)} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *requirements], check=True)
        done.write_text(interpreter)
    return venv / "bin"


def lmeval_install() -> Path:
    return (
        venv_install(LMEVAL_VENV, [f"lm_eval[api]=={LMEVAL_VERSION}"], marker=f".lm_eval-{LMEVAL_VERSION}") / "lm_eval"
    )


def inspect_install() -> Path:
    requirements = [f"inspect-ai=={INSPECT_VERSION}", f"openai=={INSPECT_OPENAI_VERSION}"]
    return venv_install(INSPECT_VENV, requirements, marker=f".inspect_ai-{INSPECT_VERSION}") / "inspect"
