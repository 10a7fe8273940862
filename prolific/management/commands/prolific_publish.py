"""python manage.py prolific_publish SLUG [--group G|each] [--completion approve|review] [--filters FILE.json]
[--dry-run] [--publish] [--site-url URL]"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ...client import ProlificError
from ...models import CompletionAction
from ...selectors import prolific_study_bodies
from ...services import prolific_study_create, prolific_study_publish
from ._shared import require_token, study_or_error

COMPLETION = {"approve": CompletionAction.AUTOMATICALLY_APPROVE, "review": CompletionAction.MANUALLY_REVIEW}


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

    def handle(self, *args, slug, group, completion, filters, dry_run, publish, site_url, **options):
        study = study_or_error(slug)
        filters = self._filters(filters)
        action = COMPLETION[completion]
        try:
            bodies = prolific_study_bodies(
                study=study, group=group, completion_action=action, filters=filters, site=site_url
            )
        except ProlificError as exc:
            raise CommandError(str(exc)) from exc
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
        try:
            rows = prolific_study_create(
                study=study, group=group, completion_action=action, filters=filters, site=site_url
            )
        except ProlificError as exc:
            raise CommandError(str(exc)) from exc
        for row in rows:
            self.stdout.write(f"{row.group or 'all groups'}: {row.prolific_id or '(being created)'} {row.status}")
        if not publish:
            return
        failed = []
        for row in rows:
            if not row.prolific_id:
                failed.append(f"{row.group or 'all groups'}: not created yet")
                continue
            try:
                row = prolific_study_publish(prolific_study=row)
            except ProlificError as exc:
                failed.append(f"{row.group or 'all groups'}: {exc}")
                continue
            self.stdout.write(f"{row.group or 'all groups'}: {row.prolific_id} {row.status}")
        if failed:
            raise CommandError("Not published: " + "; ".join(failed))

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
