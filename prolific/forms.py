"""Forms of the Prolific pages: what a researcher sends to Prolific, and the confirmations that guard it."""

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import CompletionAction

# Prolific's rejection categories (its API documentation and official client).
REJECTION_CATEGORIES = [
    ("TOO_QUICKLY", _("Too quickly")),
    ("TOO_SLOWLY", _("Too slowly")),
    ("FAILED_INSTRUCTIONS", _("Did not follow the instructions")),
    ("FAILED_CHECK", _("Failed an attention check")),
    ("LOW_EFFORT", _("Low effort")),
    ("NO_CODE", _("No completion code")),
    ("BAD_CODE", _("Wrong completion code")),
    ("NO_DATA", _("No data")),
    ("OTHER", _("Other")),
]
# The group field's value for "one Prolific study per group of the study" (as the bodies selector spells it).
EACH_GROUP = "each"
ALL_GROUPS = "all"
REJECT_MESSAGE_MIN = 100
MAX_FILTERS_CHARS = 20_000
MAX_BONUS_BYTES = 1_000_000


class PublishForm(forms.Form):
    """The Prolific study (or studies) to create as drafts; also read by GET for the preview of the request bodies."""

    group = forms.ChoiceField(label=_("Recruit"))
    completion_action = forms.ChoiceField(
        label=_("When a participant completes"),
        choices=CompletionAction.choices,
        initial=CompletionAction.MANUALLY_REVIEW,
        widget=forms.RadioSelect,
    )
    filters = forms.CharField(
        label=_("Filters (JSON)"),
        required=False,
        max_length=MAX_FILTERS_CHARS,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        # HTML (our own text): the template shows it as it is, as Django's form templates do.
        help_text=_(
            'A JSON list passed to Prolific as is, e.g. <code>[{"filter_id": "current-country-of-residence", '
            '"selected_values": ["1"]}]</code>. Empty: no filters.'
        ),
    )

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(EACH_GROUP, _("One Prolific study per group (each with its group's quota)"))]
        choices += [(group, _("Only the %(group)s group") % {"group": group}) for group in study.groups]
        choices += [(ALL_GROUPS, _("One Prolific study for all groups (participants pick their group)"))]
        self.fields["group"].choices = choices
        self.fields["group"].initial = EACH_GROUP

    def clean_filters(self) -> list:
        text = self.cleaned_data["filters"].strip()
        if not text:
            return []
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                _("Filters: not valid JSON (line %(line)s, column %(column)s: %(detail)s).")
                % {"line": exc.lineno, "column": exc.colno, "detail": exc.msg}
            ) from None
        if not isinstance(value, list):
            raise forms.ValidationError(_("Filters: a JSON list is expected, e.g. [] or [{...}]."))
        for position, item in enumerate(value, start=1):
            if not isinstance(item, dict):
                raise forms.ValidationError(_("Filters: item %(n)s is not a JSON object {...}.") % {"n": position})
            if not str(item.get("filter_id", "")).strip():
                raise forms.ValidationError(_('Filters: item %(n)s has no "filter_id".') % {"n": position})
        return value

    def chosen_group(self) -> str | None:
        """What the services take: "each", one group, or None for one Prolific study for all groups."""
        group = self.cleaned_data["group"]
        return None if group == ALL_GROUPS else group


class PublishConfirmForm(forms.Form):
    prolific_study = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    confirm = forms.BooleanField(
        label=_("I have checked the draft: publish it now, so participants on Prolific can take it."),
        error_messages={"required": _("Tick the confirmation to publish.")},
    )


class RejectForm(forms.Form):
    submission = forms.CharField(widget=forms.HiddenInput, max_length=64)
    category = forms.ChoiceField(label=_("Reason category"), choices=REJECTION_CATEGORIES)
    message = forms.CharField(
        label=_("Message to the participant"),
        # Prolific refuses a rejection whose message is shorter.
        min_length=REJECT_MESSAGE_MIN,
        max_length=2000,
        help_text=_("At least 100 characters: Prolific shows it to the participant."),
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    confirm = forms.BooleanField(
        label=_("Reject this submission: the participant is not paid."),
        error_messages={"required": _("Tick the confirmation to reject.")},
    )

    def clean_message(self):
        message = self.cleaned_data["message"].strip()
        if not message:
            raise forms.ValidationError(_("Message: say why the submission is rejected."))
        return message


class ReturnForm(forms.Form):
    submission = forms.CharField(widget=forms.HiddenInput, max_length=64)
    reasons = forms.CharField(
        label=_("Reasons (one a line)"),
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def clean_reasons(self) -> list[str]:
        reasons = [line.strip() for line in self.cleaned_data["reasons"].splitlines() if line.strip()]
        if not reasons:
            raise forms.ValidationError(_("Reasons: give at least one."))
        return reasons


class ApproveValidForm(forms.Form):
    """No fields: one button. A form all the same, so every action is read the same way."""


class BonusUploadForm(forms.Form):
    file = forms.FileField(
        label=_("Bonus file (CSV)"),
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,text/csv"}),
        help_text=_("Columns <code>participant_id,amount</code>; amounts in the study's currency, e.g. 1.50."),
    )
    text = forms.CharField(
        label=_("Or paste the rows"),
        required=False,
        max_length=MAX_BONUS_BYTES,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
    )

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        if upload and upload.size > MAX_BONUS_BYTES:
            raise forms.ValidationError(
                _("The file is %(size)s bytes; the limit is %(limit)s bytes.")
                % {"size": f"{upload.size:,}", "limit": f"{MAX_BONUS_BYTES:,}"}
            )
        return upload

    def clean(self):
        cleaned = super().clean()
        upload, text = cleaned.get("file"), (cleaned.get("text") or "").strip()
        if self.errors:
            return cleaned
        if upload and text:
            raise forms.ValidationError(_("Give the file or the pasted rows, not both."))
        if not upload and not text:
            raise forms.ValidationError(_("Choose a CSV file or paste its rows."))
        # The upload itself goes to the service, which reads it as every importer does (core.tables).
        cleaned["content"] = upload or text + "\n"
        return cleaned


class BonusPayForm(forms.Form):
    batch = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    confirm = forms.BooleanField(
        label=_("Pay this batch now. Prolific charges the total shown; it is paid once and never again."),
        error_messages={"required": _("Tick the confirmation to pay.")},
    )
