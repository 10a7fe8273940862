"""Forms of a round's quality tab (researchers): settings, control items, recalibration. Input only."""

from django import forms
from django.utils.translation import gettext_lazy as _

from core.localization import localized_name

from ..models import ControlItem
from ..selectors.corpus import theme_list, trait_list
from ..selectors.rounds import version_choices


class QualitySettingsForm(forms.Form):
    control_percent = forms.FloatField(
        label=_("Control items (percent of each queue)"),
        min_value=0,
        max_value=50,
        help_text=_("Set before the first answer; controls are placed then."),
    )
    quality_window = forms.IntegerField(label=_("Drift window (items)"), min_value=5, max_value=100000)
    quality_threshold = forms.FloatField(label=_("Warn when a window's theme κ is below"), min_value=-1, max_value=1)
    fast_seconds = forms.FloatField(label=_("Flag answers faster than (seconds)"), min_value=0, max_value=600)

    @classmethod
    def initial_for(cls, round_) -> dict:
        return {
            "control_percent": round(round_.control_rate * 100, 2),
            "quality_window": round_.quality_window,
            "quality_threshold": round_.quality_threshold,
            "fast_seconds": round_.fast_seconds,
        }

    def service_kwargs(self) -> dict:
        data = self.cleaned_data
        return {
            "control_rate": data["control_percent"] / 100,
            "quality_window": data["quality_window"],
            "quality_threshold": data["quality_threshold"],
            "fast_seconds": data["fast_seconds"],
        }


class ControlForm(forms.Form):
    """Control items from a frozen version, or one entered by hand."""

    SOURCES = (("version", _("From a frozen version")), ("hand", _("By hand")))

    source = forms.ChoiceField(label=_("Source"), choices=SOURCES, widget=forms.RadioSelect, initial="version")
    version = forms.ModelChoiceField(label=_("Version"), queryset=version_choices(), required=False)
    count = forms.IntegerField(
        label=_("How many"), min_value=1, required=False, help_text=_("Drawn at random; all that fit when empty.")
    )
    expression = forms.CharField(
        label=_("Expression"),
        max_length=2000,
        required=False,
        help_text=_("The text or external id of an expression of the round's dataset that is not in the round."),
    )
    traits = forms.MultipleChoiceField(label=_("Its traits"), required=False, widget=forms.CheckboxSelectMultiple)
    theme = forms.ChoiceField(label=_("Its theme"), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["traits"].choices = [(t.code, localized_name(t)) for t in trait_list()]
        self.fields["theme"].choices = [("", "—")] + [(t.code, localized_name(t)) for t in theme_list()]

    def clean(self):
        data = super().clean()
        if data.get("source") == "version" and not data.get("version"):
            self.add_error("version", _("Choose the version to draw control items from."))
        if data.get("source") == "hand":
            if not (data.get("expression") or "").strip():
                self.add_error("expression", _("Name the expression (its text or external id)."))
            if not data.get("theme"):
                self.add_error("theme", _("Choose the theme the item has."))
        return data


class RecalibrationForm(forms.Form):
    ACTIONS = (
        ("pause", _("Pause the queue")),
        ("resume", _("Resume the queue")),
        ("note", _("Send a note with examples")),
        ("review_again", _("Send answers back for another review")),
    )

    annotator = forms.ModelChoiceField(label=_("Annotator"), queryset=None)
    action = forms.ChoiceField(label=_("Action"), choices=ACTIONS, widget=forms.RadioSelect)
    note = forms.CharField(label=_("Note"), required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 3}))
    examples = forms.ModelMultipleChoiceField(
        label=_("Example items (control items, shown with their labels)"),
        queryset=ControlItem.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    since = forms.DateTimeField(
        label=_("Answers submitted since"),
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text=_("Every answer of the annotator submitted at or after this time goes back to their queue."),
    )

    def __init__(self, *args, annotators, controls, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["annotator"].queryset = annotators
        self.fields["examples"].queryset = controls
        self.fields["examples"].label_from_instance = lambda c: c.expression.text

    def clean(self):
        data = super().clean()
        if data.get("action") == "note" and not (data.get("note") or "").strip():
            self.add_error("note", _("Write what the annotator should know."))
        if data.get("action") == "review_again" and not data.get("since"):
            self.add_error("since", _("Give the date and time from which answers go back."))
        return data


__all__ = ["ControlForm", "QualitySettingsForm", "RecalibrationForm"]
