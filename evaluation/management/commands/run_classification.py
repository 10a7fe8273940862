from django.core.management.base import BaseCommand

from annotation.models import Dataset
from evaluation.models import RunKind
from llm.models import ModelConfig

from ._runs import SKIP_SYSTEM_CHECKS, add_common_arguments, add_cost_argument, prepare, wait_for
from .run_generation import lookup, start


class Command(BaseCommand):
    help = "Classify a dataset's idioms by topic or traits, 3-shot, exact match (VIVID Fig. 9-10). Prints the run id first."
    requires_system_checks = SKIP_SYSTEM_CHECKS

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--model", required=True)
        parser.add_argument("--task", required=True, choices=["topic", "traits"])
        parser.add_argument("--limit", type=int)
        parser.add_argument("--seed", type=int, default=0, help="Chooses the three demonstrations.")
        add_common_arguments(parser)
        add_cost_argument(parser)

    def handle(self, *args, **o):
        prepare(o)
        run = start(
            self,
            kind=RunKind.CLASSIFICATION,
            model=lookup(ModelConfig, "name", o["model"], "model"),
            prompt_name=o["task"],
            dataset=lookup(Dataset, "name", o["dataset"], "dataset"),
            params={"seed": o["seed"]},
            limit=o["limit"],
            confirm_cost=o["confirm_cost"],
        )
        if o["wait"]:
            wait_for(self, run)
