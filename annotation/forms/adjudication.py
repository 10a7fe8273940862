"""Forms of the adjudication page. They shape input only; the review services decide."""

from django import forms
from django.utils.translation import gettext_lazy as _

from core.localization import localized_name

from ..models import RemovalReason


class _AdjudicationForm(forms.Form):
    # The item revision the page was loaded with: a second adjudicator who
    # resolved in between makes the service refuse instead of overwriting.
    revision = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class ResolveForm(_AdjudicationForm):
    traits = forms.MultipleChoiceField(
        label=_("Final traits"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Tick every trait the expression has; leave all unticked if it has none."),
    )
    theme = forms.ChoiceField(
        label=_("Final theme"),
        widget=forms.RadioSelect,
        error_messages={"required": _("Choose one theme.")},
    )

    field_order = ["traits", "theme", "note", "revision"]

    def __init__(self, *args, traits=(), themes=(), **kwargs):
        super().__init__(*args, prefix="resolve", **kwargs)
        self.fields["traits"].choices = [(t.code, localized_name(t)) for t in traits]
        self.fields["theme"].choices = [(t.code, f"{t.number}. {localized_name(t)}") for t in themes]
        self.fields["note"].label = _("Note on the decision (optional)")


class RemoveForm(_AdjudicationForm):
    reason = forms.ChoiceField(
        label=_("Reason"),
        choices=[("", _("Choose a reason…")), *RemovalReason.choices],
        error_messages={"required": _("Say why the item is removed.")},
    )

    field_order = ["reason", "note", "revision"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, prefix="remove", **kwargs)
        self.fields["note"].label = _("Note (required for “Other”)")
