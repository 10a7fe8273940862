from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.selectors.quality import quality_summary, round_quality
from annotation.selectors.stats import round_get_by_name
from annotation.services import QUALITY_FORMATS, round_quality_export


class Command(BaseCommand):
    help = (
        "Annotators over time in a round: per annotator the items answered, median seconds, the share of fast "
        "answers, accuracy on control items, theme kappa with the final labels and per drift window; per pair "
        "the theme kappa overall and per window (README: Annotator quality)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--round", required=True, dest="round_name", help="Round name.")
        parser.add_argument("--format", choices=QUALITY_FORMATS, default="json")
        parser.add_argument("--out", help="Output file; standard output when omitted.")

    def handle(self, *args, round_name, format, out, **options):
        round_ = round_get_by_name(name=round_name)
        if round_ is None:
            raise CommandError(f"no round named '{round_name}'.")
        try:
            text = round_quality_export(summary=quality_summary(round_quality(round=round_)), fmt=format)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if out:
            Path(out).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote the annotator quality of round '{round_.name}' to {out}")
        else:
            self.stdout.write(text, ending="")
