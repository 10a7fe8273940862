"""Form parts every app shares."""

import uuid

from django import forms


def new_idempotency_key() -> str:
    return uuid.uuid4().hex


class IdempotentFormMixin(forms.Form):
    """A create form carrying a fresh key each time it is rendered (see core.services.idempotency).

    A bound form keeps the key it was posted with, so the page re-rendered with errors and
    then sent again is still the same request.
    """

    idempotency_key = forms.CharField(
        widget=forms.HiddenInput, required=False, max_length=64, initial=new_idempotency_key
    )
