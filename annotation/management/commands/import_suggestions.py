"""Attach LLM trait suggestions from a file to a dataset."""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.selectors import dataset_get, dataset_near_matches
from annotation.services import suggestion_set_import
from core.tables import ImportValidationError


def _did_you_mean(name: str) -> str:
    matches = [f"'{d.name}'" for d in dataset_near_matches(name=name)]
    return f" Did you mean {' or '.join(matches)}?" if matches else ""


class Command(BaseCommand):
    help = (
        "Import trait suggestions (columns expression, traits, optional raw_output) for a dataset as a named "
        "suggestion set. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="File to import (.csv, .tsv, .json, .jsonl, .xlsx).")
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        parser.add_argument("--name", required=True, help="Name of the new suggestion set.")
        parser.add_argument("--model", required=True, help="The model that made the suggestions.")
        parser.add_argument("--prompt-version", default="", help="Version of the prompt used.")

    def handle(self, *args, path, dataset, name, model, prompt_version, **options):
        file_path = Path(path)
        if not file_path.is_file():
            raise CommandError(f"{path}: no such file.")
        dataset_obj = dataset_get(name=dataset)
        if dataset_obj is None:
            raise CommandError(f"no dataset named '{dataset}'.{_did_you_mean(dataset)}")
        if not name.strip() or not model.strip():
            raise CommandError("--name and --model must not be empty.")
        try:
            suggestion_set = suggestion_set_import(
                dataset=dataset_obj,
                name=name.strip(),
                model_name=model.strip(),
                prompt_version=prompt_version.strip(),
                filename=file_path.name,
                content=file_path.read_bytes(),
            )
        except ImportValidationError as exc:
            for error in exc.report.errors:
                self.stderr.write(f"{path}: {error}")
            raise CommandError(f"import aborted, nothing was written ({len(exc.report.errors)} error(s)).") from None
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        self.stdout.write(
            f"suggestion set {suggestion_set.name}: suggestions {suggestion_set.suggestions.count()}, "
            f"model {suggestion_set.model_name}"
        )
