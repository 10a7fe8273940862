from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from artworks.models import ArtworkPipelineRun
from artworks.services.export import ArtworkExportError, artwork_study_package


class Command(BaseCommand):
    help = (
        "Write an artwork pipeline run's base and chosen pragmatic descriptions, elements, questions and "
        "images as a study package (a folder, or a .zip when PATH ends with .zip); prints the path last."
    )

    def add_arguments(self, parser):
        parser.add_argument("id", type=int)
        parser.add_argument(
            "--out", type=Path, default=None, help="Folder or .zip to write (default: under var/exports/)."
        )

    def handle(self, *args, id, out, **options):
        run = ArtworkPipelineRun.objects.select_related("collection", "speaker", "listener").filter(pk=id).first()
        if run is None:
            raise CommandError(f"no artwork pipeline run {id}")
        try:
            path = artwork_study_package(run=run, out=out)
        except ArtworkExportError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        for warning in path.warnings:
            self.stderr.write(f"warning: {warning}")
        self.stdout.write(str(path))
