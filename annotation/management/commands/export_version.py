"""Export a frozen dataset version in the corpus format plus a provenance column, or as a Hugging Face dataset."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.selectors.rounds import version_get_by_name
from annotation.services import HF_FORMAT, VERSION_EXPORT_FORMATS, ExportError, version_export, version_hf_write


class Command(BaseCommand):
    help = (
        "Export a frozen dataset version (UTF-8), one row per accepted item with its provenance; "
        "--format hf writes a Hugging Face dataset folder (Parquet, dataset card, croissant.json) to --out."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Version name.")
        parser.add_argument("--format", choices=VERSION_EXPORT_FORMATS, default="csv")
        parser.add_argument(
            "--out", help="Output file (a new or empty folder for --format hf); standard output when omitted."
        )

    def handle(self, *args, name, format, out, **options):
        version = version_get_by_name(name=name)
        if version is None:
            raise CommandError(f"no version named '{name}': freeze a locked round first (freeze_version).")
        if format == HF_FORMAT:
            if not out:
                raise CommandError("--format hf writes a folder: give it with --out DIR.")
            try:
                written = version_hf_write(version=version, out=Path(out))
            except ExportError as error:
                raise CommandError(str(error)) from error
            splits = ", ".join(f"{split} {n}" for split, n in written.splits.items())
            self.stderr.write(f"wrote {written.n_rows} items ({splits}) as a Hugging Face dataset to {out}")
            return
        text = version_export(version=version, fmt=format)
        if out:
            Path(out).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {version.items.count()} items to {out}")
        else:
            self.stdout.write(text, ending="")
