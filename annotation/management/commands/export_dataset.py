from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.selectors import dataset_get
from annotation.services import EXPORT_FORMATS, dataset_export


class Command(BaseCommand):
    help = "Export a dataset, one row per expression with its traits and theme (UTF-8)."

    def add_arguments(self, parser):
        parser.add_argument("name", help="Dataset name.")
        parser.add_argument("--format", choices=EXPORT_FORMATS, default="csv")
        parser.add_argument("--out", help="Output file; standard output when omitted.")

    def handle(self, *args, name, format, out, **options):
        dataset = dataset_get(name=name)
        if dataset is None:
            raise CommandError(f"no dataset named '{name}'.")
        text = dataset_export(dataset=dataset, fmt=format)
        if out:
            Path(out).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {dataset.expressions.count()} expressions to {out}")
        else:
            self.stdout.write(text, ending="")
