"""The form of "repeat this judge run" on the judge-versus-human report."""

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin


class JudgeRepeatForm(IdempotentFormMixin, forms.Form):
    """One per judge run on the page: each button carries its own idempotency key."""

    judge_run = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    confirm_cost = forms.BooleanField(
        label=_("I confirm the estimated cost"),
        required=False,
        help_text=_("Needed when the estimate is above the threshold set for this server."),
    )
