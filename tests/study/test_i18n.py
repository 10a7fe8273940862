"""Chinese-group participants read every participant-facing text in Simplified Chinese."""

import random
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from study.services.participants import prolific_id_for
from study.services.simulation import SyntheticParticipant, answer_key, entry_url, parse_form

from .factories import make_study

PARTICIPANT_SOURCES = (
    "templates/study/participant/",
    "study/views/participant.py",
    "study/views/presenters.py",
    "study/content.py",
    "study/steps.py",
    "study/rules.py",
    # The package study/services/participants/, and the module that held the pages' context and the
    # paper's wording before study/content.py and study/views/presenters.py (older message catalogues).
    "study/services/participants",
    "study/selectors/participants.py",
)


def test_it_has_a_chinese_translation_for_every_participant_facing_string():
    po = polib.pofile(str(Path(settings.BASE_DIR) / "locale/zh_Hans/LC_MESSAGES/django.po"))
    missing = [
        entry.msgid
        for entry in po
        if any(path.startswith(PARTICIPANT_SOURCES) for path, _line in entry.occurrences)
        and (entry.fuzzy or not (entry.msgstr or entry.msgstr_plural.get(0)))
    ]
    assert missing == []


@pytest.mark.django_db
def test_it_renders_every_page_of_a_chinese_session_in_chinese():
    study = make_study()
    client = Client()
    client.get(entry_url("", study.slug, pid=prolific_id_for("PIDZH"), group="chinese"))
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(2))
    seen = set()
    english = ["Next", "Consent to take part", "How confident are you", "Description A", "(left)", "Artwork 1 of"]
    for _ in range(200):
        page = client.get(reverse("study:run", args=[study.slug]))
        if page.status_code != 200:
            break
        html = page.content.decode()
        spec = parse_form(html)
        kind = spec.step.split(":")[-1]
        if kind not in seen:
            seen.add(kind)
            assert 'lang="zh-Hans"' in html
            for text in english:
                assert f">{text}<" not in html and f"{text} " not in html.split("<main", 1)[1], (kind, text)
        client.post(reverse("study:run", args=[study.slug]), bot.answer(spec))
    assert seen == {"consent", "instructions", "symbols", "qa", "post_symbols", "post_qa", "compare"}
    assert page.status_code == 303 and page["Location"].endswith("cc=C0MPL3TE")
