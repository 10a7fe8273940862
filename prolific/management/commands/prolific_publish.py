"""python manage.py prolific_publish SLUG [--group G|each] [--completion approve|review] [--filters FILE.json]
[--dry-run] [--publish] [--site-url URL] [--wait SECONDS]"""

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ...client import ProlificError
from ...models import CompletionAction
from ...selectors import prolific_study_bodies
from ...selectors import site_url as public_site
from ...services import prolific_study_create, prolific_study_publish
from ...services.studies import STALE_CREATE
from ._shared import require_token, study_or_error, warn_unreachable

COMPLETION = {"approve": CompletionAction.AUTOMATICALLY_APPROVE, "review": CompletionAction.MANUALLY_REVIEW}
# Past the age at which another run's create is taken over, so a wait of the default length ends
# with the draft created, by that run or by this one.
DEFAULT_WAIT_SECONDS = STALE_CREATE.total_seconds() + 30
WAIT_POLL_SECONDS = 2.0


def pause(seconds: float) -> None:
    time.sleep(seconds)


class Command(BaseCommand):
    help = (
        "Create the study's Prolific study as a draft (one for all groups, --group G for one group, --group each "
        "for one per group), then publish it with --publish. Running it again never creates a second one."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--group", default=None, help="A group of the study, or 'each' (default: one for all).")
        parser.add_argument(
            "--completion",
            choices=sorted(COMPLETION),
            default="review",
            help="What a completion code does on Prolific: approve at once, or wait for review (default).",
        )
        parser.add_argument("--filters", default=None, help="A JSON file with Prolific's filters (a list).")
        parser.add_argument("--dry-run", action="store_true", help="Print the exact request bodies; send nothing.")
        parser.add_argument("--publish", action="store_true", help="Publish the drafts once created.")
        parser.add_argument(
            "--site-url", default=None, help="The app's public address (default: the PROLIFIC_SITE_URL setting)."
        )
        parser.add_argument(
            "--wait",
            type=float,
            default=DEFAULT_WAIT_SECONDS,
            help="Seconds to wait for a draft another run is creating at this moment (default %(default)g: past "
            "the time after which its create is taken over); then exit 1.",
        )

    def handle(self, *args, slug, group, completion, filters, dry_run, publish, site_url, wait, **options):
        study = study_or_error(slug)
        filters = self._filters(filters)
        action = COMPLETION[completion]
        try:
            bodies = prolific_study_bodies(
                study=study, group=group, completion_action=action, filters=filters, site=site_url
            )
        except ProlificError as exc:
            raise CommandError(str(exc)) from exc
        warn_unreachable(self, public_site(site_url))
        if dry_run:
            for body in bodies:
                self.stdout.write(f"POST studies/\n{json.dumps(body, indent=2, ensure_ascii=False)}")
            if publish:
                self.stdout.write('then POST studies/<id>/transition/ {"action": "PUBLISH"} for each')
            return
        require_token(
            self.stdout,
            f"create {len(bodies)} draft Prolific stud{'y' if len(bodies) == 1 else 'ies'}"
            + (" and publish them" if publish else "")
            + " (see --dry-run for the bodies)",
        )
        rows = self._create_all(study=study, group=group, action=action, filters=filters, site=site_url, wait=wait)
        for row in rows:
            self.stdout.write(f"{row.group or 'all groups'}: {row.prolific_id or '(being created)'} {row.status}")
        if not publish:
            return
        failed = []
        for row in rows:
            try:
                row = prolific_study_publish(prolific_study=row)
            except ProlificError as exc:
                failed.append(f"{row.group or 'all groups'}: {exc}")
                continue
            self.stdout.write(f"{row.group or 'all groups'}: {row.prolific_id} {row.status}")
        if failed:
            raise CommandError("Not published: " + "; ".join(failed))

    def _create_all(self, *, study, group, action, filters, site, wait: float) -> list:
        """Every draft with its Prolific id. A draft another run is creating at this moment is waited
        for (its create is taken over once it is STALE_CREATE old); still without an id after ``wait``
        seconds the command fails: it never ends 0 with a draft that may not exist."""
        deadline = time.monotonic() + max(wait, 0)
        said = False
        while True:
            try:
                rows = prolific_study_create(
                    study=study, group=group, completion_action=action, filters=filters, site=site
                )
            except ProlificError as exc:
                raise CommandError(str(exc)) from exc
            pending = [row.group or "all groups" for row in rows if not row.prolific_id]
            if not pending:
                return rows
            if time.monotonic() >= deadline:
                raise CommandError(
                    f"{', '.join(pending)}: still being created by another run after {wait:g} s, so nothing more was "
                    "done; run the command again (or give a longer --wait)."
                )
            if not said:
                self.stdout.write(
                    f"{', '.join(pending)}: being created by another run; waiting up to {wait:g} s for it to finish."
                )
                said = True
            pause(min(WAIT_POLL_SECONDS, max(deadline - time.monotonic(), 0)))

    def _filters(self, path: str | None) -> list:
        if not path:
            return []
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise CommandError(f"Cannot read the filters file {path}: {exc.strerror}") from exc
        except ValueError as exc:
            raise CommandError(f"The filters file {path} is not JSON: {exc}") from exc
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise CommandError(f"The filters file {path} must hold a JSON list of objects (Prolific's filters).")
        return data
