"""Write, import, prepare and launch the demo artwork study; safe to run any number of times."""

import secrets

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from study.demo import SLUG, demo_study_ensure
from study.services.imports import StudyImportError
from study.services.participants import prolific_id_for

DEMO_URL = "http://127.0.0.1:8000"


def entry_links(*, study, base_url: str, new_participants: bool = False) -> list[str]:
    """The researcher's study page, then one Prolific-style entry link per participant group.

    Prolific-shaped ids (the entry link refuses others): the README's, the same at every start, or
    with ``new_participants`` drawn anew, for participants who have not entered yet (a finished
    participant's link only leads to the end again).
    """
    base = base_url.rstrip("/")
    lines = [f"Study page (researcher): {base}/studies/{study.slug}/"]
    for group in study.groups:
        if new_participants:
            pid, session = secrets.token_hex(12), secrets.token_hex(12)
        else:
            pid, session = prolific_id_for(f"demo-{group}-1"), prolific_id_for(f"demo-{group}-1-session")
        lines.append(
            f"Entry link, {group} participant: {base}/s/{study.slug}/?PROLIFIC_PID={pid}"
            f"&STUDY_ID={prolific_id_for('demo')}&SESSION_ID={session}&group={group}"
        )
    return lines


class Command(BaseCommand):
    help = (
        f"Write the demo study package (images drawn by code) to var/demo-study/, import it as '{SLUG}' when "
        "missing, compute its sentence pairs here (the bundled embedding model, a few seconds), launch it, and "
        "print entry links for an American and a Chinese participant."
    )

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default=DEMO_URL, help=f"Where the app runs (default {DEMO_URL}).")
        parser.add_argument("--no-prepare", action="store_true", help="Import only; leave the preparation to a worker.")
        parser.add_argument("--no-launch", action="store_true", help="Leave the study a draft.")
        parser.add_argument(
            "--no-links",
            action="store_true",
            help="Leave out the links (make demo prints them once the server answers).",
        )

    def handle(self, *args, base_url: str, no_prepare: bool, no_launch: bool, no_links: bool = False, **options):
        researcher = User.objects.filter(username="researcher").first()
        try:
            study, notes = demo_study_ensure(
                folder=settings.VAR_DIR / "demo-study", user=researcher, prepare=not no_prepare, launch=not no_launch
            )
        except StudyImportError as exc:
            for error in exc.errors:
                self.stderr.write(error)
            raise CommandError("the demo study package did not import") from None
        for note in notes:
            self.stdout.write(f"{SLUG}: {note}")
        if not no_links:
            for line in entry_links(study=study, base_url=base_url):
                self.stdout.write(line)
