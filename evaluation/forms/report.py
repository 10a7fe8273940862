"""The form of "repeat this judge run" on the judge-versus-human report."""

from django import forms

from core.forms import IdempotentFormMixin


class JudgeRepeatForm(IdempotentFormMixin, forms.Form):
    """One per judge run on the page: each button carries its own idempotency key."""

    judge_run = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
