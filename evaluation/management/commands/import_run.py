"""Import an lm-evaluation-harness or Inspect log of the exported VIVID tasks as a finished run."""

import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.selectors import version_get_by_name
from evaluation.harness_logs import LOG_FORMATS
from evaluation.models import RunKind
from evaluation.selectors.harness import TASKS
from evaluation.services.runs import run_import
from llm.models import ModelConfig

from ._runs import SKIP_SYSTEM_CHECKS


def _lmeval_facts(path: Path) -> tuple[str, str]:
    """(model, lm-eval version) from the results_*.json beside a samples file, else the folder's name
    (lm-eval writes both under a folder named after the model) and no version."""
    for results in sorted(path.parent.glob("results_*.json"), reverse=True):
        try:
            found = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        args = (found.get("config") or {}).get("model_args") if isinstance(found, dict) else None
        if isinstance(args, dict) and args.get("model"):
            return str(args["model"]), str(found.get("lm_eval_version") or "")
    return path.parent.name, ""


class Command(BaseCommand):
    help = (
        "Import a harness log as a finished run of the version it was exported from: lm-eval's --log_samples "
        "samples_vivid_<task>_*.jsonl, or an Inspect .eval/.json log. Prints the run id first."
    )
    requires_system_checks = SKIP_SYSTEM_CHECKS

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--format", required=True, choices=LOG_FORMATS)
        parser.add_argument("--dataset-version", help="The frozen version (default: vivid_version in the log).")
        parser.add_argument("--model", help="A registered model to file the run under (default: from the log).")
        parser.add_argument("--task", choices=list(TASKS), help="The task, for a log of several.")

    def handle(self, *args, **o):
        path = Path(o["file"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        version = None
        if o["dataset_version"]:
            version = version_get_by_name(name=o["dataset_version"])
            if version is None:
                raise CommandError(f"no frozen version named '{o['dataset_version']}'.")
        model = None
        if o["model"]:
            model = ModelConfig.objects.filter(name=o["model"]).first()
            if model is None:
                raise CommandError(f"no model named '{o['model']}'.")
        fallback, harness_version = _lmeval_facts(path.resolve()) if o["format"] == "lm-eval" else ("", "")
        try:
            run = run_import(
                fmt=o["format"],
                data=data,
                filename=path.name,
                version=version,
                model=model,
                task=o["task"],
                model_fallback=fallback,
                harness_version=harness_version,
            )
        except ValidationError as exc:
            lines = [f"{field}: {message}" for field, messages in exc.message_dict.items() for message in messages]
            raise CommandError("nothing imported:\n  " + "\n  ".join(lines)) from None
        n = run.items.count()
        said = "already imported as run" if run.idempotent_repeat else "imported as run"
        line = f"{run.pk} {run.kind}: {said} {run.pk}, {n} items, model {run.model.name}, version '{run.version.name}'"
        if run.kind == RunKind.CLASSIFICATION:
            correct = run.items.filter(correct=True).count()
            line += f", accuracy {correct / n:.4f} ({correct}/{n})"
        self.stdout.write(line)
