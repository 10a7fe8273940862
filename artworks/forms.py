"""Forms of the artwork collection pages: they only parse input; the services validate and write."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import ArtworkQuestionType
from .services.editing import DISTRACTORS


class CollectionImportForm(forms.Form):
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
