from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset, DatasetVersion
from evaluation.models import RunKind
from evaluation.services.runs.cost import run_start
from llm.models import ModelConfig
from llm.services import CostNotConfirmed, estimate_text

from ._runs import SKIP_SYSTEM_CHECKS, add_common_arguments, add_cost_argument, prepare, wait_for


def lookup(model_cls, field: str, value: str, label: str):
    found = model_cls.objects.filter(**{field: value}).first()
    if found is None:
        raise CommandError(f"no {label} named '{value}'")
    return found


def start(command, *, confirm_cost: bool = False, **kwargs):
    """Start the run and print its id first; its estimate goes to stderr. Above the cost threshold
    without ``confirm_cost`` nothing starts and the command exits 1 with the estimate."""
    try:
        run = run_start(confirm_cost=confirm_cost, **kwargs)
    except CostNotConfirmed as exc:
        raise CommandError(f"{estimate_text(exc.estimate)} Pass --confirm-cost to start it.") from None
    except ValidationError as exc:
        raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
    command.stdout.write(str(run.pk))
    if run.estimate:
        command.stderr.write(f"{estimate_text(run.estimate)} Input tokens: {run.estimate.get('method', '')}.")
    return run


class Command(BaseCommand):
    help = "Generate explanations of a dataset's idioms with a model (VIVID Fig. 5 or 6). Prints the run id first."
    requires_system_checks = SKIP_SYSTEM_CHECKS

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--dataset")
        source.add_argument(
            "--frozen-version", dest="frozen_version", help="A frozen dataset version instead of a dataset."
        )
        parser.add_argument("--model", required=True)
        parser.add_argument("--prompt", required=True, choices=["zero-shot", "few-shot"])
        parser.add_argument("--limit", type=int)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--temperature", type=float, default=0.7)
        parser.add_argument("--max-tokens", type=int, default=150)
        add_common_arguments(parser)
        add_cost_argument(parser)

    def handle(self, *args, **o):
        prepare(o)
        run = start(
            self,
            kind=RunKind.GENERATION,
            model=lookup(ModelConfig, "name", o["model"], "model"),
            prompt_name=o["prompt"],
            dataset=lookup(Dataset, "name", o["dataset"], "dataset") if o["dataset"] else None,
            version=lookup(DatasetVersion, "name", o["frozen_version"], "version") if o["frozen_version"] else None,
            params={"temperature": o["temperature"], "max_tokens": o["max_tokens"], "seed": o["seed"]},
            limit=o["limit"],
            confirm_cost=o["confirm_cost"],
        )
        if o["wait"]:
            wait_for(self, run)
