import csv
import io
import json

from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Run
from evaluation.selectors import run_report


def flatten(data: dict, prefix: str = "") -> list[tuple[str, object]]:
    rows = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            rows.extend(flatten(value, f"{name}."))
        else:
            rows.append((name, json.dumps(value, ensure_ascii=False) if isinstance(value, list) else value))
    return rows


class Command(BaseCommand):
    help = "A run's report: counts, average and per theme/trait scores (judge runs), accuracy (classification)."

    def add_arguments(self, parser):
        parser.add_argument("id", type=int)
        parser.add_argument("--format", choices=["json", "csv"], default="json")

    def handle(self, *args, id, format, **options):
        run = Run.objects.select_related("model").filter(pk=id).first()
        if run is None:
            raise CommandError(f"no run {id}")
        report = run_report(run=run)
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
            return
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["key", "value"])
        writer.writerows(flatten(report))
        self.stdout.write(out.getvalue(), ending="")
