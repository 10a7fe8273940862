"""Form parts every app shares."""

import uuid

from django import forms
from django.forms.renderers import BaseRenderer, get_default_renderer
from django.utils.html import conditional_escape, escape


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


class InputTagRenderer(BaseRenderer):
    """The configured form renderer, except that ``<input>`` tags are written in Python.

    A page with many radio buttons and checkboxes (the review panel has about 25) spends much of
    its time rendering Django's input templates, a template render per input. The markup written
    here is byte for byte what ``django/forms/widgets/input.html`` (with ``attrs.html``) writes,
    with the same escaping; a label-wrapped option and every other template still go to the
    configured renderer. ``tests/site/test_input_renderer.py`` compares the two.
    """

    # The templates that are input.html alone (input_option.html without its label).
    INPUT_TEMPLATES = frozenset(
        f"django/forms/widgets/{name}.html"
        for name in ("input", "text", "number", "email", "url", "password", "hidden", "checkbox")
    )
    OPTION_TEMPLATES = frozenset(
        ("django/forms/widgets/radio_option.html", "django/forms/widgets/checkbox_option.html")
    )

    def __init__(self):
        self.fallback = get_default_renderer()

    def get_template(self, template_name):
        return self.fallback.get_template(template_name)

    def render(self, template_name, context, request=None):
        widget = context.get("widget")
        if widget is not None and (
            template_name in self.INPUT_TEMPLATES
            or (template_name in self.OPTION_TEMPLATES and not widget.get("wrap_label"))
        ):
            return input_tag(widget)
        return self.fallback.render(template_name, context, request=request)


def input_tag(widget: dict) -> str:
    """``django/forms/widgets/input.html`` for a widget's template context."""
    parts = [f'<input type="{conditional_escape(widget["type"])}" name="{conditional_escape(widget["name"])}"']
    if widget["value"] is not None:
        # {{ value|stringformat:'s' }}: stringformat gives a plain str (escape's str()), which autoescape escapes.
        parts.append(f' value="{escape(widget["value"])}"')
    for name, value in widget["attrs"].items():
        if value is not False:
            parts.append(
                f" {conditional_escape(name)}" if value is True else f' {conditional_escape(name)}="{escape(value)}"'
            )
    parts.append(">")
    return "".join(parts)
