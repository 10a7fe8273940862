"""Forms of the judge bias diagnostics: start a run's paraphrases, start a pairwise run."""

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin
from llm.selectors import model_choices

from ..selectors.bias import paraphrase_prompt_choices
from ..selectors.runs import generation_runs


class ParaphraseStartForm(IdempotentFormMixin, forms.Form):
    """Start the judge run again under other wordings: the built-in paraphrases, or the researcher's own."""

    prompts = forms.ModelMultipleChoiceField(
        label=_("Wordings"),
        queryset=paraphrase_prompt_choices(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Empty: the three built-in paraphrases of the strategy's prompt (ours)."),
    )
    confirm_cost = forms.BooleanField(
        label=_("I confirm the estimated cost"),
        required=False,
        help_text=_("Needed when the estimate is above the threshold set for this server."),
    )

    def __init__(self, *args, judge=None, **kwargs):
        super().__init__(*args, **kwargs)
        if judge is not None:
            self.fields["prompts"].queryset = paraphrase_prompt_choices().exclude(pk=judge.prompt_id)
        self.fields["prompts"].label_from_instance = lambda prompt: (
            f"{prompt.name} ({prompt.content_hash[:8]}){' · ' + str(_('ours')) if prompt.ours else ''}"
        )


def _run_label(run) -> str:
    return f"#{run.pk} · {run.model.name} · {run.strategy} · {run.dataset.name} ({run.get_status_display()})"


class PairwiseRunForm(IdempotentFormMixin, forms.Form):
    run_a = forms.ModelChoiceField(label=_("Generation run A"), queryset=generation_runs(), empty_label=None)
    run_b = forms.ModelChoiceField(label=_("Generation run B"), queryset=generation_runs(), empty_label=None)
    model = forms.ModelChoiceField(label=_("Judge model"), queryset=model_choices(), empty_label=None)
    seed = forms.IntegerField(label=_("Seed"), min_value=0, initial=0)
    limit = forms.IntegerField(
        label=_("Limit"), min_value=1, required=False, help_text=_("The first N idioms both runs explained.")
    )
    confirm_cost = forms.BooleanField(
        label=_("I confirm the estimated cost"),
        required=False,
        help_text=_("Needed when the estimate is above the threshold set for this server."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["run_a"].label_from_instance = _run_label
        self.fields["run_b"].label_from_instance = _run_label

    def clean(self):
        data = super().clean()
        if data.get("run_a") and data.get("run_a") == data.get("run_b"):
            self.add_error("run_b", _("Choose two different generation runs."))
        return data

    def run_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "run_a": data["run_a"],
            "run_b": data["run_b"],
            "model": data["model"],
            "params": {"seed": data["seed"]},
            "limit": data["limit"],
            "confirm_cost": data["confirm_cost"],
        }
