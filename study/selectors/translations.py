"""Which package texts a group reads in English because the package leaves out their translation.

The participant pages fall back to the English text wherever a translation is missing, so a
half-translated package shows a Chinese participant English choices under Chinese buttons. The
launch checklist lists every such text, field by field, with the same rules the pages use.
"""

from django.db.models import Prefetch

from ..models import Question, Study
from ..rules import group_translation


def _options_translated(question: Question, translated: dict) -> bool:
    # The pages pair the translated options with the English ones by position, or show none of them.
    distractors = translated.get("distractors") or []
    return bool(translated.get("answer")) and len(distractors) == len(question.distractors)


def _study_rows(study: Study, language: str) -> list[dict]:
    package = study.package if isinstance(study.package, dict) else {}
    translated = package.get(language) if isinstance(package.get(language), dict) else {}
    rows = []
    if not translated.get("title"):
        rows.append({"artwork": "", "title": "", "question": "", "field": "title", "english": study.title})
    consent = package.get("consent") if isinstance(package.get("consent"), dict) else {}
    # A package without any consent text is the consent item's warning, not a missing translation.
    if consent and not (isinstance(consent.get(language), str) and consent[language].strip()):
        english = consent.get("en") if isinstance(consent.get("en"), str) else ""
        rows.append({"artwork": "", "title": "", "question": "", "field": "consent", "english": english[:80]})
    return rows


def _artwork_rows(artwork, language: str) -> list[dict]:
    translated = (artwork.translations or {}).get(language) or {}
    names = translated.get("elements") or {}
    where = {"artwork": artwork.key, "title": artwork.title}
    rows = []
    if not translated.get("title"):
        rows.append({**where, "question": "", "field": "title", "english": artwork.title})
    # Without any alt text the alt_text item warns; a translation is missing only beside an English one.
    if artwork.alt and not translated.get("alt"):
        rows.append({**where, "question": "", "field": "alt", "english": artwork.alt[:80]})
    rows += [
        {**where, "question": "", "field": "element", "english": element["name"]}
        for element in artwork.elements
        if not names.get(element["name"])
    ]
    for question in artwork.questions.all():
        text = (question.translations or {}).get(language) or {}
        if not text.get("question"):
            rows.append({**where, "question": question.key, "field": "question", "english": question.question})
        if not _options_translated(question, text):
            english = " / ".join([question.answer, *question.distractors])
            rows.append({**where, "question": question.key, "field": "options", "english": english})
    return rows


def study_translations_missing(study: Study) -> list[dict]:
    """Every text a group whose language is not English would read in English, in package order.

    One row per field: ``group``, ``language``, ``artwork`` (its id, "" for the study's own texts),
    ``title``, ``question`` (its id or ""), ``field`` (title, alt, consent, element, question or options)
    and ``english``, the text shown instead.
    """
    languages = {group: group_translation(group) for group in study.groups}
    languages = {group: language for group, language in languages.items() if language}
    if not languages:
        return []
    artworks = list(
        study.artworks.order_by("position").prefetch_related(
            Prefetch("questions", queryset=Question.objects.order_by("position"))
        )
    )
    missing = []
    for group, language in languages.items():
        rows = _study_rows(study, language)
        for artwork in artworks:
            rows += _artwork_rows(artwork, language)
        missing += [{"group": group, "language": language, **row} for row in rows]
    return missing
