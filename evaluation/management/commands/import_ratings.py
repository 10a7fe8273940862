from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.tables import ImportValidationError
from evaluation.models import Run, RunKind
from evaluation.services.scoring import ratings_import


class Command(BaseCommand):
    help = "Import human scores (0-5) of a generation run's explanations, all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--run", type=int, required=True, help="The generation run the scores are for.")

    def handle(self, *args, path, run, **options):
        generation = Run.objects.filter(pk=run, kind=RunKind.GENERATION).select_related("dataset").first()
        if generation is None:
            raise CommandError(f"no generation run {run}")
        file_path = Path(path)
        if not file_path.is_file():
            raise CommandError(f"{path}: no such file.")
        try:
            result = ratings_import(run=generation, filename=file_path.name, content=file_path.read_bytes())
        except ImportValidationError as exc:
            for error in exc.report.errors:
                self.stderr.write(f"{path}: {error}")
            raise CommandError(f"import aborted, nothing was written ({len(exc.report.errors)} error(s)).") from None
        self.stdout.write(f"run {generation.pk}: ratings {result['ratings']}, raters {', '.join(result['raters'])}")
