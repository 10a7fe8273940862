from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from artworks.models import ArtworkCollection
from artworks.selectors.pipeline import artwork_run_progress, artwork_run_usage
from artworks.services.pipeline import artwork_run_execute, artwork_run_start
from llm.models import ModelConfig, RunStatus
from llm.services import CostNotConfirmed, estimate_text


def lookup(model_cls, value: str, label: str):
    found = model_cls.objects.filter(name=value).first()
    if found is None:
        raise CommandError(f"no {label} named '{value}'")
    return found


class Command(BaseCommand):
    help = (
        "Run the artwork pipeline of Pragmatics Meets Culture on a collection: every step not done yet. "
        "Prints the run id first."
    )

    def add_arguments(self, parser):
        parser.add_argument("--collection", required=True)
        parser.add_argument("--speaker", required=True, help="A model name (python manage.py add_model ...).")
        parser.add_argument("--listener", required=True, help="A model name; the paper uses a different model.")
        parser.add_argument(
            "--builder",
            help="A model name for the symbols, background and questions "
            "(default: the speaker); the paper used GPT-5 for these.",
        )
        parser.add_argument("--samples", type=int, default=10, help="Pragmatic speaker samples (default 10).")
        parser.add_argument("--limit", type=int, help="Only the first N artworks.")
        parser.add_argument(
            "--lambda",
            dest="lam",
            type=float,
            default=0.0,
            help="Eq 5: weight of the description's likelihood (default 0, Eq 4).",
        )
        parser.add_argument("--groups", default="american,chinese", help="Listener groups, comma-separated.")
        parser.add_argument("--max-tokens", type=int, help="Cap every request's max_tokens (a slow local model).")
        parser.add_argument(
            "--wait", action="store_true", help="Execute in this process with a progress bar, then print a summary."
        )
        parser.add_argument(
            "--confirm-cost",
            action="store_true",
            help="Start the run although its estimated cost is above EVAL_COST_CONFIRM_USD (without it the "
            "command prints the estimate and exits 1).",
        )

    def handle(self, *args, **o):
        collection = lookup(ArtworkCollection, o["collection"], "collection")
        speaker = lookup(ModelConfig, o["speaker"], "model")
        listener = lookup(ModelConfig, o["listener"], "model")
        builder = lookup(ModelConfig, o["builder"], "model") if o["builder"] else None
        try:
            run = artwork_run_start(
                collection=collection,
                speaker=speaker,
                listener=listener,
                builder=builder,
                samples=o["samples"],
                lam=o["lam"],
                limit=o["limit"],
                groups=o["groups"].split(","),
                max_tokens=o["max_tokens"],
                enqueue=not o["wait"],
                confirm_cost=o["confirm_cost"],
            )
        except CostNotConfirmed as exc:
            raise CommandError(f"{estimate_text(exc.estimate)} Pass --confirm-cost to start it.") from None
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        self.stdout.write(str(run.pk))
        self.stdout.flush()
        self.stderr.write(f"{estimate_text(run.estimate)} Input tokens: {run.estimate.get('method', '')}.")
        if not o["wait"]:
            return
        total = artwork_run_progress(run=run)["n_items"]
        with tqdm(total=total, unit="item", file=self.stderr._out, dynamic_ncols=True) as bar:
            run = artwork_run_execute(run_id=run.pk, progress=lambda item: bar.update(1))
        progress = artwork_run_progress(run=run)
        for step in progress["steps"]:
            self.stdout.write(f"{step['label']}: {step['done']} done, {step['failed']} failed")
        failed = run.items.filter(status="failed").select_related("artwork")[:10]
        for item in failed:
            self.stdout.write(f"  failed {item.artwork.key} {item.step} {item.group}: {item.error[:200]}")
        used = artwork_run_usage(run=run)
        cost = "unknown (price unknown)" if used["cost"] is None else f"US${used['cost']:.4f}"
        self.stdout.write(
            f"run {run.pk} {run.status}: {used['tokens_in']} tokens in, {used['tokens_out']} out, cost {cost}"
        )
        if run.status != RunStatus.DONE:
            raise CommandError(f"run {run.pk} ended {run.status}{': ' + run.error if run.error else ''}")
