"""Export a frozen dataset version in the corpus format plus a provenance column."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.selectors.rounds import version_get_by_name
from annotation.services import EXPORT_FORMATS, version_export


class Command(BaseCommand):
    help = "Export a frozen dataset version (UTF-8), one row per accepted item with its provenance."

    def add_arguments(self, parser):
        parser.add_argument("name", help="Version name.")
        parser.add_argument("--format", choices=EXPORT_FORMATS, default="csv")
        parser.add_argument("--out", help="Output file; standard output when omitted.")

    def handle(self, *args, name, format, out, **options):
        version = version_get_by_name(name=name)
        if version is None:
            raise CommandError(f"no version named '{name}'.")
        text = version_export(version=version, fmt=format)
        if out:
            Path(out).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {version.items.count()} items to {out}")
        else:
            self.stdout.write(text, ending="")
