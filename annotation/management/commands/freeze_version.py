"""Freeze the accepted items of a locked round into a named, immutable dataset version."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.selectors.stats import round_get_by_name
from annotation.services import version_freeze


class Command(BaseCommand):
    help = (
        "Freeze a locked round into a named version. Refused while any item of the round is undecided "
        "(awaiting reviews or adjudication)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Version name (unique).")
        parser.add_argument("--round", required=True, dest="round_name", help="Round name.")

    def handle(self, *args, name, round_name, **options):
        round_ = round_get_by_name(name=round_name)
        if round_ is None:
            raise CommandError(f"no round named '{round_name}'.")
        try:
            version = version_freeze(round=round_, name=name, user=None)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        funnel = version.funnel
        self.stdout.write(
            f"froze '{version.name}': {version.items.count()} items "
            f"({funnel['unanimous']} unanimous, {funnel['adjudicated']} adjudicated; {funnel['removed']} removed)"
        )
