import json

from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Run
from evaluation.selectors import run_report
from evaluation.selectors.exports import run_report_key_value_csv


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
        self.stdout.write(run_report_key_value_csv(report), ending="")
