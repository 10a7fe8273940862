"""A frozen version as lm-evaluation-harness and Inspect tasks (``export_tasks``, the version's download).

The folder is self-contained: the data as JSONL (one file per task, rows in the shared contract
of the task exporter and the log importer: ``id`` as ``export_version --format csv`` prints it,
``vivid_version``, ``vivid_task``, and the task's fields), the prompts rendered exactly as the
app renders them (the templates a run would use, ``prompt_in_use``), the three demonstrations
the app would draw for each classification item (``select_shots`` with the runs' seed), the
runs' generation parameters, and the exact-match rule copied verbatim from
``evaluation/answers.py``. The harness-side hooks are the files in ``evaluation/harness/``.
"""

import io
import json
import zipfile
from pathlib import Path

from annotation.models import DatasetVersion
from annotation.selectors import version_items

from ..models import PromptKind
from ..prompts import CLASSIFICATION_TASKS, Shot, render, select_shots, topic_answer, traits_answer
from .prompts import prompt_in_use
from .results import taxonomy_by_code

LM_EVAL = "lm-eval"
INSPECT = "inspect"
HARNESS_FORMATS = (LM_EVAL, INSPECT)
LM_EVAL_VERSION = "0.4.13"
INSPECT_VERSION = "0.3.285"
GROUP = "vivid"
# Task name (the contract's vivid_task), prompt kind and name, demonstrations per item.
TASKS = {
    "explanation": (PromptKind.GENERATION, "zero-shot", 0),
    "explanation_fewshot": (PromptKind.GENERATION, "few-shot", 0),
    "topic": (PromptKind.CLASSIFICATION, "topic", 3),
    "traits": (PromptKind.CLASSIFICATION, "traits", 3),
}
HARNESS_DIR = Path(__file__).resolve().parents[1] / "harness"
ANSWERS_FILE = Path(__file__).resolve().parents[1] / "answers.py"


class HarnessExportError(ValueError):
    pass


def _defaults(kind: str) -> dict:
    # Imported here: the services import the selectors.
    from ..services.runs import CLASSIFICATION_DEFAULTS, GENERATION_DEFAULTS

    return dict(CLASSIFICATION_DEFAULTS if kind == PromptKind.CLASSIFICATION else GENERATION_DEFAULTS)


def _split_template(name: str, messages: list[dict]) -> tuple[str, list[dict]]:
    """(system text, the one user turn): what both harnesses can send as the app does."""
    split = 0
    while split < len(messages) and messages[split].get("role") == "system":
        split += 1
    turn = messages[split:]
    if len(turn) != 1 or turn[0].get("role") != "user" or not isinstance(turn[0].get("content"), str):
        raise HarnessExportError(
            f"the prompt '{name}' is not one user message after its system messages: a harness task cannot send it"
        )
    return "\n\n".join(m["content"] for m in messages[:split]), turn


def _prompt(turn: list[dict], text: str) -> str:
    return render(turn, phrase=text, expression=text, idiom=text)[0]["content"]


def _golds(items: list, task: str, taxonomy: tuple[dict, dict]) -> list[str]:
    traits, themes = taxonomy
    golds = []
    for item in items:
        if task == "topic":
            if item.theme not in themes:
                raise HarnessExportError(f"item {item.external_id}: theme '{item.theme}' is not in the taxonomy")
            golds.append(topic_answer(themes[item.theme].number))
        else:
            unknown = [code for code in item.traits if code not in traits]
            if unknown:
                raise HarnessExportError(f"item {item.external_id}: trait '{unknown[0]}' is not in the taxonomy")
            golds.append(traits_answer(traits[code].number for code in item.traits))
    return golds


def _checked_items(version: DatasetVersion) -> list:
    items = list(version_items(version=version))
    if not items:
        raise HarnessExportError(f"version '{version.name}' has no items")
    seen = {}
    for number, item in enumerate(items, start=1):
        if not item.external_id:
            raise HarnessExportError(
                f"item {number} of version '{version.name}' ('{item.text}') has no id: harness logs are matched "
                "back to the version by id, so the corpus needs an id column"
            )
        if item.external_id in seen:
            raise HarnessExportError(
                f"items {seen[item.external_id]} and {number} of version '{version.name}' share the id "
                f"'{item.external_id}'"
            )
        seen[item.external_id] = number
    return items


def harness_rows(*, version: DatasetVersion) -> dict[str, dict]:
    """Per task: its rows, system text and generation parameters."""
    items = _checked_items(version)
    taxonomy = taxonomy_by_code()
    tasks = {}
    for task, (kind, name, shots) in TASKS.items():
        template = prompt_in_use(kind=kind, name=name)
        if template is None:
            raise HarnessExportError(f"no {kind} prompt named '{name}'")
        system, turn = _split_template(name, template.messages)
        params = _defaults(kind)
        base = [{"id": item.external_id, "vivid_version": version.name, "vivid_task": task} for item in items]
        if task in CLASSIFICATION_TASKS:
            golds = _golds(items, task, taxonomy)
            # The same pool, keys and seed as a classification run (execution._classification_pool):
            # a run over this version's dataset with these labels sends the same conversations.
            pool = [
                Shot(item.expression_id or f"item-{item.pk}", item.text, gold)
                for item, gold in zip(items, golds, strict=True)
            ]
            rows = []
            for row, item, gold in zip(base, items, golds, strict=True):
                drawn = select_shots(
                    pool, item.expression_id or f"item-{item.pk}", seed=params["seed"], k=shots, item_text=item.text
                )
                label = {"theme": item.theme} if task == "topic" else {"traits": list(item.traits)}
                rows.append(
                    {
                        **row,
                        "expression": item.text,
                        **label,
                        "prompt": _prompt(turn, item.text),
                        "target": gold,
                        "shots": [
                            {"expression": text, "prompt": _prompt(turn, text), "target": answer}
                            for text, answer in drawn
                        ],
                    }
                )
        else:
            rows = [
                {
                    **row,
                    "expression": item.text,
                    "explanation": item.explanation,
                    "prompt": _prompt(turn, item.text),
                    "target": item.explanation,
                }
                for row, item in zip(base, items, strict=True)
            ]
        tasks[f"{GROUP}_{task}"] = {
            "task": task,
            "rows": rows,
            "system": system,
            "shots": shots,
            "params": params,
            "prompt": {"name": template.name, "hash": template.content_hash, "reference": template.reference},
        }
    return tasks


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _yaml_str(value: str) -> str:
    # A JSON string is a YAML double-quoted scalar: every character survives, quotes and newlines too.
    return json.dumps(value, ensure_ascii=False)


def _lmeval_yaml(name: str, spec: dict, version: DatasetVersion) -> str:
    params = spec["params"]
    classification = spec["task"] in CLASSIFICATION_TASKS
    lines = [
        f"# VIVID {spec['task']} on the frozen version {_yaml_str(version.name)}: prompt '{spec['prompt']['name']}' "
        f"({spec['prompt']['reference'] or 'custom'}), sha256 {spec['prompt']['hash']}.",
        f"task: {name}",
        "dataset_path: json",
        "dataset_kwargs:",
        "  data_files:",
        f"    test: {name}.jsonl",
        "# datasets reads a relative data_files from the working directory: this loads it from beside the YAML.",
        "custom_dataset: !function utils.load_vivid",
        "test_split: test",
        "output_type: generate_until",
        "doc_to_text: prompt",
        "doc_to_target: target",
        'target_delimiter: ""',
        'fewshot_delimiter: ""',
    ]
    if spec["system"]:
        lines.append(f"description: {_yaml_str(spec['system'])}")
    if spec["shots"]:
        lines += [
            "fewshot_split: test",
            f"num_fewshot: {spec['shots']}",
            "fewshot_config:",
            "  sampler: !function utils.VividShots",
        ]
    else:
        lines.append("num_fewshot: 0")
    lines += [
        "generation_kwargs:",
        "  until: []",
        f"  max_gen_toks: {params['max_tokens']}",
        f"  temperature: {float(params['temperature'])}",
        f"  do_sample: {'true' if params['temperature'] > 0 else 'false'}",
        f"  seed: {params['seed']}",
    ]
    if classification:
        lines += [
            "process_results: !function utils.process_results",
            "metric_list:",
            "  - metric: exact_match",
            "    aggregation: mean",
            "    higher_is_better: true",
        ]
    else:
        lines += [
            "# Explanations are judged in VIVID Studio (import the samples log with import_run, then run_judge).",
            "metric_list:",
            "  - metric: bypass",
            "    aggregation: bypass",
            "    higher_is_better: true",
        ]
    lines += ["metadata:", "  version: 1.0", f"  vivid_version: {_yaml_str(version.name)}"]
    return "\n".join(lines) + "\n"


def _readme(fmt: str, version: DatasetVersion, tasks: dict) -> str:
    counts = ", ".join(f"{name} ({len(spec['rows'])} rows)" for name, spec in tasks.items())
    if fmt == LM_EVAL:
        run = (
            f"Tested with lm-eval {LM_EVAL_VERSION}. From any working directory:\n\n"
            "    lm_eval --include_path DIR --tasks vivid --model local-chat-completions \\\n"
            "        --model_args model=NAME,base_url=URL/v1/chat/completions,tokenized_requests=False \\\n"
            "        --apply_chat_template --log_samples --output_path OUT\n\n"
            "`--apply_chat_template` is needed: the classification tasks send their three demonstrations as\n"
            "user and assistant turns, as VIVID Studio does.\n"
        )
    else:
        run = (
            f"Tested with inspect-ai {INSPECT_VERSION}:\n\n"
            "    inspect eval DIR/vivid.py@vivid_topic --model openai/NAME --model-base-url URL/v1\n\n"
            "Add `-M responses_api=false` for an endpoint with chat completions only: Inspect sends some\n"
            "model names (o-series, gpt-5) to the Responses API.\n"
        )
    return (
        f"# VIVID tasks: version {version.name}\n\n"
        f"Exported by VIVID Studio from the frozen version `{version.name}`: {counts}.\n"
        "Prompts, demonstrations, generation parameters and the exact-match rule are the app's; the rule is\n"
        "`vivid_answers.py`, a verbatim copy of the app's `evaluation/answers.py`.\n\n" + run
    )


def harness_files(*, version: DatasetVersion, fmt: str) -> dict[str, str]:
    """The exported folder: relative file name -> text."""
    if fmt not in HARNESS_FORMATS:
        raise HarnessExportError(f"format must be one of {', '.join(HARNESS_FORMATS)}, not '{fmt}'")
    tasks = harness_rows(version=version)
    files = {f"{name}.jsonl": _jsonl(spec["rows"]) for name, spec in tasks.items()}
    files["vivid_answers.py"] = ANSWERS_FILE.read_text(encoding="utf-8")
    files["README.md"] = _readme(fmt, version, tasks)
    if fmt == LM_EVAL:
        files["utils.py"] = (HARNESS_DIR / "utils.py").read_text(encoding="utf-8")
        for name, spec in tasks.items():
            files[f"{name}.yaml"] = _lmeval_yaml(name, spec, version)
        files[f"{GROUP}.yaml"] = (
            f"group: {GROUP}\ntask:\n" + "".join(f"  - {name}\n" for name in tasks) + "metadata:\n  version: 1.0\n"
        )
    else:
        files["vivid.py"] = (HARNESS_DIR / "vivid.py").read_text(encoding="utf-8")
        settings = {
            name: {
                "data": f"{name}.jsonl",
                "system": spec["system"],
                "scored": spec["task"] in CLASSIFICATION_TASKS,
                "generate": spec["params"],
            }
            for name, spec in tasks.items()
        }
        files["vivid_tasks.json"] = json.dumps(settings, ensure_ascii=False, indent=2) + "\n"
    return files


def harness_zip(*, version: DatasetVersion, fmt: str) -> bytes:
    """The same folder as a zip, under one top folder named after the version and the format."""
    files = harness_files(version=version, fmt=fmt)
    folder = f"vivid-{version.pk}-{fmt}"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            archive.writestr(f"{folder}/{name}", files[name])
    return buffer.getvalue()
