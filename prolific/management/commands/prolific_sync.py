"""python manage.py prolific_sync SLUG"""

from django.core.management.base import BaseCommand, CommandError

from ...client import ProlificError
from ...services import prolific_submissions_sync
from ._shared import require_token, study_or_error


class Command(BaseCommand):
    help = "Read every submission of the study's Prolific studies and store their statuses; returned ones free places."

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, *args, slug, **options):
        study = study_or_error(slug)
        require_token(self.stdout, "read every submission of this study's Prolific studies and store their statuses")
        try:
            counts = prolific_submissions_sync(study=study)
        except ProlificError as exc:
            raise CommandError(str(exc)) from exc
        if not counts["studies"]:
            raise CommandError(f"{slug} has no Prolific study yet: create one with prolific_publish first.")
        self.stdout.write(
            "{studies} Prolific stud{plural}: {seen} submissions seen, {created} new, {updated} changed, "
            "{unchanged} unchanged, {freed} places freed".format(
                plural="y" if counts["studies"] == 1 else "ies", **counts
            )
        )
