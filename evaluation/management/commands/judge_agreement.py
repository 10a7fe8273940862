import json

from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Run, RunKind
from evaluation.selectors.exports import human_report_csv
from evaluation.selectors.report import human_report


class Command(BaseCommand):
    help = (
        "How far each judge run on a generation run is from the human scores: means, Cohen's kappa "
        "(unweighted, linear, quadratic), Kendall's tau-b, Spearman's rho, 95% bootstrap intervals, "
        "inter-rater reliability and judge self-agreement (VIVID §4.1.1, Table 1)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--run", type=int, required=True, help="The generation run the humans and the judges scored."
        )
        parser.add_argument("--format", choices=["json", "csv"], default="json")

    def handle(self, *args, run, format, **options):
        generation = Run.objects.select_related("model", "dataset").filter(pk=run).first()
        if generation is None:
            raise CommandError(f"no run {run}")
        if generation.kind != RunKind.GENERATION:
            hint = f"; it judges run {generation.source_run_id}" if generation.source_run_id else ""
            raise CommandError(f"run {run} is a {generation.kind} run, not a generation run{hint}")
        report = human_report(run=generation)
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2, allow_nan=False))
        else:
            self.stdout.write(human_report_csv(report), ending="")
