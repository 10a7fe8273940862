"""The participant pages' option inputs, written in Python, are the markup their template loops wrote (issue 25)."""

import pytest
from django.template import engines
from django.utils import translation

from study.content import CONFIDENCE_SCALE
from study.views.presenters import option_inputs

# The loops of templates/study/participant/_qa_form.html and _symbols_form.html before the inputs
# moved into the presenter.
CHOICE_LOOP = engines["django"].from_string(
    "{% for option, label in options %}"
    '<label><input type="radio" name="{{ name }}" value="{{ option }}" required'
    "{% if selected == option %} checked{% endif %}> {{ label }}</label>"
    "{% endfor %}"
)
SYMBOLS_LOOP = engines["django"].from_string(
    "{% for name, label in elements %}"
    '<label><input type="checkbox" name="symbols" value="{{ name }}"'
    "{% if name in selected_symbols %} checked{% endif %}> {{ label }}</label>"
    "{% endfor %}"
)
TRICKY = "<b>A & \"B\"</b> 'c'"
OPTIONS = [("plum blossoms", "梅花"), (TRICKY, TRICKY), ("a 'quoted' one", "Một <i>câu</i> trả lời"), ("", "empty")]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("selected", ["", "plum blossoms", TRICKY, "not offered"])
def test_it_writes_the_radio_buttons_the_question_loop_wrote(language, selected):
    with translation.override(language):
        for name, options in (("q7-choice", OPTIONS), ('q7-"x"<', OPTIONS), ("q7-confidence", CONFIDENCE_SCALE)):
            expected = CHOICE_LOOP.render({"name": name, "options": options, "selected": selected})
            assert "".join(option_inputs("radio", name, options, selected=[selected])) == expected
            assert expected.count("<input") == len(options)
        assert "Moderately" in expected if language == "en" else "Moderately" not in expected


@pytest.mark.parametrize("selected", [[], ["plum blossoms"], ["plum blossoms", TRICKY, "missing"]])
def test_it_writes_the_checkboxes_the_symbols_loop_wrote(selected):
    expected = SYMBOLS_LOOP.render({"elements": OPTIONS, "selected_symbols": selected})
    assert "".join(option_inputs("checkbox", "symbols", OPTIONS, selected=selected)) == expected
    assert expected.count(" checked") == len(set(selected) & {value for value, _label in OPTIONS})
    assert TRICKY not in expected and "&lt;b&gt;A &amp; &quot;B&quot;&lt;/b&gt; &#x27;c&#x27;" in expected
