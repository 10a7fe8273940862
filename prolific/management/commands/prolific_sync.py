"""python manage.py prolific_sync SLUG"""

from django.core.management.base import BaseCommand, CommandError

from ...client import ProlificError
from ...selectors import prolific_discrepancies
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
            "{unchanged} unchanged, {freed} places freed, {unverified} sessions unknown to Prolific released".format(
                plural="y" if counts["studies"] == 1 else "ies", **counts
            )
        )
        self._discrepancies(prolific_discrepancies(study=study))

    def _discrepancies(self, found: dict) -> None:
        """The page's list, on stdout: a script that syncs sees what needs a person's look."""
        unknown, orphans = found["unknown_sessions"], found["orphan_submissions"]
        if not unknown and not orphans:
            self.stdout.write("No discrepancies: every session here matches a submission on Prolific.")
            return
        if unknown:
            self.stdout.write(f"{len(unknown)} session(s) here that Prolific does not know:")
            for p in unknown:
                self.stdout.write(f"  {p.prolific_pid}\t{p.prolific_session_id or '-'}\t{p.get_status_display()}")
        if orphans:
            self.stdout.write(f"{len(orphans)} submission(s) on Prolific with no session here:")
            for s in orphans:
                self.stdout.write(f"  {s.prolific_pid}\t{s.submission_id}\t{s.get_status_display()}")
