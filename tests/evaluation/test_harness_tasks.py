"""export_tasks and the version's task download: lm-eval and Inspect folders that score as the app does.

The harnesses themselves are not installed here (``make interop`` runs them, benchmarks/interop.py):
these tests read the folder as the harnesses would, and run its shipped rule against the app's.
"""

import ast
import asyncio
import csv
import importlib.util
import io
import json
import py_compile
import sys
import types
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Dataset
from annotation.services import version_export
from evaluation.models import RunKind
from evaluation.prompts import FIG5_ZERO_SHOT, FIG6_FEW_SHOT
from evaluation.scoring import score_classification
from evaluation.selectors import harness_files
from evaluation.services.runs.execution import run_item_messages
from tests.annotation.factories import client_for, make_annotator, make_dataset, make_researcher
from tests.evaluation.factories import make_run
from tests.evaluation.version_factories import gold_version

TASKS = ("vivid_explanation", "vivid_explanation_fewshot", "vivid_topic", "vivid_traits")
CORPUS = (
    "id,expression,explanation,kind,traits,theme\n"
    "t-01,Nước chảy đá mòn,Kiên trì thì việc khó cũng xong,proverb,,life_lessons\n"
    "t-02,Ăn cháo đá bát,Vô ơn với người đã giúp mình,idiom,pragmatic,criticism\n"
    "t-03,Thương nhau củ ấu cũng tròn,Yêu nhau thì thấy gì cũng đẹp,proverb,,love\n"
    't-04,Cấy thưa thừa thóc,Kinh nghiệm cấy lúa,proverb,"folk_knowledge,literal",work_nature\n'
    "t-05,Nhất tự vi sư,Kính trọng người dạy mình,idiom,sino_vietnamese,virtues\n"
    't-06,"Ăn ""quả"" nhớ kẻ trồng cây","Biết ơn, nhớ ơn",proverb,"pragmatic,uncommon_vocabulary",virtues\n'
    "t-07,Chị ngã em nâng,Anh em đùm bọc nhau,proverb,,social_relationships\n"
    "t-08,Ăn tái ăn tam,Ăn đi ăn lại,idiom,literal,other\n"
)

# Replies models give: exact, spaced, quoted, markdown, lists, reordered, Vietnamese prose,
# refusals, cut off at max_tokens, NFD Vietnamese, empty.
REPLIES = [
    "3",
    " 3 ",
    "3\n",
    "“3”",
    '"3"',
    "'3'",
    "`3`",
    "«3»",
    "**3**",
    "3.",
    "Đáp án: 3",
    "Chủ đề 3",
    "3 - Phê phán",
    "1,3",
    "1, 3",
    "3,1",
    "1,3,",
    "1,3,5",
    " 1,3 ",
    "“1,3”",
    "- 1\n- 3",
    "1\n3",
    "[1, 3]",
    "1;3",
    "1,3\n\nVì câu",
    "",
    " ",
    "“”",
    '""',
    "''",
    None,
    "Không có",
    "Tôi không thể trả lời câu hỏi này.",
    "I'm sorry, I can't help.",
    "Câu này thuộc đặc điểm 1 và 3 vì",
    "<think>hmm</think>3",
    "3<|endoftext|>",
    "\u200b3",
    "３",
    "Ｔ",
    "7",
    "8",
    "Cha\u0300o",
    "Chào",
    "\"'3'\"",
    "“‘1,3’”",
    "1,2,3,4,5",
    "5,4,3,2,1",
    "0",
    "-1",
    "3 ",
    "\t3\t",
]
GOLDS = ["3", "1,3", "", "1,3,5", "7", "Chào", "1,2,3,4,5"]


@pytest.fixture
def tasks_version(db):
    dataset = make_dataset(name="Harness corpus", csv=CORPUS)
    annotators = [make_annotator("harness_a"), make_annotator("harness_b")]
    return gold_version(dataset, annotators, name="Harness v1")


@pytest.fixture
def exported(tasks_version, tmp_path):
    def export(fmt: str) -> Path:
        out = tmp_path / fmt
        call_command("export_tasks", "Harness v1", "--format", fmt, "--out", str(out), stdout=io.StringIO())
        return out

    return export


class _Loader(yaml.SafeLoader):
    """lm-eval's YAML with its ``!function module.name`` tag kept as a marker."""


_Loader.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))


def _yaml(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)


def _rows(folder: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in (folder / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()]


def _module(path: Path, name: str, monkeypatch) -> types.ModuleType:
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}


def test_it_writes_a_yaml_per_task_with_the_keys_lm_eval_needs(exported):
    out = exported("lm-eval")
    group = _yaml(out / "vivid.yaml")
    assert group["group"] == "vivid" and group["task"] == list(TASKS)
    hooks = _defined(out / "utils.py")
    for task in TASKS:
        config = _yaml(out / f"{task}.yaml")
        assert config["task"] == task
        assert config["dataset_path"] == "json"
        assert config["dataset_kwargs"] == {"data_files": {"test": f"{task}.jsonl"}}
        assert (out / config["dataset_kwargs"]["data_files"]["test"]).is_file()
        assert config["test_split"] == "test" and config["output_type"] == "generate_until"
        assert config["doc_to_text"] == "prompt" and config["doc_to_target"] == "target"
        for value in (config["custom_dataset"], config.get("process_results"), config.get("fewshot_config")):
            functions = [value] if isinstance(value, tuple) else list((value or {}).values())
            for marker, target in functions:
                module, name = target.split(".")
                assert marker == "!function" and module == "utils" and name in hooks
        assert config["metric_list"][0]["aggregation"] in ("mean", "bypass")
        assert config["metadata"]["vivid_version"] == "Harness v1"
    generation = _yaml(out / "vivid_explanation.yaml")["generation_kwargs"]
    assert (generation["max_gen_toks"], generation["temperature"], generation["do_sample"]) == (150, 0.7, True)
    topic = _yaml(out / "vivid_topic.yaml")
    assert (topic["num_fewshot"], topic["fewshot_split"]) == (3, "test")
    assert topic["fewshot_config"]["sampler"] == ("!function", "utils.VividShots")
    assert topic["process_results"] == ("!function", "utils.process_results")
    assert topic["metric_list"] == [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}]
    assert (topic["generation_kwargs"]["max_gen_toks"], topic["generation_kwargs"]["temperature"]) == (10, 0.0)


def test_it_writes_rows_that_match_the_version_and_the_contract(exported, tasks_version):
    out = exported("lm-eval")
    export = list(csv.DictReader(io.StringIO(version_export(version=tasks_version, fmt="csv"))))
    by_id = {row["id"]: row for row in export}
    topic_of = {"life_lessons": "6", "criticism": "3", "love": "1", "work_nature": "4", "virtues": "2"}
    topic_of |= {"social_relationships": "5", "other": "7"}
    trait_of = {"literal": 1, "sino_vietnamese": 2, "uncommon_vocabulary": 3, "folk_knowledge": 4, "pragmatic": 5}
    for task in TASKS:
        rows = _rows(out, task)
        assert [row["id"] for row in rows] == [row["id"] for row in export]
        for row in rows:
            source = by_id[row["id"]]
            assert row["vivid_version"] == "Harness v1"
            assert row["vivid_task"] == task.removeprefix("vivid_")
            assert row["expression"] == source["expression"]
            if task == "vivid_topic":
                assert row["target"] == topic_of[source["theme"]]
            elif task == "vivid_traits":
                codes = [code for code in source["traits"].split(",") if code]
                assert row["target"] == ",".join(str(n) for n in sorted(trait_of[c] for c in codes))
            else:
                assert row["target"] == source["explanation"]
    zero, few = _rows(out, "vivid_explanation")[5], _rows(out, "vivid_explanation_fewshot")[5]
    assert zero["prompt"] == FIG5_ZERO_SHOT.format(phrase='Ăn "quả" nhớ kẻ trồng cây')
    assert few["prompt"] == FIG6_FEW_SHOT.format(phrase='Ăn "quả" nhớ kẻ trồng cây')


@pytest.mark.parametrize("task", ["topic", "traits"])
def test_it_gives_each_item_the_conversation_a_classification_run_sends(exported, tasks_version, task):
    rows = {row["expression"]: row for row in _rows(exported("inspect"), f"vivid_{task}")}
    run = make_run(Dataset.objects.get(name="Harness corpus"), kind=RunKind.CLASSIFICATION, prompt_name=task)
    items = list(run.items.select_related("expression").order_by("number"))
    for item, messages in zip(items, run_item_messages(run=run, items=items), strict=True):
        row = rows[item.expression.text]
        conversation = []
        for shot in row["shots"]:
            conversation += [
                {"role": "user", "content": shot["prompt"]},
                {"role": "assistant", "content": shot["target"]},
            ]
        assert conversation + [{"role": "user", "content": row["prompt"]}] == messages
        assert len(row["shots"]) == 3


def test_it_ships_the_apps_rule_verbatim(exported):
    for fmt in ("lm-eval", "inspect"):
        shipped = (exported(fmt) / "vivid_answers.py").read_text(encoding="utf-8")
        assert shipped == (Path(__file__).parents[2] / "evaluation" / "answers.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("task", ["topic", "traits"])
def test_it_scores_every_reply_with_the_shipped_rule_as_the_app_does(exported, monkeypatch, task):
    out = exported("lm-eval")
    # utils.py runs inside lm-eval: stand-ins for its two imports, enough to load process_results.
    samplers = types.ModuleType("lm_eval.api.samplers")
    samplers.ContextSampler = object
    for name, module in {
        "datasets": types.ModuleType("datasets"),
        "lm_eval": types.ModuleType("lm_eval"),
        "lm_eval.api": types.ModuleType("lm_eval.api"),
        "lm_eval.api.samplers": samplers,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    utils = _module(out / "utils.py", "vivid_utils_under_test", monkeypatch)
    answers = _module(exported("inspect") / "vivid_answers.py", "vivid_answers_under_test", monkeypatch)
    rows = _rows(out, f"vivid_{task}")
    agreed = 0
    for reply in REPLIES:
        for gold in [*GOLDS, *(row["target"] for row in rows)]:
            app = score_classification(task, reply, gold)
            assert answers.score_classification(task, reply, gold) == app, (reply, gold)
            doc = {"vivid_task": task, "target": gold}
            assert utils.process_results(doc, [reply]) == {"exact_match": 1.0 if app[1] else 0.0}, (reply, gold)
            agreed += app[1]
    assert agreed > 0  # some replies are right, so a rule that marks all wrong fails


def _inspect_stand_ins(monkeypatch) -> None:
    """Enough of inspect_ai's names for vivid.py to load: tasks, samples and messages as plain records."""

    def record(**fields):
        return SimpleNamespace(**fields)

    def message(role):
        return lambda content: SimpleNamespace(role=role, content=content)

    names = {
        "inspect_ai": {"Task": record, "task": lambda function: function},
        "inspect_ai.dataset": {"MemoryDataset": lambda samples, name: samples, "Sample": record},
        "inspect_ai.model": {
            "ChatMessageSystem": message("system"),
            "ChatMessageUser": message("user"),
            "ChatMessageAssistant": message("assistant"),
            "GenerateConfig": lambda **config: config,
        },
        "inspect_ai.scorer": {
            "CORRECT": "C",
            "INCORRECT": "I",
            "Score": record,
            "Target": object,
            "accuracy": lambda: None,
            "stderr": lambda: None,
            "scorer": lambda metrics: lambda function: function,
        },
        "inspect_ai.solver": {"TaskState": object, "generate": lambda: "generate"},
    }
    for name, attributes in names.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        monkeypatch.setitem(sys.modules, name, module)


@pytest.mark.parametrize("task", ["topic", "traits"])
def test_it_builds_inspect_samples_and_scores_them_as_the_app_does(exported, monkeypatch, task):
    out = exported("inspect")
    _inspect_stand_ins(monkeypatch)
    vivid = _module(out / "vivid.py", "vivid_inspect_under_test", monkeypatch)
    built = getattr(vivid, f"vivid_{task}")()
    assert built.config == {"temperature": 0.0, "max_tokens": 10, "seed": 0}
    rows = _rows(out, f"vivid_{task}")
    assert [sample.id for sample in built.dataset] == [row["id"] for row in rows]
    for sample, row in zip(built.dataset, rows, strict=True):
        assert sample.metadata == {"vivid_version": "Harness v1", "vivid_task": task}
        assert sample.target == row["target"]
        turns = [(m.role, m.content) for m in sample.input]
        shots = [turn for shot in row["shots"] for turn in (("user", shot["prompt"]), ("assistant", shot["target"]))]
        assert turns == [*shots, ("user", row["prompt"])]
    score = built.scorer
    for reply in REPLIES:
        for gold in [*GOLDS, *(row["target"] for row in rows)]:
            state = SimpleNamespace(metadata={"vivid_task": task}, output=SimpleNamespace(completion=reply))
            result = asyncio.run(score(state, SimpleNamespace(text=gold)))
            prediction, correct = score_classification(task, reply, gold)
            assert (result.value, result.answer) == ("C" if correct else "I", prediction), (reply, gold)


def test_it_writes_an_inspect_file_that_compiles_with_its_settings(exported):
    out = exported("inspect")
    for name in ("vivid.py", "vivid_answers.py"):
        py_compile.compile(str(out / name), doraise=True)
    assert {f"{task}" for task in TASKS} <= _defined(out / "vivid.py")
    settings = json.loads((out / "vivid_tasks.json").read_text(encoding="utf-8"))
    assert set(settings) == set(TASKS)
    assert settings["vivid_topic"]["generate"] == {"temperature": 0.0, "max_tokens": 10, "seed": 0}
    assert settings["vivid_explanation"]["generate"] == {"temperature": 0.7, "max_tokens": 150, "seed": 0}
    assert [settings[task]["scored"] for task in TASKS] == [False, False, True, True]
    assert all((out / settings[task]["data"]).is_file() for task in TASKS)


def test_it_refuses_an_unknown_name(db, tmp_path):
    with pytest.raises(CommandError, match="no frozen version named 'nope'"):
        call_command("export_tasks", "nope", "--format", "inspect", "--out", str(tmp_path / "x"))
    assert not (tmp_path / "x").exists()


def test_it_refuses_a_round_that_is_not_frozen(db, tmp_path):
    from tests.annotation.factories import make_round

    make_round(
        make_dataset(name="Open corpus", csv=CORPUS),
        [make_annotator("open_a"), make_annotator("open_b")],
        name="Open round",
    )
    with pytest.raises(CommandError, match="'Open round' is a round, not a frozen version: freeze it first"):
        call_command("export_tasks", "Open round", "--format", "lm-eval", "--out", str(tmp_path / "x"))


def test_it_names_the_item_without_an_id(db, tmp_path):
    dataset = make_dataset(name="No ids", csv="expression,explanation,theme\nCâu một,Nghĩa một,love\n")
    gold_version(dataset, [make_annotator("noid_a"), make_annotator("noid_b")], name="No ids v1")
    with pytest.raises(CommandError, match="item 1 of version 'No ids v1' \\('Câu một'\\) has no id"):
        call_command("export_tasks", "No ids v1", "--format", "lm-eval", "--out", str(tmp_path / "x"))


@pytest.mark.parametrize("fmt", ["lm-eval", "inspect"])
def test_it_downloads_the_same_folder_as_a_zip_for_a_researcher(tasks_version, fmt):
    response = client_for(make_researcher()).get(
        reverse("evaluation:version_tasks", args=[tasks_version.pk]) + f"?format={fmt}"
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert "attachment" in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        files = {Path(name).name: archive.read(name).decode() for name in archive.namelist()}
    assert files == harness_files(version=tasks_version, fmt=fmt)


def test_it_refuses_the_download_to_an_annotator(tasks_version):
    url = reverse("evaluation:version_tasks", args=[tasks_version.pk]) + "?format=lm-eval"
    assert client_for(make_annotator("harness_c")).get(url).status_code == 403


def test_it_answers_400_for_an_unknown_format(tasks_version):
    url = reverse("evaluation:version_tasks", args=[tasks_version.pk]) + "?format=helm"
    response = client_for(make_researcher()).get(url)
    assert response.status_code == 400 and "lm-eval" in response.content.decode()


def test_it_answers_400_naming_the_item_when_a_version_cannot_be_exported(db):
    dataset = make_dataset(name="No ids either", csv="expression,explanation,theme\nCâu hai,Nghĩa hai,love\n")
    version = gold_version(dataset, [make_annotator("noid_c"), make_annotator("noid_d")], name="No ids v2")
    url = reverse("evaluation:version_tasks", args=[version.pk]) + "?format=inspect"
    response = client_for(make_researcher()).get(url)
    assert response.status_code == 400 and "('Câu hai') has no id" in response.content.decode()


def test_it_names_the_harness_versions_make_interop_installs():
    from benchmarks.harnesses import INSPECT_VERSION, LMEVAL_VERSION
    from evaluation.selectors import harness

    assert (harness.LM_EVAL_VERSION, harness.INSPECT_VERSION) == (LMEVAL_VERSION, INSPECT_VERSION)


def test_it_links_the_downloads_from_the_version_page_for_researchers_only(tasks_version):
    page = reverse("annotation:version_detail", args=[tasks_version.pk])
    url = reverse("evaluation:version_tasks", args=[tasks_version.pk])
    assert f"{url}?format=lm-eval" in client_for(make_researcher()).get(page).content.decode()
    assert url not in client_for(make_annotator("harness_d")).get(page).content.decode()
