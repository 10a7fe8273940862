"""core.forms.InputTagRenderer writes the same <input> markup as Django's templates (issue 14)."""

import pytest
from django import forms
from django.forms.renderers import get_default_renderer

from annotation.forms.review import ReviewForm
from annotation.models import Theme, Trait
from core.forms import InputTagRenderer


class Tricky(forms.Form):
    text = forms.CharField(initial='a "quoted" <b>&amp; value', widget=forms.TextInput(attrs={"data-x": "<'\">"}))
    number = forms.IntegerField(initial=7, widget=forms.NumberInput(attrs={"min": 0, "disabled": True}))
    hidden = forms.CharField(initial="h", widget=forms.HiddenInput(attrs={"readonly": False}))
    flag = forms.BooleanField(initial=True, required=False)
    off = forms.BooleanField(initial=False, required=False)
    choice = forms.ChoiceField(choices=[("a", "A & <a>"), ("b", "B")], initial="b", widget=forms.RadioSelect)
    many = forms.MultipleChoiceField(
        choices=[("x", "X"), ("y", "Y")], initial=["y"], widget=forms.CheckboxSelectMultiple
    )
    note = forms.CharField(widget=forms.Textarea, initial="<note>")


def markup(form) -> list[str]:
    """Every way a template shows a widget: the whole field, each option's tag, each option."""
    out = []
    for field in form:
        out.append(str(field))
        for option in field.subwidgets:
            out.append(option.tag())
            out.append(str(option))
    return out


def test_it_renders_like_the_django_templates():
    for data in (None, {"text": "posted 'x'", "number": "3", "choice": "a", "many": ["x", "y"], "flag": "on"}):
        assert markup(Tricky(data, renderer=InputTagRenderer())) == markup(
            Tricky(data, renderer=get_default_renderer())
        )


@pytest.mark.django_db
def test_the_review_form_renders_as_it_did():
    traits, themes = list(Trait.objects.order_by("number")), list(Theme.objects.order_by("number"))
    suggested = [traits[0].code, traits[2].code]
    data = {"theme": themes[1].code, f"decision_{traits[0].code}": "accept", "revision": "2", "note": "<x>"}
    for bound in (None, data):
        fast = ReviewForm(bound, traits=traits, themes=themes, suggested=suggested)
        slow = ReviewForm(bound, traits=traits, themes=themes, suggested=suggested, renderer=get_default_renderer())
        assert isinstance(fast.renderer, InputTagRenderer)
        assert markup(fast) == markup(slow)


def test_the_rating_form_renders_as_it_did():
    from evaluation.forms.scoring import RatingForm

    data = {"score": "4", "accuracy": "2", "note": "<x> & y", "revision": "1"}
    for bound in (None, data):
        fast, slow = RatingForm(bound), RatingForm(bound, renderer=get_default_renderer())
        assert isinstance(fast.renderer, InputTagRenderer)
        assert markup(fast) == markup(slow)
