import json

from django.core.management.base import BaseCommand, CommandError

from llm.costs import prompt_counter
from llm.models import ModelConfig
from llm.providers import ProviderError
from llm.services.capabilities import model_probe


class Command(BaseCommand):
    help = (
        "Ask a registered model what it can do (image input, token log-probabilities, context length, the "
        "checkpoint it serves) with a few tiny requests, and store the answers on the models page."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="The model's name in the registry.")
        parser.add_argument("--json", action="store_true", help="Print what each probe found as JSON.")

    def handle(self, *args, name, **o):
        model = ModelConfig.objects.filter(name=name).first()
        if model is None:
            raise CommandError(f"no model named '{name}'")
        try:
            model = model_probe(model=model)
        except ProviderError as exc:
            raise CommandError(f"{name}: {exc}") from None
        if o["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "model": model.name,
                        "probed_at": model.probed_at.isoformat(),
                        "vision": model.supports_vision,
                        "logprobs": model.supports_logprobs,
                        "context_length": model.context_length,
                        "probe": model.probe,
                    },
                    ensure_ascii=False,
                    indent=2,
                )
            )
            return

        def word(value):
            return "unknown" if value is None else ("yes" if value else "no")

        for key, value in (
            ("vision", word(model.supports_vision)),
            ("logprobs", word(model.supports_logprobs)),
            ("context_length", model.context_length or "unknown"),
        ):
            detail = (model.probe.get(key) or {}).get("detail", "")
            self.stdout.write(f"{key}: {value}" + (f" ({detail})" if detail else ""))
        # What the cost estimate of its runs counts with now: the declared tokenizer only if it is installed here.
        self.stdout.write(f"input tokens: {prompt_counter(model).method}")
