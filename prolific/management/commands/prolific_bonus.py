"""python manage.py prolific_bonus SLUG --file bonuses.csv [--pay]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ...client import ProlificError
from ...models import BonusBatchStatus
from ...services import BonusFileError, bonus_batch_create, bonus_batch_pay, bonus_rows_validate
from ._shared import require_token, study_or_error


class Command(BaseCommand):
    help = (
        "Create a bonus batch from a CSV (participant_id,amount in the study's currency) and print its total cost; "
        "--pay pays it, exactly once: a batch sent before is never sent again, whatever happened to that run."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--file", required=True, help="CSV with the columns participant_id,amount.")
        parser.add_argument("--pay", action="store_true", help="Pay the batch (after checking its total).")

    def handle(self, *args, slug, file, pay, **options):
        study = study_or_error(slug)
        path = Path(file)
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}") from exc
        upload = _Named(path.name, content)
        try:
            checked = bonus_rows_validate(study=study, file_or_text=upload)
        except BonusFileError as exc:
            for error in exc.errors:
                self.stderr.write(error)
            raise CommandError(f"{file}: {len(exc.errors)} error(s); nothing was created.") from exc
        require_token(
            self.stdout, f"create a batch of {len(checked['rows'])} bonuses totalling {checked['total']} before fees"
        )
        try:
            batch = bonus_batch_create(study=study, file_or_text=upload)
        except ProlificError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"batch {batch.pk} ({batch.prolific_id}): {len(batch.rows)} bonuses, amount {batch.amount}, "
            f"fees {batch.fees}, VAT {batch.vat}, total cost {batch.total_amount}; {batch.get_status_display()}"
        )
        if not pay:
            if batch.status in (BonusBatchStatus.CREATED, BonusBatchStatus.FAILED):
                self.stdout.write("Not paid: run again with --pay to pay it.")
            elif batch.status == BonusBatchStatus.QUEUED:
                self.stdout.write("Queued from the study's Prolific page for a worker to pay; --pay pays it from here.")
            return
        before = batch.status
        try:
            batch = bonus_batch_pay(batch=batch)
        except ProlificError as exc:
            raise CommandError(f"batch {batch.pk}: {exc}") from exc
        if before == BonusBatchStatus.SENT:
            # What the script asked for is done: a rerun of the same step succeeds and pays nothing.
            when = f" on {batch.sent_at:%Y-%m-%d %H:%M}" if batch.sent_at else ""
            self.stdout.write(f"batch {batch.pk} was already paid{when}: nothing was sent again.")
            return
        if before == BonusBatchStatus.SENDING:
            # Whether it was paid is unknown: a person has to look in Prolific's web app.
            raise CommandError(
                f"batch {batch.pk} was sent before without a clear answer ({batch.get_status_display()}); it is "
                "never sent again from here: check it in Prolific's web app."
                + (f" {batch.error}" if batch.error else "")
            )
        if batch.status == BonusBatchStatus.SENDING:
            # A worker claimed it between this command's read and its claim: its answer is not this run's to know.
            raise CommandError(
                f"batch {batch.pk} is being paid by another process (a worker, from the study's Prolific page); "
                "it is never sent twice: see its row there, or check it in Prolific's web app."
            )
        self.stdout.write(f"batch {batch.pk}: {batch.get_status_display()}")


class _Named:
    """The file's bytes with its name, read like an upload."""

    def __init__(self, name: str, content: bytes):
        self.name, self.content = name, content

    def read(self):
        return self.content
