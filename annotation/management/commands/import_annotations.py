"""Import labels made elsewhere into a round (contract checked by scripts outside the repo: keep it)."""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.selectors import dataset_get, dataset_near_matches
from annotation.services import annotations_import
from core.tables import ImportValidationError


def _did_you_mean(name: str) -> str:
    matches = [f"'{d.name}'" for d in dataset_near_matches(name=name)]
    return f" Did you mean {' or '.join(matches)}?" if matches else ""


class Command(BaseCommand):
    help = (
        "Import annotations made elsewhere, one row per item and annotator (columns expression, annotator, theme, "
        "traits, optional note), into a round, created when missing. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="File to import (.csv, .tsv, .json, .jsonl, .xlsx).")
        parser.add_argument("--dataset", required=True, help="Name of the dataset the expressions belong to.")
        parser.add_argument(
            "--round", required=True, dest="round_name", help="Round name; created when it does not exist."
        )

    def handle(self, *args, path, dataset, round_name, **options):
        file_path = Path(path)
        if not file_path.is_file():
            raise CommandError(f"{path}: no such file.")
        dataset_obj = dataset_get(name=dataset)
        if dataset_obj is None:
            raise CommandError(f"no dataset named '{dataset}'.{_did_you_mean(dataset)}")
        try:
            result = annotations_import(
                dataset=dataset_obj, round_name=round_name, filename=file_path.name, content=file_path.read_bytes()
            )
        except ImportValidationError as exc:
            for error in exc.report.errors:
                self.stderr.write(f"{path}: {error}")
            raise CommandError(f"import aborted, nothing was written ({len(exc.report.errors)} error(s)).") from None
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        if result.accounts_created:
            self.stdout.write(f"created inactive annotator accounts: {', '.join(result.accounts_created)}")
        if result.pending:
            self.stdout.write(f"{result.pending} item(s) still wait for another annotator's labels")
        self.stdout.write(result.summary)
