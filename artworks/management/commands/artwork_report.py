import json

from django.core.management.base import BaseCommand, CommandError

from artworks.models import ArtworkPipelineRun
from artworks.selectors.report import artwork_report, artwork_report_csv


class Command(BaseCommand):
    help = "The Table 1 report of an artwork pipeline run: listener QA accuracy by condition, familiarity and question type."

    def add_arguments(self, parser):
        parser.add_argument("id", type=int)
        parser.add_argument("--format", choices=["json", "csv"], default="json")

    def handle(self, *args, id, format, **options):
        run = ArtworkPipelineRun.objects.select_related("collection", "speaker", "listener").filter(pk=id).first()
        if run is None:
            raise CommandError(f"no artwork pipeline run {id}")
        report = artwork_report(run=run)
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2, allow_nan=False))
            return
        self.stdout.write(artwork_report_csv(report), ending="")
