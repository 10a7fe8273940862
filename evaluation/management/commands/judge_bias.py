import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Run, RunKind
from evaluation.selectors.bias import cli_report, judge_bias
from evaluation.services.bias import judge_paraphrases_start


class Command(BaseCommand):
    help = (
        "A judge run's bias diagnostics: verbosity (Spearman between score and explanation length, partial on "
        "the human score), prompt-paraphrase stability (Krippendorff's alpha across wordings), self-preference, "
        "and for a pairwise run the position bias (first-position wins, consistency across both orders)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, help="The judge run.")
        parser.add_argument("--format", choices=["json"], default="json")
        parser.add_argument(
            "--detail", action="store_true", help="Every figure (p-values, intervals, widest items), as the API gives."
        )
        parser.add_argument(
            "--start-paraphrases",
            action="store_true",
            help="Start the run again under the three built-in paraphrases of its prompt; prints their run ids.",
        )
        parser.add_argument(
            "--confirm-cost",
            action="store_true",
            help="With --start-paraphrases: start them although their estimated cost is above EVAL_COST_CONFIRM_USD.",
        )

    def handle(self, *args, run, format, detail, start_paraphrases, confirm_cost, **options):
        judge = Run.objects.select_related("model", "prompt", "source_run__model").filter(pk=run).first()
        if judge is None:
            raise CommandError(f"no run {run}")
        if judge.kind != RunKind.JUDGE:
            raise CommandError(f"run {run} is a {judge.kind} run, not a judge run")
        if start_paraphrases:
            try:
                runs = judge_paraphrases_start(judge=judge, confirm_cost=confirm_cost)
            except ValidationError as exc:
                raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
            for started in runs:
                self.stdout.write(str(started.pk))
            return
        report = judge_bias(run=judge)
        self.stdout.write(
            json.dumps(report if detail else cli_report(report), ensure_ascii=False, indent=2, allow_nan=False)
        )
