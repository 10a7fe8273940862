"""Forms of the prompt templates. They validate input only; the services decide."""

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from ..models import PromptKind

ROLES = ("system", "user", "assistant")


def _parse_messages(raw: str) -> list[dict]:
    try:
        messages = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise forms.ValidationError(_("Not valid JSON: %(error)s"), params={"error": exc}) from exc
    if not isinstance(messages, list) or not messages:
        raise forms.ValidationError(_('A JSON list of {"role", "content"} objects.'))
    for message in messages:
        if (
            not isinstance(message, dict)
            or message.get("role") not in ROLES
            or not isinstance(message.get("content"), str)
        ):
            raise forms.ValidationError(_("Each message needs a role (system, user or assistant) and a text content."))
    return [{"role": m["role"], "content": m["content"]} for m in messages]


class PromptAddForm(forms.Form):
    name = forms.CharField(
        label=_("Name"), max_length=100, help_text=_("e.g. zero-shot, few-shot, aspect, cot, topic, traits.")
    )
    kind = forms.ChoiceField(label=_("Kind"), choices=PromptKind.choices)
    reference = forms.CharField(
        label=_("Reference"), max_length=300, required=False, help_text=_("Where the text comes from.")
    )
    system = forms.CharField(
        label=_("System message"), required=False, widget=forms.Textarea(attrs={"rows": 4, "lang": "vi"})
    )
    user_message = forms.CharField(
        label=_("User message"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "lang": "vi"}),
        help_text=_("Placeholders: {phrase}, {explanation}, {response} (judge)."),
    )
    messages_json = forms.CharField(
        label=_("Or the messages as JSON"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        help_text=_(
            'A list such as [{"role": "system", "content": "…"}, {"role": "user", "content": "…"}]; it wins over the two fields above.'
        ),
    )

    def clean(self):
        data = super().clean()
        raw = (data.get("messages_json") or "").strip()
        if raw:
            try:
                data["messages"] = _parse_messages(raw)
            except forms.ValidationError as exc:
                self.add_error("messages_json", exc)
            return data
        if not (data.get("user_message") or "").strip():
            self.add_error("user_message", _("Write the user message, or give the messages as JSON."))
            return data
        messages = [{"role": "system", "content": data["system"]}] if (data.get("system") or "").strip() else []
        data["messages"] = [*messages, {"role": "user", "content": data["user_message"]}]
        return data
