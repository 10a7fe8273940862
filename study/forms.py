"""Django forms of the study app, for validating input to its views."""

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin
from llm.selectors import model_choices


class StudyImportForm(IdempotentFormMixin, forms.Form):
    package = forms.FileField(
        label=_("Study package"),
        help_text=_("A .zip holding study.json and the images, at its root or in one top-level folder."),
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,application/zip"}),
    )

    def clean_package(self):
        upload = self.cleaned_data["package"]
        if not upload.name.lower().endswith(".zip"):
            raise forms.ValidationError(_("Upload a .zip file."))
        # Refused before it is read; the service applies the same limit.
        limit = settings.VIVID_IMPORT_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                _("The file is %(size)s bytes; the limit is %(limit)s bytes.")
                % {"size": f"{upload.size:,}", "limit": f"{limit:,}"}
            )
        return upload


class StudyTransitionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[
            ("launch", _("Launch")),
            ("pause", _("Pause")),
            ("resume", _("Resume")),
            ("close", _("Close")),
            ("delete", _("Delete")),
        ]
    )


# The terms page: one row's edit, a researcher's new term, the similarity threshold, the model that finds terms.


class TermEditForm(forms.Form):
    zh = forms.CharField(label=_("Chinese label"), max_length=200, required=False)
    wikidata = forms.CharField(label=_("Wikidata item"), max_length=20, required=False)


class TermAddForm(forms.Form):
    term = forms.CharField(label=_("English term"), max_length=200)
    zh = forms.CharField(label=_("Chinese label"), max_length=200)
    wikidata = forms.CharField(label=_("Wikidata item (optional)"), max_length=20, required=False)


class ThresholdForm(forms.Form):
    threshold = forms.FloatField(label=_("Similarity threshold"), min_value=0.01, max_value=1.0)


class TermModelForm(forms.Form):
    term_model = forms.ModelChoiceField(label=_("Model"), queryset=None, empty_label=None, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["term_model"].queryset = model_choices()


# The participant pages: what a page's form sent, as a QueryDict (a browser's POST) or a dict of
# lists (synthetic participants in-process); the services read a page's answers through these.


def form_values(data, name: str) -> list[str]:
    """Every value sent under ``name``."""
    if hasattr(data, "getlist"):
        return data.getlist(name)
    value = data.get(name, [])
    return list(value) if isinstance(value, (list, tuple)) else [value]


def form_value(data, name: str) -> str:
    """The first value sent under ``name``, or ""."""
    values = form_values(data, name)
    return values[0] if values else ""
