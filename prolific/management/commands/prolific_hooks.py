"""python manage.py prolific_hooks SLUG --register [--url URL] [--site-url URL] [--workspace ID] [--new-secret]"""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from ...client import ProlificError
from ...selectors import site_url as public_site
from ...services import prolific_hooks_register, prolific_hooks_secret_create
from ._shared import require_token, study_or_error, warn_unreachable


class Command(BaseCommand):
    help = (
        "Subscribe the app's webhook to Prolific's submission status changes (--register); --new-secret asks "
        "Prolific for a new signing secret and prints it once (it replaces the workspace's old one)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--register", action="store_true", help="Subscribe the webhook.")
        parser.add_argument("--url", default=None, help="The webhook's address (default: SITE/prolific/hooks/...).")
        parser.add_argument("--site-url", default=None, help="The app's public address (default: PROLIFIC_SITE_URL).")
        parser.add_argument("--workspace", default=None, help="The Prolific workspace id (default: the token's first).")
        parser.add_argument("--new-secret", action="store_true", help="Create a new signing secret and print it.")

    def handle(self, *args, slug, register, url, site_url: str | None, workspace, new_secret, **options):
        study = study_or_error(slug)
        if not register and not new_secret:
            raise CommandError("Nothing to do: give --register (and/or --new-secret).")
        try:
            target = url or (public_site(site_url) + reverse("prolific:webhook"))
        except ProlificError as exc:
            raise CommandError(str(exc)) from exc
        if register:
            warn_unreachable(self, target)
        require_token(self.stdout, f"subscribe {target} to Prolific's submission.status.change events")
        try:
            if new_secret:
                secret = prolific_hooks_secret_create(study=study, workspace_id=workspace)
                # Printed once for the operator to store; never written to the database or the call log.
                self.stdout.write(
                    f"New signing secret (set it as {settings.PROLIFIC_WEBHOOK_SECRET_ENV} and restart): {secret}"
                )
            if register:
                result = prolific_hooks_register(study=study, target_url=target, workspace_id=workspace)
                verb = "subscribed" if result["created"] else "already subscribed"
                self.stdout.write(f"{target} {verb} (subscription {result['subscription_id']})")
        except ProlificError as exc:
            raise CommandError(str(exc)) from exc
