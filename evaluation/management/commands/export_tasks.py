"""Export a frozen version as lm-evaluation-harness or Inspect tasks (a self-contained folder)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.selectors import round_get_by_name, version_get_by_name
from evaluation.selectors import HARNESS_FORMATS, HarnessExportError, harness_files


class Command(BaseCommand):
    help = (
        "Write a frozen version as lm-evaluation-harness tasks (YAML per task, group 'vivid') or Inspect tasks "
        "(vivid.py), with the data as JSONL beside them and the app's exact-match rule."
    )

    def add_arguments(self, parser):
        # A positional name: Django reserves --version for its own.
        parser.add_argument("name", help="Name of a frozen version.")
        parser.add_argument("--format", required=True, choices=HARNESS_FORMATS)
        parser.add_argument("--out", required=True, help="Folder to write (created; files of the same name replaced).")

    def handle(self, *args, name, format, out, **options):
        version = version_get_by_name(name=name)
        if version is None:
            round_ = round_get_by_name(name=name)
            if round_ is not None:
                raise CommandError(
                    f"'{name}' is a round, not a frozen version: freeze it first (manage.py freeze_version NAME "
                    f"--round '{name}') and export that version."
                )
            raise CommandError(f"no frozen version named '{name}'.")
        try:
            files = harness_files(version=version, fmt=format)
        except HarnessExportError as exc:
            raise CommandError(str(exc)) from None
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise CommandError(f"--out {out} is a file, not a folder.")
        folder.mkdir(parents=True, exist_ok=True)
        for filename, text in files.items():
            (folder / filename).write_text(text, encoding="utf-8")
        self.stdout.write(f"wrote {len(files)} files for version '{version.name}' ({format}) to {folder.resolve()}")
