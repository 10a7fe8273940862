"""Forms of the researchers' pages: suggestions, rounds, freezing. They validate input only."""

from pathlib import PurePath

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin
from core.localization import localized_name
from core.tables import SUPPORTED_EXTENSIONS

from .. import services
from ..models import ExpressionKind, SuggestionSet
from ..selectors.corpus import dataset_choices, theme_list, trait_list
from ..selectors.rounds import ITEM_FILTER_KEYS, annotator_choices, suggestion_set_list

MAX_HIDDEN_PERCENT = round(services.MAX_HIDDEN_FRACTION * 100)


def _check_extension(upload):
    extension = PurePath(upload.name).suffix.lower()
    if extension not in SUPPORTED_EXTENSIONS:
        raise forms.ValidationError(
            _("“%(name)s” is not a supported file; use one of %(extensions)s."),
            params={"name": upload.name, "extensions": ", ".join(SUPPORTED_EXTENSIONS)},
        )
    return upload


class SuggestionImportForm(IdempotentFormMixin, forms.Form):
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=dataset_choices(), empty_label=None)
    name = forms.CharField(
        label=_("Name of the suggestion set"),
        max_length=200,
        help_text=_("Unique within the dataset, e.g. “gpt-4.1 run 1”."),
    )
    model_name = forms.CharField(label=_("Model"), max_length=200, help_text=_("The model that made the suggestions."))
    prompt_version = forms.CharField(
        label=_("Prompt version"), max_length=200, required=False, help_text=_("e.g. “Appendix B.2, v1”.")
    )
    file = forms.FileField(
        label=_("File"),
        help_text=_("CSV, TSV, JSON, JSONL or XLSX, encoded in UTF-8."),
        widget=forms.ClearableFileInput(attrs={"accept": ",".join(SUPPORTED_EXTENSIONS)}),
    )

    def clean_name(self):
        return self.cleaned_data["name"].strip()

    def clean_model_name(self):
        return self.cleaned_data["model_name"].strip()

    def clean_prompt_version(self):
        return self.cleaned_data["prompt_version"].strip()

    def clean_file(self):
        return _check_extension(self.cleaned_data["file"])


class RoundForm(IdempotentFormMixin, forms.Form):
    name = forms.CharField(label=_("Round name"), max_length=200)
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=dataset_choices(), empty_label=None)
    theme = forms.ChoiceField(label=_("Theme (in the dataset)"), required=False)
    trait = forms.ChoiceField(label=_("Trait (in the dataset)"), required=False)
    kind = forms.ChoiceField(label=_("Kind"), required=False)
    search = forms.CharField(
        label=_("Search"),
        required=False,
        max_length=200,
        widget=forms.SearchInput(attrs={"placeholder": _("Text or explanation")}),
    )
    not_in_other_round = forms.BooleanField(label=_("Only items not yet in another round"), required=False)
    annotators = forms.ModelMultipleChoiceField(
        label=_("Annotators"), queryset=annotator_choices(), widget=forms.CheckboxSelectMultiple
    )
    annotators_per_item = forms.IntegerField(label=_("Annotators per item"), min_value=1, max_value=10, initial=2)
    suggestion_set = forms.ModelChoiceField(
        label=_("Suggestion set"),
        queryset=SuggestionSet.objects.none(),
        required=False,
        empty_label=_("None: annotators label every trait themselves"),
    )
    hide_percent = forms.IntegerField(
        label=_("Hide suggestions from this share of items (%)"),
        min_value=0,
        max_value=MAX_HIDDEN_PERCENT,
        initial=0,
        help_text=_(
            "A random, recorded share of items shows no suggestions, so anchoring on the model can be measured."
        ),
    )
    seed = forms.IntegerField(
        label=_("Seed"),
        required=False,
        min_value=0,
        max_value=2**62,
        help_text=_("Optional. The same seed gives the same assignment; left empty, one is drawn and recorded."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["theme"].choices = [("", _("All themes"))] + [(t.code, localized_name(t)) for t in theme_list()]
        self.fields["trait"].choices = [("", _("All traits"))] + [(t.code, localized_name(t)) for t in trait_list()]
        self.fields["kind"].choices = [("", _("All kinds")), *ExpressionKind.choices]
        self.fields["annotators"].queryset = annotator_choices()
        self.fields["suggestion_set"].queryset = suggestion_set_list()
        self.fields["suggestion_set"].label_from_instance = lambda s: f"{s.dataset.name} · {s.name} ({s.model_name})"

    def clean(self):
        cleaned = super().clean()
        suggestion_set, per_item = cleaned.get("suggestion_set"), cleaned.get("annotators_per_item") or 1
        try:
            services.round_settings_check(
                dataset=cleaned.get("dataset"),
                annotators=list(cleaned.get("annotators") or []),
                annotators_per_item=per_item,
                suggestion_set=suggestion_set,
                hide_suggestions_fraction=(cleaned.get("hide_percent") or 0) / 100,
            )
        except ValidationError as exc:
            # The service's rule, in the words of this form and on its fields.
            words = {
                "suggestion_set": ("suggestion_set", _("This suggestion set belongs to another dataset.")),
                "hide_suggestions_fraction": ("hide_percent", _("Hiding suggestions needs a suggestion set.")),
                "annotators": (
                    "annotators",
                    _("Pick at least %(count)s annotators (one per item is not enough for %(count)s per item).")
                    % {"count": per_item},
                ),
            }
            for key in exc.message_dict:
                field, message = words.get(key, (None, None))
                if field is not None and field not in self.errors:
                    self.add_error(field, message)
        return cleaned

    def item_filter(self) -> dict:
        """The researcher's choice of items, as stored in AnnotationRound.item_filter (empty keys left out)."""
        data = getattr(self, "cleaned_data", {})
        result = {}
        for key in ITEM_FILTER_KEYS:
            value = data.get(key)
            if isinstance(value, str):
                value = value.strip()
            if value:
                result[key] = value
        return result

    def preview_filter(self) -> dict:
        """The item filter from possibly incomplete input, for the live preview (invalid values dropped)."""
        result = {}
        for key in ITEM_FILTER_KEYS:
            field = self.fields[key]
            try:
                value = field.clean(field.widget.value_from_datadict(self.data, self.files, self.add_prefix(key)))
            except forms.ValidationError:
                continue
            if isinstance(value, str):
                value = value.strip()
            if value:
                result[key] = value
        return result

    def preview_value(self, key: str):
        field = self.fields[key]
        try:
            return field.clean(field.widget.value_from_datadict(self.data, self.files, self.add_prefix(key)))
        except forms.ValidationError:
            return None


class LockForm(forms.Form):
    """Locking takes the round from its annotators: the page names what it does before it is done."""

    confirm = forms.BooleanField(
        error_messages={"required": _("Tick “I understand” to lock the round.")},
    )


class FreezeForm(IdempotentFormMixin, forms.Form):
    name = forms.CharField(
        label=_("Version name"),
        max_length=200,
        help_text=_("Unique; a version can never change once frozen, e.g. “v1.0”."),
    )
    # Freezing cannot be undone: the page names the round and the items that enter and stay out.
    confirm = forms.BooleanField(
        error_messages={"required": _("Tick “I understand” to freeze the round for good.")},
    )

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError(_("A version needs a name."))
        return name
