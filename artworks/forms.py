"""Forms of the artwork pages (collections, pipeline runs): they only parse input; the services validate and write.

The create forms carry an idempotency key, so a double submit imports or starts once."""

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin
from llm.selectors import model_choices

from .models import DISTRACTORS, ArtworkQuestionType
from .selectors.collections import collection_choices


class CollectionImportForm(IdempotentFormMixin, forms.Form):
    name = forms.CharField(label=_("Collection name"), max_length=200, help_text=_("A new name."))
    file = forms.FileField(
        label=_("Zip file"),
        help_text=_("A .zip holding artworks.csv or artworks.jsonl and the images it names."),
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,application/zip"}),
    )


class ElementForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    is_symbol = forms.BooleanField(required=False)
    meaning = forms.CharField(required=False)


class QuestionForm(forms.Form):
    type = forms.ChoiceField(choices=ArtworkQuestionType.choices)
    symbol = forms.CharField(max_length=200, required=False)
    question = forms.CharField(required=False)
    answer = forms.CharField(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for n in range(1, DISTRACTORS + 1):
            self.fields[f"distractor_{n}"] = forms.CharField(required=False)

    def distractors(self) -> list[str]:
        return [self.cleaned_data.get(f"distractor_{n}", "") for n in range(1, DISTRACTORS + 1)]


class BackgroundForm(forms.Form):
    background = forms.CharField(required=False)


class ArtworkRunForm(IdempotentFormMixin, forms.Form):
    collection = forms.ModelChoiceField(queryset=collection_choices(), label=_("Collection"))
    speaker = forms.ModelChoiceField(
        queryset=model_choices(),
        label=_("Speaker model"),
        help_text=_("Writes the descriptions."),
    )
    listener = forms.ModelChoiceField(
        queryset=model_choices(),
        label=_("Listener model"),
        help_text=_("The simulated listener; the paper uses another model."),
    )
    builder = forms.ModelChoiceField(
        queryset=model_choices(),
        required=False,
        label=_("Question builder model"),
        help_text=_("Builds the symbols, background and questions the artworks do not have yet; empty: the speaker."),
    )
    samples = forms.IntegerField(min_value=1, max_value=50, initial=10, label=_("Pragmatic samples"))
    lam = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0.0,
        label=_("Lambda (Eq. 5)"),
        help_text=_("Weight of the description's own likelihood; 0 is Eq. 4."),
    )
    limit = forms.IntegerField(min_value=1, required=False, label=_("Only the first N artworks"))
    confirm_cost = forms.BooleanField(
        label=_("I confirm the estimated cost"),
        required=False,
        help_text=_("Needed when the estimate is above the threshold set for this server."),
    )
