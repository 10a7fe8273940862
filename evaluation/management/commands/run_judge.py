from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Run, RunKind
from evaluation.prompts import JUDGE_STRATEGIES
from llm.models import ModelConfig

from ._runs import SKIP_SYSTEM_CHECKS, add_common_arguments, add_cost_argument, prepare, wait_for
from .run_generation import lookup, start


class Command(BaseCommand):
    help = "Score a generation run with an LLM judge (temperature 0). Prints the run id first."
    requires_system_checks = SKIP_SYSTEM_CHECKS

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, help="The generation run to judge.")
        parser.add_argument("--judge", required=True, help="The judge model's name.")
        parser.add_argument("--strategy", required=True, choices=JUDGE_STRATEGIES)
        parser.add_argument("--limit", type=int)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--max-tokens",
            type=int,
            help="Tokens per reply (default 10, 400 for cot): raise it when the run page says replies were cut off.",
        )
        add_common_arguments(parser)
        add_cost_argument(parser)

    def handle(self, *args, **o):
        prepare(o)
        if o["max_tokens"] is not None and not 1 <= o["max_tokens"] <= 8192:
            raise CommandError("--max-tokens is between 1 and 8192")
        source = Run.objects.filter(pk=o["run"]).first()
        if source is None:
            raise CommandError(f"no run {o['run']}")
        run = start(
            self,
            kind=RunKind.JUDGE,
            model=lookup(ModelConfig, "name", o["judge"], "model"),
            prompt_name=o["strategy"],
            source_run=source,
            params={"seed": o["seed"], **({"max_tokens": o["max_tokens"]} if o["max_tokens"] else {})},
            limit=o["limit"],
            confirm_cost=o["confirm_cost"],
        )
        if o["wait"]:
            wait_for(self, run)
