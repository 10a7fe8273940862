from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services import expression_import, parse_column_map
from core.tables import ImportValidationError


class Command(BaseCommand):
    help = "Import idioms and proverbs from CSV, TSV, JSON, JSONL or XLSX into a dataset (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("path", help="File to import (.csv, .tsv, .json, .jsonl, .xlsx).")
        parser.add_argument("--dataset", required=True, help="Dataset name; created when it does not exist.")
        parser.add_argument("--dry-run", action="store_true", help="Validate and report, write nothing.")
        parser.add_argument(
            "--map",
            default="",
            help="Column mapping field=Column, comma-separated, e.g. expression=Idiom,explanation=Meaning.",
        )

    def handle(self, *args, path, dataset, dry_run, map, **options):
        try:
            column_map = parse_column_map(map)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        file_path = Path(path)
        if not file_path.is_file():
            raise CommandError(f"{path}: no such file.")
        try:
            report = expression_import(
                dataset_name=dataset,
                filename=file_path.name,
                content=file_path.read_bytes(),
                column_map=column_map,
                dry_run=dry_run,
            )
        except ImportValidationError as exc:
            self._say_new_dataset(exc.report)
            for error in exc.report.errors:
                self.stderr.write(f"{path}: {error}")
            raise CommandError(f"import aborted, nothing was written ({len(exc.report.errors)} error(s)).") from None
        self._say_new_dataset(report)
        for duplicate in report.duplicates:
            self.stdout.write(f"skipped row {duplicate['row']} ({duplicate['expression']}): {duplicate['reason']}")
        if report.metadata_columns:
            self.stdout.write(f"kept as metadata: {', '.join(report.metadata_columns)}")
        if dry_run:
            self.stdout.write("dry run: nothing was written")
        self.stdout.write(report.summary)

    def _say_new_dataset(self, report) -> None:
        # The report knows only once the file has been read and checked, so a file of the wrong
        # kind (or a bomb) gets its error without a database lookup.
        if report.new_dataset:
            self.stdout.write(f'new dataset "{report.dataset_name}" will be created')
            for name in report.near_matches:
                self.stdout.write(f'  did you mean the existing dataset "{name}"? (--dataset "{name}")')
