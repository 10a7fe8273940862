"""Forms of the model registry. They validate input only; the services decide."""

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin

from ..models import MAX_CONCURRENCY, REGISTRABLE_PROVIDERS

CAPABILITY_CHOICES = [("", _("Unknown")), ("yes", _("Yes")), ("no", _("No"))]


def _capability(value: str) -> bool | None:
    return {"yes": True, "no": False}.get(value)


class ModelAddForm(IdempotentFormMixin, forms.Form):
    name = forms.SlugField(
        label=_("Name"), max_length=100, help_text=_("Short and unique, e.g. “gpt-4o-mini” or “local-qwen”.")
    )
    provider = forms.ChoiceField(label=_("Provider"), choices=REGISTRABLE_PROVIDERS)
    model_id = forms.CharField(
        label=_("Model id"),
        max_length=500,
        help_text=_("The model name at the endpoint, or a local path for transformers."),
    )
    base_url = forms.URLField(
        label=_("Base URL"),
        max_length=500,
        required=False,
        assume_scheme="https",
        help_text=_("An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1. Empty for a local model."),
    )
    api_key_env = forms.CharField(
        label=_("API key environment variable"),
        max_length=100,
        required=False,
        help_text=_("The NAME of the variable that holds the key, e.g. OPENAI_API_KEY. Never paste the key itself."),
    )
    max_concurrency = forms.IntegerField(
        label=_("Max concurrent requests"),
        min_value=1,
        max_value=MAX_CONCURRENCY,
        initial=4,
        help_text=_("Across every worker together."),
    )
    requests_per_minute = forms.IntegerField(
        label=_("Requests per minute"), min_value=1, required=False, help_text=_("Empty for no limit.")
    )
    timeout = forms.FloatField(label=_("Timeout (seconds)"), min_value=0.1, initial=60.0)
    supports_vision = forms.TypedChoiceField(
        label=_("Image input"),
        choices=CAPABILITY_CHOICES,
        coerce=_capability,
        empty_value=None,
        required=False,
        help_text=_("Images go only to a model that takes them. Unknown until probed: manage.py probe_model NAME."),
    )
    supports_logprobs = forms.TypedChoiceField(
        label=_("Token log-probabilities"),
        choices=CAPABILITY_CHOICES,
        coerce=_capability,
        empty_value=None,
        required=False,
        help_text=_("The artwork pipeline needs them; a run is refused on a model known to give none."),
    )
    context_length = forms.IntegerField(label=_("Context length (tokens)"), min_value=1, required=False)
    price_input = forms.FloatField(
        label=_("Price of input tokens"), min_value=0, required=False, help_text=_("US dollars per million tokens.")
    )
    price_output = forms.FloatField(
        label=_("Price of output tokens"), min_value=0, required=False, help_text=_("US dollars per million tokens.")
    )

    def clean_api_key_env(self):
        return self.cleaned_data["api_key_env"].strip()
