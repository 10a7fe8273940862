"""The review panel's option labels, written in Python, are the markup its template loops wrote (issue 25)."""

import pytest
from django.template import engines
from django.utils import translation

from annotation.forms.review import DECISION_KEYS, ReviewForm
from annotation.models import Theme, Trait

# The loops of templates/annotation/review_item.html before the labels moved into the form.
TEMPLATE_LOOPS = engines["django"].from_string(
    "{% for row in rows %}{% for option in row.options %}"
    '<label for="{{ option.widget.id_for_label }}" class="decision-{{ option.widget.data.value }}">'
    "{{ option.widget.tag }} {{ option.widget.choice_label }} <kbd>{{ option.key }}</kbd></label>"
    "{% endfor %}|{% endfor %}#"
    "{% for option in added %}"
    '<label for="{{ option.widget.id_for_label }}" data-trait-number="{{ option.trait.number }}">'
    "{{ option.widget.tag }} <kbd>⇧{{ option.trait.number }}</kbd> {{ option.widget.choice_label }} "
    '<small class="helptext">{{ option.description }}</small></label>'
    "{% endfor %}#"
    "{% for option in themes %}"
    '<label for="{{ option.widget.id_for_label }}" data-theme-number="{{ option.number }}">'
    "{{ option.widget.tag }} <kbd>{{ option.number }}</kbd> {{ option.widget.choice_label }}"
    '<small class="helptext">{{ option.description }}</small></label>'
    "{% endfor %}"
)
TRICKY = "<b>A & \"B\"</b> 'c'"


def template_markup(form: ReviewForm, language: str) -> str:
    def describe(entry):
        return entry.description_vi if language == "vi" else entry.description_en

    rows = [
        {"options": [{"widget": w, "key": DECISION_KEYS.get(w.data["value"], "")} for w in row["field"]]}
        for row in form.decision_rows()
    ]
    traits = {t.code: t for t in form.other_traits}
    added = [
        {"widget": w, "trait": traits[w.data["value"]], "description": describe(traits[w.data["value"]])}
        for w in form["added_traits"]
    ]
    themes = {t.code: t for t in form.themes}
    theme_options = [
        {"widget": w, "number": themes[w.data["value"]].number, "description": describe(themes[w.data["value"]])}
        for w in form["theme"]
    ]
    return TEMPLATE_LOOPS.render({"rows": rows, "added": added, "themes": theme_options})


def python_markup(form: ReviewForm) -> str:
    rows = "".join("".join(row["options"]) + "|" for row in form.decision_rows())
    return rows + "#" + "".join(form.added_options()) + "#" + "".join(form.theme_options())


def tricky(entries):
    for entry in entries:
        entry.name_en = entry.name_vi = f"{entry.name_en} {TRICKY}"
        entry.description_en = entry.description_vi = f"{entry.description_en} {TRICKY}"
    return entries


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "vi", "zh-hans"])
@pytest.mark.parametrize("names", ["taxonomy", "tricky"])
def test_it_writes_the_labels_the_template_loops_wrote(language, names):
    traits, themes = list(Trait.objects.order_by("number")), list(Theme.objects.order_by("number"))
    if names == "tricky":
        traits, themes = tricky(traits), tricky(themes)
    posted = {
        "theme": themes[3].code,
        f"decision_{traits[0].code}": "reject",
        "added_traits": [traits[1].code, "unknown"],
        "revision": "4",
    }
    with translation.override(language):
        for suggested in ([traits[0].code, traits[2].code], [], [t.code for t in traits]):
            for data in (None, posted):
                form = ReviewForm(data, traits=traits, themes=themes, suggested=suggested, prefix=None)
                if data:
                    form.is_valid()
                expected = template_markup(form, language)
                assert python_markup(form) == expected
                assert expected.count("<label") == 3 * len(suggested) + (5 - len(suggested)) + 7
        if names == "tricky":
            assert TRICKY not in expected and "&lt;b&gt;A &amp; &quot;B&quot;&lt;/b&gt; &#x27;c&#x27;" in expected
