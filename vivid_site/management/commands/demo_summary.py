"""What `make demo` prints last, once the server answers: the URL, the accounts, the participant links."""

from django.core.management.base import BaseCommand

from annotation.management.commands.seed_demo import DEMO_URL, accounts_summary
from annotation.services.demo import ADMIN_ROLE_LABEL, DEMO_ACCOUNTS, DEMO_ROUND_NAME, DemoAccount
from study.demo import SLUG
from study.management.commands.seed_demo_study import entry_links
from study.models import Study


def demo_summary(*, base_url: str = DEMO_URL, new_participants: bool = False) -> list[str]:
    """The closing lines of `make demo`; the participant links come last, where the eye lands."""
    accounts = [DemoAccount(username=u, role=role or ADMIN_ROLE_LABEL, status="") for u, role, _super in DEMO_ACCOUNTS]
    lines = accounts_summary(accounts=accounts, base_url=base_url, round_name=DEMO_ROUND_NAME)
    lines[1] += " (Ctrl-C stops the server and the worker)"
    study = Study.objects.filter(slug=SLUG).first()
    lines.append("")
    if study is None:
        lines.append(f"The demo study '{SLUG}' is missing: run `manage.py seed_demo_study` to see why.")
        return lines
    lines.append(
        f"Artwork study '{SLUG}' ({study.get_status_display().lower()}): open each participant link "
        "in its own private window."
    )
    lines.extend(entry_links(study=study, base_url=base_url, new_participants=new_participants))
    return lines


class Command(BaseCommand):
    help = "Print the demo's URL, accounts and participant entry links (scripts/demo.sh, once the server answers)."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default=DEMO_URL, help=f"Where the app runs (default {DEMO_URL}).")
        parser.add_argument(
            "--new-participants",
            action="store_true",
            help="Links of participants who have not entered yet (fresh ids), instead of the README's.",
        )

    def handle(self, *args, base_url: str, new_participants: bool, **options):
        for line in demo_summary(base_url=base_url, new_participants=new_participants):
            self.stdout.write(line)
