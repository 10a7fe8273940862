"""Load the demo dataset and the demo accounts; safe to run any number of times."""

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from django.core.management.color import color_style

from annotation.services import DEMO_DATASET_NAME, demo_accounts_ensure, demo_dataset_load
from annotation.services.demo import demo_round_ensure
from core.tables import ImportValidationError

DEMO_PASSWORD = "vivid-demo"
DEMO_URL = "http://127.0.0.1:8000/"


def accounts_summary(*, accounts, base_url: str, round_name: str) -> list[str]:
    """Where to go and who to sign in as: the lines a person reads before opening the browser."""
    style = color_style()
    rows = [("Username", "Role", "Password")] + [(a.username, a.role, DEMO_PASSWORD) for a in accounts]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]

    def line(cells):
        return "  " + "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()

    return [
        "",
        style.SUCCESS(f"VIVID Studio demo: open {base_url}"),
        f"Try it: sign in as annotator_a and annotator_b to review '{round_name}', as researcher to lock it, "
        "as adjudicator to settle disagreements, then as researcher to freeze a version.",
        line(rows[0]),
        line(["-" * w for w in widths]),
        *(line(row) for row in rows[1:]),
        "",
        style.WARNING(
            f"WARNING: '{DEMO_PASSWORD}' is a demo password known to anyone who reads this code. "
            "Never use these accounts on a server others can reach."
        ),
    ]


class Command(BaseCommand):
    help = (
        f"Import the VIVID demo idioms into the dataset '{DEMO_DATASET_NAME}' and create one demo account per "
        f"role plus an admin, all with the password '{DEMO_PASSWORD}', with a suggestion set and an open round "
        "for annotator_a and annotator_b. Idempotent. Refuses to run in production unless --force is given."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--force", action="store_true", help="Run even when DJANGO_ENV=production (creates known passwords!)."
        )
        parser.add_argument(
            "--no-summary",
            action="store_true",
            help="Leave out the URL and the accounts table (make demo prints them once the server answers).",
        )

    def handle(self, *args, force: bool = False, no_summary: bool = False, **options):
        if getattr(settings, "PRODUCTION", False) and not force:
            raise CommandError(
                "Refusing to seed demo accounts with a known password in production (DJANGO_ENV=production). "
                "Pass --force if you really mean it."
            )

        accounts = demo_accounts_ensure(password=DEMO_PASSWORD)
        admin = User.objects.filter(username="admin").first()
        try:
            report = demo_dataset_load(user=admin)
        except ImportValidationError as exc:
            raise CommandError(f"The demo CSV did not import: {exc}") from None

        try:
            demo = demo_round_ensure(user=User.objects.filter(username="researcher").first())
        except ImportValidationError as exc:
            raise CommandError(f"The demo suggestions did not import: {exc}") from None

        self.stdout.write(f"Dataset '{DEMO_DATASET_NAME}': {report.summary} ({report.rows} rows in the demo file).")
        self.stdout.write("Accounts: " + ", ".join(f"{a.username} {a.status}" for a in accounts) + ".")
        round_ = demo.round
        self.stdout.write(
            f"Suggestions '{demo.suggestion_set.name}' ({demo.suggestion_set.model_name}): {demo.suggestions_status}, "
            f"{demo.suggestion_set.suggestions.count()} suggestions."
        )
        self.stdout.write(
            f"Round '{round_.name}': {demo.round_status}, {round_.get_status_display().lower()}, "
            f"{round_.items.count()} items, annotators "
            + " and ".join(round_.annotators.order_by("username").values_list("username", flat=True))
            + f", {round_.items.filter(suggestions_hidden=True).count()} items with suggestions hidden, seed {round_.seed}."
        )

        if not no_summary:
            for text in accounts_summary(accounts=accounts, base_url=DEMO_URL, round_name=round_.name):
                self.stdout.write(text)
