from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset, DatasetVersion
from evaluation.models import ModelConfig, RunKind
from evaluation.services import run_start

from ._runs import SKIP_SYSTEM_CHECKS, add_common_arguments, prepare, wait_for


def lookup(model_cls, field: str, value: str, label: str):
    found = model_cls.objects.filter(**{field: value}).first()
    if found is None:
        raise CommandError(f"no {label} named '{value}'")
    return found


def start(command, **kwargs):
    try:
        run = run_start(**kwargs)
    except ValidationError as exc:
        raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
    command.stdout.write(str(run.pk))
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
        )
        if o["wait"]:
            wait_for(self, run)
