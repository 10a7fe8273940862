"""Inspect tasks of the VIVID benchmark (exported by VIVID Studio's export_tasks).

    inspect eval vivid.py@vivid_topic --model openai/MODEL --model-base-url URL

The data is the JSONL beside this file; each classification sample is the whole conversation
VIVID Studio sends (three demonstrations as user and assistant turns, then the item), scored by
VIVID's exact match from ``vivid_answers.py`` (a verbatim copy of the app's rule).
"""

import json
import runpy
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

HERE = Path(__file__).resolve().parent
SETTINGS = json.loads((HERE / "vivid_tasks.json").read_text(encoding="utf-8"))

# Run from its path: a harness imports this file by path, without the folder on sys.path.
score_classification = runpy.run_path(str(HERE / "vivid_answers.py"))["score_classification"]


def _messages(row, system):
    messages = [ChatMessageSystem(content=system)] if system else []
    for shot in row.get("shots") or []:
        messages += [ChatMessageUser(content=shot["prompt"]), ChatMessageAssistant(content=shot["target"])]
    return [*messages, ChatMessageUser(content=row["prompt"])]


def _dataset(name):
    settings = SETTINGS[name]
    samples = []
    with open(HERE / settings["data"], encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            samples.append(
                Sample(
                    id=row["id"],
                    input=_messages(row, settings["system"]),
                    target=row["target"],
                    metadata={"vivid_version": row["vivid_version"], "vivid_task": row["vivid_task"]},
                )
            )
    return MemoryDataset(samples, name=name)


@scorer(metrics=[accuracy(), stderr()])
def vivid_exact_match():
    async def score(state: TaskState, target: Target) -> Score:
        prediction, correct = score_classification(state.metadata["vivid_task"], state.output.completion, target.text)
        return Score(value=CORRECT if correct else INCORRECT, answer=prediction)

    return score


def _task(name):
    settings = SETTINGS[name]
    return Task(
        dataset=_dataset(name),
        solver=generate(),
        scorer=vivid_exact_match() if settings["scored"] else None,
        config=GenerateConfig(**settings["generate"]),
        name=name,
    )


@task
def vivid_explanation():
    return _task("vivid_explanation")


@task
def vivid_explanation_fewshot():
    return _task("vivid_explanation_fewshot")


@task
def vivid_topic():
    return _task("vivid_topic")


@task
def vivid_traits():
    return _task("vivid_traits")
