from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Run
from evaluation.services.bias import pairwise_run_start
from llm.models import ModelConfig

from ._runs import SKIP_SYSTEM_CHECKS, add_common_arguments, add_cost_argument, prepare, wait_for
from .run_generation import lookup


class Command(BaseCommand):
    help = (
        "Compare two generation runs with a pairwise judge, each idiom asked in both orders (position swap). "
        "Prints the run id first."
    )
    requires_system_checks = SKIP_SYSTEM_CHECKS

    def add_arguments(self, parser):
        parser.add_argument("--a", type=int, required=True, help="The first generation run.")
        parser.add_argument("--b", type=int, required=True, help="The second generation run.")
        parser.add_argument("--judge", required=True, help="The judge model's name.")
        parser.add_argument("--limit", type=int, help="The first N idioms both runs explained.")
        parser.add_argument("--seed", type=int, default=0)
        add_common_arguments(parser)
        add_cost_argument(parser)

    def handle(self, *args, **o):
        prepare(o)
        runs = {}
        for side in ("a", "b"):
            runs[side] = Run.objects.filter(pk=o[side]).first()
            if runs[side] is None:
                raise CommandError(f"no run {o[side]}")
        try:
            run = pairwise_run_start(
                run_a=runs["a"],
                run_b=runs["b"],
                model=lookup(ModelConfig, "name", o["judge"], "model"),
                params={"seed": o["seed"]},
                limit=o["limit"],
                confirm_cost=o["confirm_cost"],
            )
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        self.stdout.write(str(run.pk))
        if o["wait"]:
            wait_for(self, run)
