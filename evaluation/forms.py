"""Forms of the evaluation pages. They validate input only; the services decide."""

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import Dataset, DatasetVersion

from .models import MAX_CONCURRENCY, ModelConfig, PromptKind, Provider, Run, RunKind
from .services.runs import CLASSIFICATION_TASKS, GENERATION_DEFAULTS, GENERATION_PROMPTS, JUDGE_STRATEGIES

ROLES = ("system", "user", "assistant")


class ModelAddForm(forms.Form):
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


class _RunForm(forms.Form):
    """Every run form carries an idempotency token so a double submit makes one run."""

    token = forms.CharField(widget=forms.HiddenInput)
    model = forms.ModelChoiceField(label=_("Model"), queryset=ModelConfig.objects.order_by("name"), empty_label=None)
    limit = forms.IntegerField(
        label=_("Limit"), min_value=1, required=False, help_text=_("The first N items only; empty for all.")
    )
    seed = forms.IntegerField(label=_("Seed"), min_value=0, initial=0)


class GenerationRunForm(_RunForm):
    kind = RunKind.GENERATION
    prompt = forms.ChoiceField(label=_("Prompt"), choices=[(p, p) for p in GENERATION_PROMPTS], initial="zero-shot")
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=Dataset.objects.order_by("name"), required=False)
    version = forms.ModelChoiceField(
        label=_("Or a frozen version"),
        queryset=DatasetVersion.objects.select_related("round__dataset").order_by("-pk"),
        required=False,
        help_text=_("A frozen version wins over the dataset."),
    )
    temperature = forms.FloatField(
        label=_("Temperature"), min_value=0.0, max_value=2.0, initial=GENERATION_DEFAULTS["temperature"]
    )
    max_tokens = forms.IntegerField(
        label=_("Max tokens"), min_value=1, max_value=8192, initial=GENERATION_DEFAULTS["max_tokens"]
    )
    field_order = ["token", "model", "prompt", "dataset", "version", "temperature", "max_tokens", "seed", "limit"]

    def clean(self):
        data = super().clean()
        if not data.get("dataset") and not data.get("version"):
            self.add_error("dataset", _("Choose a dataset or a frozen version."))
        return data

    def run_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "kind": self.kind,
            "model": data["model"],
            "prompt_name": data["prompt"],
            "dataset": data["dataset"],
            "version": data["version"],
            "params": {"temperature": data["temperature"], "max_tokens": data["max_tokens"], "seed": data["seed"]},
            "limit": data["limit"],
        }


class JudgeRunForm(_RunForm):
    kind = RunKind.JUDGE
    source_run = forms.ModelChoiceField(
        label=_("Generation run"),
        queryset=Run.objects.filter(kind=RunKind.GENERATION).select_related("model", "dataset"),
        empty_label=None,
        help_text=_("Its done items are judged."),
    )
    strategy = forms.ChoiceField(label=_("Strategy"), choices=[(s, s) for s in JUDGE_STRATEGIES], initial="aspect")
    field_order = ["token", "source_run", "model", "strategy", "seed", "limit"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].label = _("Judge model")
        self.fields["source_run"].label_from_instance = lambda run: (
            f"#{run.pk} · {run.model.name} · {run.strategy} · {run.dataset.name} ({run.get_status_display()})"
        )

    def run_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "kind": self.kind,
            "model": data["model"],
            "prompt_name": data["strategy"],
            "source_run": data["source_run"],
            "params": {"seed": data["seed"]},
            "limit": data["limit"],
        }


class ClassificationRunForm(_RunForm):
    kind = RunKind.CLASSIFICATION
    task = forms.ChoiceField(label=_("Task"), choices=[(t, t) for t in CLASSIFICATION_TASKS], initial="topic")
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=Dataset.objects.order_by("name"), empty_label=None)
    field_order = ["token", "model", "task", "dataset", "seed", "limit"]

    def run_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "kind": self.kind,
            "model": data["model"],
            "prompt_name": data["task"],
            "dataset": data["dataset"],
            "params": {"seed": data["seed"]},
            "limit": data["limit"],
        }


RUN_FORMS = {
    RunKind.GENERATION: GenerationRunForm,
    RunKind.JUDGE: JudgeRunForm,
    RunKind.CLASSIFICATION: ClassificationRunForm,
}


class ResultsFilterForm(forms.Form):
    judge_model = forms.ModelChoiceField(
        label=_("Judge model"),
        queryset=ModelConfig.objects.order_by("name"),
        required=False,
        empty_label=_("Any judge"),
    )
    strategy = forms.ChoiceField(
        label=_("Judge strategy"), choices=[(s, s) for s in JUDGE_STRATEGIES], required=False, initial="aspect"
    )

    def clean_strategy(self):
        return self.cleaned_data["strategy"] or "aspect"
