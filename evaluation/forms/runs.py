"""Forms of the run pages and the results filter. They validate input only; the services decide."""

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin
from llm.selectors import model_choices

from ..harness_logs import INSPECT, LM_EVAL, LOG_EXTENSIONS
from ..models import RunKind
from ..prompts import CLASSIFICATION_TASKS, GENERATION_PROMPTS, JUDGE_STRATEGIES
from ..selectors.runs import generation_runs, run_dataset_choices, run_version_choices
from ..services.runs import GENERATION_DEFAULTS


class _RunForm(IdempotentFormMixin, forms.Form):
    """Every run form carries an idempotency key so a double submit makes one run."""

    model = forms.ModelChoiceField(label=_("Model"), queryset=model_choices(), empty_label=None)
    limit = forms.IntegerField(
        label=_("Limit"), min_value=1, required=False, help_text=_("The first N items only; empty for all.")
    )
    seed = forms.IntegerField(label=_("Seed"), min_value=0, initial=0)
    confirm_cost = forms.BooleanField(
        label=_("I confirm the estimated cost"),
        required=False,
        help_text=_("Needed when the estimate is above the threshold set for this server."),
    )


class GenerationRunForm(_RunForm):
    kind = RunKind.GENERATION
    prompt = forms.ChoiceField(label=_("Prompt"), choices=[(p, p) for p in GENERATION_PROMPTS], initial="zero-shot")
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=run_dataset_choices(), required=False)
    version = forms.ModelChoiceField(
        label=_("Or a frozen version"),
        queryset=run_version_choices(),
        required=False,
        help_text=_("A frozen version wins over the dataset."),
    )
    temperature = forms.FloatField(
        label=_("Temperature"), min_value=0.0, max_value=2.0, initial=GENERATION_DEFAULTS["temperature"]
    )
    max_tokens = forms.IntegerField(
        label=_("Max tokens"), min_value=1, max_value=8192, initial=GENERATION_DEFAULTS["max_tokens"]
    )
    field_order = [
        "idempotency_key",
        "model",
        "prompt",
        "dataset",
        "version",
        "temperature",
        "max_tokens",
        "seed",
        "limit",
    ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # A newcomer with one dataset (the demo's) should not be told to choose it.
        choices = list(self.fields["dataset"].queryset[:2])
        if len(choices) == 1 and "dataset" not in self.initial:
            self.initial["dataset"] = choices[0].pk

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
        queryset=generation_runs(),
        empty_label=None,
        help_text=_("Its done items are judged."),
    )
    strategy = forms.ChoiceField(label=_("Strategy"), choices=[(s, s) for s in JUDGE_STRATEGIES], initial="aspect")
    field_order = ["idempotency_key", "source_run", "model", "strategy", "seed", "limit"]

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
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=run_dataset_choices(), empty_label=None)
    field_order = ["idempotency_key", "model", "task", "dataset", "seed", "limit"]

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


class RunRerunForm(IdempotentFormMixin, forms.Form):
    """A judge run again with a larger max_tokens (its replies were cut off)."""

    max_tokens = forms.IntegerField(label=_("Max tokens per reply"), min_value=1, max_value=8192)
    confirm_cost = forms.BooleanField(
        label=_("I confirm the estimated cost"),
        required=False,
        help_text=_("Needed when the estimate is above the threshold set for this server."),
    )


class RunImportForm(forms.Form):
    """A harness log to import as a run; the service parses it (the size and extension are checked here)."""

    format = forms.ChoiceField(
        label=_("Format"),
        choices=[(LM_EVAL, _("lm-eval samples (.jsonl)")), (INSPECT, _("Inspect log (.eval or .json)"))],
    )
    file = forms.FileField(
        label=_("Log file"),
        help_text=_("lm-eval's samples_vivid_<task>_*.jsonl (--log_samples), or an Inspect .eval or .json log."),
        widget=forms.ClearableFileInput(attrs={"accept": ".jsonl,.json,.eval"}),
    )
    model = forms.ModelChoiceField(
        label=_("Model"),
        queryset=model_choices(),
        required=False,
        help_text=_("Empty: the model the log names, registered as imported (it is never called)."),
    )

    def clean(self):
        data = super().clean()
        upload, fmt = data.get("file"), data.get("format")
        if upload is None or fmt is None:
            return data
        allowed = LOG_EXTENSIONS[fmt]
        if not upload.name.lower().endswith(allowed):
            self.add_error(
                "file",
                _("%(name)s: a %(format)s log ends in %(allowed)s")
                % {"name": upload.name, "format": fmt, "allowed": " or ".join(allowed)},
            )
        limit = settings.VIVID_IMPORT_MAX_BYTES
        if upload.size > limit:
            self.add_error(
                "file",
                _("%(name)s is %(size)s bytes; the limit is %(limit)s bytes")
                % {"name": upload.name, "size": f"{upload.size:,}", "limit": f"{limit:,}"},
            )
        return data


RUN_FORMS = {
    RunKind.GENERATION: GenerationRunForm,
    RunKind.JUDGE: JudgeRunForm,
    RunKind.CLASSIFICATION: ClassificationRunForm,
}


class ResultsFilterForm(forms.Form):
    judge_model = forms.ModelChoiceField(
        label=_("Judge model"),
        queryset=model_choices(),
        required=False,
        empty_label=_("Any judge"),
    )
    strategy = forms.ChoiceField(
        label=_("Judge strategy"), choices=[(s, s) for s in JUDGE_STRATEGIES], required=False, initial="aspect"
    )

    def clean_strategy(self):
        return self.cleaned_data["strategy"] or "aspect"
