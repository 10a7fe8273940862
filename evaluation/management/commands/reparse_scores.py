import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Run
from evaluation.services.runs import run_scores_reparse


class Command(BaseCommand):
    help = (
        "Read a judge run's stored replies again with the current score parser (no request to the model) "
        "and print how many scores changed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, action="append", help="A judge run; may be repeated.")
        parser.add_argument("--dry-run", action="store_true", help="Count what would change; store nothing.")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **o):
        summaries = []
        for run_id in o["run"]:
            run = Run.objects.select_related("model").filter(pk=run_id).first()
            if run is None:
                raise CommandError(f"no run {run_id}")
            try:
                summaries.append(run_scores_reparse(run=run, dry_run=o["dry_run"]))
            except ValidationError as exc:
                raise CommandError(" ".join(exc.messages)) from exc
        if o["format"] == "json":
            self.stdout.write(json.dumps(summaries if len(summaries) > 1 else summaries[0], indent=2))
            return
        for s in summaries:
            verb = "would change" if s["dry_run"] else "changed"
            self.stdout.write(
                f"run {s['run']}: {s['n_items']} replies read with score parser v{s['parser_version']}: "
                f"{s['n_changed']} scores {verb} ({s['n_newly_unscored']} now unscored, "
                f"{s['n_newly_scored']} now scored, {s['n_other_value']} another value); "
                f"{s['n_unscored']} unscored, {s['n_cut_off']} cut off, {s['n_expected']} with a probability-weighted score"
            )
