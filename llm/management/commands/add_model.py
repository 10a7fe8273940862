from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from llm.models import Provider
from llm.services import model_add


class Command(BaseCommand):
    help = "Register a model: an OpenAI-compatible endpoint or a local transformers model."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--provider", required=True, choices=Provider.values)
        parser.add_argument("--base-url", default="")
        parser.add_argument("--model-id", required=True)
        parser.add_argument("--api-key-env", default="", help="NAME of the environment variable holding the key.")
        parser.add_argument("--max-concurrency", type=int, default=4)
        parser.add_argument("--rpm", type=int, default=None, help="Requests per minute, across all workers.")
        parser.add_argument("--timeout", type=float, default=60.0, help="Seconds per request.")
        parser.add_argument(
            "--vision", choices=["yes", "no"], help="Takes image input (default: unknown until probe_model)."
        )
        parser.add_argument("--logprobs", choices=["yes", "no"], help="Returns token log-probabilities.")
        parser.add_argument("--context-length", type=int, help="Tokens of context.")
        parser.add_argument("--price-input", type=float, help="US dollars per million input tokens.")
        parser.add_argument("--price-output", type=float, help="US dollars per million output tokens.")

    def handle(self, *args, **o):
        try:
            model = model_add(
                name=o["name"],
                provider=o["provider"],
                model_id=o["model_id"],
                base_url=o["base_url"],
                api_key_env=o["api_key_env"],
                max_concurrency=o["max_concurrency"],
                requests_per_minute=o["rpm"],
                timeout=o["timeout"],
                supports_vision={"yes": True, "no": False}.get(o["vision"]),
                supports_logprobs={"yes": True, "no": False}.get(o["logprobs"]),
                context_length=o["context_length"],
                price_input=o["price_input"],
                price_output=o["price_output"],
            )
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        self.stdout.write(f"model {model.name} added ({model.provider}, {model.model_id})")
