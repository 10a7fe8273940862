"""The exported harness tasks score as the app does: `make interop` (not in CI).

Exports a demo frozen version (annotation/demo/vivid_demo.csv, 40 idioms, frozen with the corpus's
own labels) with `manage.py export_tasks` as lm-evaluation-harness and as Inspect tasks, runs both
harnesses on all four tasks, and the app's `manage.py run_classification` on the topic and traits
tasks, all against one loopback OpenAI-compatible endpoint that answers deterministically: a hash of
the item's prompt picks the reply, the gold answer or a wrong one, often in a form exact match
refuses (markdown, "Đáp án: 3", a refusal, a list cut off, "1, 3"). Prints the three accuracies
side by side (exit 1 unless they are equal), whether each harness sent the app's conversations,
and how long it took.

    .venv/bin/python benchmarks/interop.py    # or: make interop

lm-eval 0.4.13 and inspect-ai are installed into var/lmeval-venv and var/inspect-venv on the first
run (benchmarks/harnesses.py). The app uses PostgreSQL (BENCH_PG_URL, default
postgres://postgres@127.0.0.1:5432; database vivid_bench_interop, dropped and created anew at the
start, left for a look at the end) and runs in-process (--inline): no worker, no Redis. The harness logs stay under var/interop/ for the log
importer: lm-eval/ (results_*.json and samples_<task>_*.jsonl from --log_samples), inspect/ (.eval)
and inspect-json/ (the same logs as .json).
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.engine import app_env, database_fresh  # noqa: E402
from benchmarks.harnesses import INSPECT_VERSION, LMEVAL_VERSION, inspect_install, lmeval_install  # noqa: E402
from tests.evaluation.fake_openai import FakeOpenAI, message_text  # noqa: E402

OUT = ROOT / "var" / "interop"
PG_NAME = "vivid_bench_interop"
DATASET = "Interop demo"
VERSION = "Interop v1"
MODEL = "interop"
CONCURRENCY = 8
CLASSIFICATION = ("topic", "traits")
PY = sys.executable
MANAGE = [PY, str(ROOT / "manage.py")]


# -- the endpoint -----------------------------------------------------------------------------


def _last_user(body: dict) -> str:
    return next(message_text(m) for m in reversed(body.get("messages") or []) if m.get("role") == "user")


def _wrong(task: str, gold: str) -> str:
    if task == "topic":
        return str(int(gold) % 7 + 1)
    return "2" if gold != "2" else "1,2"


def classification_reply(task: str, gold: str, digest: bytes) -> str:
    """The gold answer or a wrong one, in a form picked by the digest; about half are right under exact match."""
    forms = [
        gold,
        gold,
        f" {gold}\n",
        f"“{gold}”",
        f"'{gold}'",
        f"**{gold}**",
        f"Đáp án: {gold}",
        _wrong(task, gold),
        "Xin lỗi, tôi không thể phân loại câu này.",
        f"{gold},",
        ", ".join(gold.split(",")),
        ",".join(reversed(gold.split(","))),
        f"- {gold}",
        f"{gold}.",
    ]
    return forms[digest[0] % len(forms)]


def endpoint_reply(golds: dict[str, tuple[str, str]]):
    """The endpoint's answer to a request: by the item's prompt (the last user turn), never by the demonstrations."""

    def reply(body: dict) -> str:
        prompt = _last_user(body)
        digest = hashlib.sha256(prompt.encode("utf-8")).digest()
        if prompt in golds:
            return classification_reply(*golds[prompt], digest)
        return f"Câu này khuyên người ta sống tử tế (giải thích số {digest[0]})."

    return reply


def conversations(server: FakeOpenAI) -> dict[str, list[dict]]:
    """What the endpoint received for each item, by its prompt: roles and texts only."""
    sent = {}
    for body in server.bodies():
        messages = [{"role": m["role"], "content": message_text(m)} for m in body.get("messages") or []]
        sent[_last_user(body)] = messages
    return sent


# -- the app ----------------------------------------------------------------------------------


def app_prepare(base_url: str) -> None:
    """The demo corpus, frozen with its own labels by two annotators who agree, and the endpoint as a model."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from annotation.models import Dataset
    from annotation.services import expression_import
    from core.roles import ANNOTATOR
    from llm.services import model_add
    from tests.conftest import make_user
    from tests.evaluation.version_factories import gold_version

    call_command("migrate", verbosity=0)
    demo = ROOT / "annotation" / "demo" / "vivid_demo.csv"
    expression_import(dataset_name=DATASET, filename=demo.name, content=demo.read_bytes())
    annotators = [make_user(f"interop_{n}", ANNOTATOR) for n in (1, 2)]
    gold_version(Dataset.objects.get(name=DATASET), annotators, name=VERSION)
    model_add(name=MODEL, provider="openai", base_url=base_url, model_id=MODEL, max_concurrency=CONCURRENCY)
    connections.close_all()


def manage(env: dict, *args: str) -> str:
    done = subprocess.run([*MANAGE, *args], env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done.stdout


def app_classify(env: dict, task: str) -> tuple[int, int]:
    out = manage(
        env, "run_classification", "--dataset", DATASET, "--model", MODEL, "--task", task, "--inline", "--wait"
    )
    run_id = out.split()[0]
    report = json.loads(manage(env, "run_report", run_id, "--format", "json"))
    done = report["run"]["n_done"]
    return round(report["accuracy"] * done), done


# -- the harnesses ----------------------------------------------------------------------------


def harness_env() -> dict:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("VIRTUAL_ENV", None)
    # Inspect's openai provider wants a key; the loopback endpoint reads none.
    env["OPENAI_API_KEY"] = "interop-no-key"
    return env


def lmeval_classify(binary: Path, tasks: Path, base_url: str) -> dict[str, tuple[int, int]]:
    out = OUT / "lm-eval"
    shutil.rmtree(out, ignore_errors=True)
    model_args = (
        f"model={MODEL},base_url={base_url}/chat/completions,num_concurrent={CONCURRENCY},"
        "max_retries=3,tokenized_requests=False,tokenizer_backend=None"
    )
    # From another working directory: the exported data must be found beside the YAMLs.
    with tempfile.TemporaryDirectory(prefix="vivid-interop-") as elsewhere:
        done = subprocess.run(
            [str(binary), "--model", "local-chat-completions", "--model_args", model_args]
            + ["--tasks", "vivid", "--include_path", str(tasks), "--apply_chat_template"]
            + ["--log_samples", "--output_path", str(out)],
            cwd=elsewhere,
            env=harness_env(),
            capture_output=True,
            text=True,
            timeout=1800,
        )
    if done.returncode:
        raise RuntimeError(f"lm-eval failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    scores = {}
    for task in CLASSIFICATION:
        (samples,) = sorted(out.rglob(f"samples_vivid_{task}_*.jsonl"))
        lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
        scores[task] = (round(sum(line["exact_match"] for line in lines)), len(lines))
    return scores


def inspect_classify(binary: Path, tasks: Path, base_url: str) -> dict[str, tuple[int, int]]:
    logs, as_json = OUT / "inspect", OUT / "inspect-json"
    for folder in (logs, as_json):
        shutil.rmtree(folder, ignore_errors=True)
    specs = [f"{tasks / 'vivid.py'}@vivid_{name}" for name in ("explanation", "explanation_fewshot", *CLASSIFICATION)]
    env = harness_env()
    with tempfile.TemporaryDirectory(prefix="vivid-interop-") as elsewhere:
        for command in (
            [str(binary), "eval", *specs, "--model", f"openai/{MODEL}", "--model-base-url", base_url]
            # Chat completions, as the app and lm-eval send: Inspect's openai provider may use the Responses API.
            + ["-M", "responses_api=false"]
            + ["--log-dir", str(logs), "--log-format", "eval", "--max-connections", str(CONCURRENCY)]
            + ["--display", "plain"],
            [str(binary), "log", "convert", str(logs), "--to", "json", "--output-dir", str(as_json)],
        ):
            done = subprocess.run(command, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=1800)
            if done.returncode:
                raise RuntimeError(f"inspect failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    scores = {}
    for path in sorted(as_json.rglob("*.json")):
        log = json.loads(path.read_text(encoding="utf-8"))
        if log["status"] != "success":
            raise RuntimeError(f"inspect: {path.name} ended {log['status']}: {(log.get('error') or {}).get('message')}")
        task = log["eval"]["task"].rpartition("/")[2].removeprefix("vivid_")
        if task in CLASSIFICATION:
            values = [sample["scores"]["vivid_exact_match"]["value"] for sample in log["samples"]]
            scores[task] = (sum(value == "C" for value in values), len(values))
    return scores


# -- main ---------------------------------------------------------------------------------------


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    started = time.perf_counter()
    lmeval, inspect = lmeval_install(), inspect_install()
    installed = time.perf_counter()
    OUT.mkdir(parents=True, exist_ok=True)
    var = OUT / "app-var"
    env = app_env(var, database_fresh(PG_NAME))
    env["DJANGO_ENV"] = "development"
    os.environ.update({k: env[k] for k in ("DJANGO_ENV", "DEBUG", "DJANGO_SETTINGS_MODULE", "VIVID_VAR_DIR")})
    os.environ["DATABASE_URL"] = env["DATABASE_URL"]
    golds: dict[str, tuple[str, str]] = {}
    phases = {}
    with FakeOpenAI(reply=endpoint_reply(golds)) as server:
        app_prepare(server.base_url)
        exported = {}
        for fmt in ("lm-eval", "inspect"):
            exported[fmt] = OUT / "tasks" / fmt
            shutil.rmtree(exported[fmt], ignore_errors=True)
            manage(env, "export_tasks", VERSION, "--format", fmt, "--out", str(exported[fmt]))
        rows = {}
        for task in CLASSIFICATION:
            lines = (exported["lm-eval"] / f"vivid_{task}.jsonl").read_text(encoding="utf-8").splitlines()
            rows[task] = [json.loads(line) for line in lines]
            golds.update({row["prompt"]: (task, row["target"]) for row in rows[task]})
        ready = time.perf_counter()

        results, sent = {}, {}
        for name, run in (
            (f"lm-eval {LMEVAL_VERSION}", lambda: lmeval_classify(lmeval, exported["lm-eval"], server.base_url)),
            (f"Inspect {INSPECT_VERSION}", lambda: inspect_classify(inspect, exported["inspect"], server.base_url)),
            ("VIVID Studio", lambda: {task: app_classify(env, task) for task in CLASSIFICATION}),
        ):
            server.reset()
            at = time.perf_counter()
            results[name] = run()
            phases[name] = time.perf_counter() - at
            sent[name] = conversations(server)

    n_items = len(rows["topic"])
    print(
        f"VIVID tasks of the frozen version '{VERSION}' ({n_items} items) against one loopback endpoint that "
        "answers by a hash of the item's prompt"
    )
    names = list(results)
    print(f"  {'task':<8}" + "".join(f"{name:>22}" for name in names))
    equal = True
    for task in CLASSIFICATION:
        cells = [results[name][task] for name in names]
        equal &= len({c / n for c, n in cells}) == 1
        print(f"  {task:<8}" + "".join(f"{f'{c / n:.4f} ({c}/{n})':>22}" for c, n in cells))
    app = sent["VIVID Studio"]
    for name in names[:2]:
        same = sum(sent[name].get(prompt) == messages for prompt, messages in app.items())
        empty = sum(
            any(m["role"] == "assistant" and not m["content"] for m in messages)
            for prompt, messages in app.items()
            if sent[name].get(prompt) != messages
        )
        print(
            f"  {name}: the app's conversation for {same}/{len(app)} classification items"
            + (f" ({empty} differ by a demonstration whose answer is empty, sent without its turn)" if empty else "")
        )
    print(
        "  took "
        + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items())
        + f"; set-up {ready - installed:.1f} s, installs {installed - started:.1f} s; "
        f"in all {time.perf_counter() - started:.1f} s"
    )
    print(
        f"  logs: {(OUT / 'lm-eval').relative_to(ROOT)}, {(OUT / 'inspect').relative_to(ROOT)} (.eval), "
        f"{(OUT / 'inspect-json').relative_to(ROOT)} (.json)"
    )
    print("  equal: yes" if equal else "  equal: NO: the harnesses and the app score differently")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
