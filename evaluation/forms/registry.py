"""Forms of the model and prompt registry. They validate input only; the services decide."""

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin

from ..models import MAX_CONCURRENCY, PromptKind, Provider

ROLES = ("system", "user", "assistant")


CAPABILITY_CHOICES = [("", _("Unknown")), ("yes", _("Yes")), ("no", _("No"))]


def _capability(value: str) -> bool | None:
    return {"yes": True, "no": False}.get(value)


class ModelAddForm(IdempotentFormMixin, forms.Form):
    name = forms.SlugField(
        label=_("Name"), max_length=100, help_text=_("Short and unique, e.g. “gpt-4o-mini” or “local-qwen”.")
    )
    provider = forms.ChoiceField(label=_("Provider"), choices=Provider.choices)
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


def _parse_messages(raw: str) -> list[dict]:
    try:
        messages = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise forms.ValidationError(_("Not valid JSON: %(error)s"), params={"error": exc}) from exc
    if not isinstance(messages, list) or not messages:
        raise forms.ValidationError(_('A JSON list of {"role", "content"} objects.'))
    for message in messages:
        if (
            not isinstance(message, dict)
            or message.get("role") not in ROLES
            or not isinstance(message.get("content"), str)
        ):
            raise forms.ValidationError(_("Each message needs a role (system, user or assistant) and a text content."))
    return [{"role": m["role"], "content": m["content"]} for m in messages]


class PromptAddForm(forms.Form):
    name = forms.CharField(
        label=_("Name"), max_length=100, help_text=_("e.g. zero-shot, few-shot, aspect, cot, topic, traits.")
    )
    kind = forms.ChoiceField(label=_("Kind"), choices=PromptKind.choices)
    reference = forms.CharField(
        label=_("Reference"), max_length=300, required=False, help_text=_("Where the text comes from.")
    )
    system = forms.CharField(
        label=_("System message"), required=False, widget=forms.Textarea(attrs={"rows": 4, "lang": "vi"})
    )
    user_message = forms.CharField(
        label=_("User message"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "lang": "vi"}),
        help_text=_("Placeholders: {phrase}, {explanation}, {response} (judge)."),
    )
    messages_json = forms.CharField(
        label=_("Or the messages as JSON"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        help_text=_(
            'A list such as [{"role": "system", "content": "…"}, {"role": "user", "content": "…"}]; it wins over the two fields above.'
        ),
    )

    def clean(self):
        data = super().clean()
        raw = (data.get("messages_json") or "").strip()
        if raw:
            try:
                data["messages"] = _parse_messages(raw)
            except forms.ValidationError as exc:
                self.add_error("messages_json", exc)
            return data
        if not (data.get("user_message") or "").strip():
            self.add_error("user_message", _("Write the user message, or give the messages as JSON."))
            return data
        messages = [{"role": "system", "content": data["system"]}] if (data.get("system") or "").strip() else []
        data["messages"] = [*messages, {"role": "user", "content": data["user_message"]}]
        return data
