"""python manage.py prolific_review SLUG [--approve-valid] [--dry-run]"""

import json

from django.core.management.base import BaseCommand, CommandError

from ...client import ProlificError
from ...selectors import prolific_review_rows
from ...services import prolific_submissions_approve_valid
from ._shared import require_token, study_or_error


class Command(BaseCommand):
    help = (
        "List the finished submissions with the local verdict (valid, screened_out, incomplete, no_session); "
        "--approve-valid approves every valid one awaiting review, in bulk, never twice."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--approve-valid", action="store_true", help="Approve the valid submissions.")
        parser.add_argument("--dry-run", action="store_true", help="Print the bulk-approve requests; send nothing.")

    def handle(self, *args, slug, approve_valid, dry_run, **options):
        study = study_or_error(slug)
        if not approve_valid:
            for row in prolific_review_rows(study=study):
                self.stdout.write(
                    f"{row['submission_id']}\t{row['participant_id']}\t{row['status']}\t{row['verdict']}"
                    + (f"\t{row['last_error']}" if row["last_error"] else "")
                )
            return
        if dry_run:
            result = prolific_submissions_approve_valid(study=study, dry_run=True)
            for body in result["requests"]:
                self.stdout.write(f"POST submissions/bulk-approve/\n{json.dumps(body, indent=2)}")
            self.stdout.write(f"{len(result['would_approve'])} submissions would be approved")
            return
        require_token(self.stdout, "approve every valid submission awaiting review (see --dry-run)")
        try:
            result = prolific_submissions_approve_valid(study=study)
        except ProlificError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{result['approved']} approved in {result['requests']} request(s)")
        for refusal in result["refused"]:
            self.stderr.write(f"{refusal['submission_id']} ({refusal['participant_id']}): {refusal['message']}")
        if result["refused"]:
            raise CommandError(f"Prolific refused {len(result['refused'])} approval(s); see the messages above.")
