"""Forms of the corpus pages. They validate input only; views pass the cleaned data to services."""

from pathlib import PurePath

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin
from core.localization import localized_name
from core.tables import SUPPORTED_EXTENSIONS

from .. import services
from ..models import ExpressionKind
from ..selectors.corpus import dataset_choices

# Labels of the column-mapping inputs; keyed by the service's field names so a
# new field in services.KNOWN_FIELDS without a label here fails loudly in tests.
FIELD_LABELS = {
    "expression": _("Expression"),
    "explanation": _("Explanation"),
    "kind": _("Kind"),
    "source": _("Source"),
    "id": _("Identifier"),
    "traits": _("Traits"),
    "theme": _("Theme"),
}


class ImportForm(IdempotentFormMixin, forms.Form):
    dataset_name = forms.CharField(
        label=_("Dataset"),
        max_length=200,
        # The template supplies the <datalist> of existing datasets.
        widget=forms.TextInput(attrs={"list": "dataset-names", "autocomplete": "off"}),
        help_text=_("Pick an existing dataset or type a new name; a new dataset is created on import."),
    )
    file = forms.FileField(
        label=_("File"),
        help_text=_("CSV, TSV, JSON, JSONL or XLSX, encoded in UTF-8."),
        widget=forms.ClearableFileInput(attrs={"accept": ",".join(SUPPORTED_EXTENSIONS)}),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in services.KNOWN_FIELDS:
            self.fields[f"map_{name}"] = forms.CharField(
                label=FIELD_LABELS[name],
                required=False,
                max_length=200,
                widget=forms.TextInput(attrs={"placeholder": name}),
            )

    def mapping_fields(self):
        return [self[f"map_{name}"] for name in services.KNOWN_FIELDS]

    def has_mapping(self) -> bool:
        """Whether any column mapping was typed, so a redisplayed form shows it instead of hiding it."""
        return any((field.value() or "").strip() for field in self.mapping_fields())

    def clean_dataset_name(self):
        name = self.cleaned_data["dataset_name"].strip()
        if not name:
            raise forms.ValidationError(_("A dataset name is required."))
        return name

    def clean_file(self):
        upload = self.cleaned_data["file"]
        extension = PurePath(upload.name).suffix.lower()
        # Checked here as well as in the service so a wrong file never leaves a
        # failed job behind and the error sits next to the file input.
        if extension not in SUPPORTED_EXTENSIONS:
            raise forms.ValidationError(
                _("“%(name)s” is not a supported file; use one of %(extensions)s."),
                params={"name": upload.name, "extensions": ", ".join(SUPPORTED_EXTENSIONS)},
            )
        return upload

    def column_map(self) -> dict[str, str]:
        """{field: column in the file}, leaving out fields whose column has the field's own name."""
        mapping = {}
        for name in services.KNOWN_FIELDS:
            column = self.cleaned_data.get(f"map_{name}", "").strip()
            if column:
                mapping[name] = column
        return mapping


class ImportRetargetForm(forms.Form):
    """The near-match a previewed import should go into instead of a new dataset."""

    # Only an existing dataset: the point is to stop creating look-alikes.
    dataset = forms.ModelChoiceField(queryset=dataset_choices(), to_field_name="name")


class ExpressionFilterForm(forms.Form):
    """The search and filters of a dataset page, read from the query string."""

    q = forms.CharField(
        label=_("Search"),
        required=False,
        max_length=200,
        widget=forms.SearchInput(attrs={"placeholder": _("Text or explanation")}),
    )
    trait = forms.ChoiceField(label=_("Trait"), required=False)
    theme = forms.ChoiceField(label=_("Theme"), required=False)
    kind = forms.ChoiceField(label=_("Kind"), required=False)

    def __init__(self, *args, traits, themes, gold: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["trait"].choices = [("", _("All traits"))] + [(t.code, localized_name(t)) for t in traits]
        self.fields["theme"].choices = [("", _("All themes"))] + [(t.code, localized_name(t)) for t in themes]
        self.fields["kind"].choices = [("", _("All kinds")), *ExpressionKind.choices]
        if not gold:
            # Filtering by a gold label would reveal it as surely as showing it.
            del self.fields["trait"], self.fields["theme"]

    def filters(self) -> dict[str, str]:
        """The valid filters; an invalid value (a stale bookmark, a hand-edited URL) is dropped, not an error."""
        self.is_valid()
        cleaned = getattr(self, "cleaned_data", {})
        return {
            "search": (cleaned.get("q") or "").strip(),
            "trait": cleaned.get("trait") or "",
            "theme": cleaned.get("theme") or "",
            "kind": cleaned.get("kind") or "",
        }
