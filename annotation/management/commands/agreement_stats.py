from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import agreement
from annotation.selectors.stats import round_agreement_stats, round_get_by_name
from annotation.services import STATS_FORMATS, round_stats_export


class Command(BaseCommand):
    help = (
        "Agreement statistics of an annotation round (Cohen's and Fleiss' kappa, Krippendorff's alpha, "
        "percent agreement, PABAK, bootstrap intervals), on the labels submitted before adjudication."
    )

    def add_arguments(self, parser):
        parser.add_argument("--round", required=True, dest="round_name", help="Round name.")
        parser.add_argument("--format", choices=STATS_FORMATS, default="json")
        parser.add_argument("--resamples", type=int, default=agreement.DEFAULT_RESAMPLES, help="Bootstrap resamples.")
        parser.add_argument("--seed", type=int, default=agreement.DEFAULT_SEED, help="Bootstrap seed.")
        parser.add_argument("--out", help="Output file; standard output when omitted.")

    def handle(self, *args, round_name, format, resamples, seed, out, **options):
        round_ = round_get_by_name(name=round_name)
        if round_ is None:
            raise CommandError(f"no round named '{round_name}'.")
        if resamples < 1:
            raise CommandError("--resamples must be at least 1.")
        stats = round_agreement_stats(round=round_, n_resamples=resamples, seed=seed)
        text = round_stats_export(stats=stats, fmt=format)
        if out:
            Path(out).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote the statistics of round '{round_.name}' to {out}")
        else:
            self.stdout.write(text, ending="")
