"""Parsing and validating the JSON replies of the question-construction prompts.

Models wrap JSON in ```json fences or put a sentence before it however firmly the
prompt forbids it, so the parser looks for the first JSON value in the reply; the
schema itself is strict, and every violation is a ``ReplyError`` whose message says
what was wrong (it is shown on the item and fed back on the next attempt).
"""

import json
import re

from django.utils.translation import gettext as _

from .models import DISTRACTORS

AGNOSTIC_QUESTIONS = 2
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


class ReplyError(ValueError):
    pass


def extract_json(text: str):
    """The first JSON object or array in ``text`` (inside a fence if there is one)."""
    candidates = [m.group(1) for m in _FENCE.finditer(text or "")] + [text or ""]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start, char in enumerate(candidate):
            if char not in "[{":
                continue
            try:
                value, _end = decoder.raw_decode(candidate, start)
            except ValueError:
                continue
            return value
    raise ReplyError(_("the reply contains no valid JSON object or list"))


def _text(value, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ReplyError(_("%(what)s must be a non-empty string") % {"what": what})
    return value.strip()


def parse_symbols(text: str) -> dict:
    """``{"symbols": {name: meaning}, "non_symbols": [name, ...]}``."""
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ReplyError(_('the reply must be a JSON object with "symbols" and "non-symbols"'))
    symbols = data.get("symbols")
    non_symbols = data.get("non-symbols", data.get("non_symbols"))
    if not isinstance(symbols, dict):
        raise ReplyError(_('"symbols" must be an object of name: meaning'))
    if not isinstance(non_symbols, list) or not non_symbols:
        raise ReplyError(_('"non-symbols" must be a list with at least one element'))
    clean_symbols = {}
    for name, meaning in symbols.items():
        clean_symbols[_text(name, _("a symbol name"))] = _text(meaning, _("the meaning of symbol %s") % name)
    clean_non = []
    for name in non_symbols:
        name = _text(name, _("a non-symbol name"))
        if name not in clean_non and name not in clean_symbols:
            clean_non.append(name)
    return {"symbols": clean_symbols, "non_symbols": clean_non}


def _question(entry, index: int, *, subject_required: bool) -> dict:
    where = _("question %(n)s") % {"n": index + 1}
    if not isinstance(entry, dict):
        raise ReplyError(_("%(where)s must be a JSON object") % {"where": where})
    question = _text(entry.get("question"), f'{where}: "question"')
    answer = _text(entry.get("answer"), f'{where}: "answer"')
    subject = entry.get("subject", "")
    if subject_required:
        subject = _text(subject, f'{where}: "subject"')
    distractors = entry.get("plausible_answers")
    if not isinstance(distractors, list) or len(distractors) != DISTRACTORS:
        n = len(distractors) if isinstance(distractors, list) else 0
        raise ReplyError(
            _("%(where)s needs exactly %(k)s plausible answers, not %(n)s") % {"where": where, "k": DISTRACTORS, "n": n}
        )
    cleaned = [_text(d, f"{where}: a plausible answer") for d in distractors]
    if len(set(cleaned)) != len(cleaned):
        raise ReplyError(_("%(where)s repeats a plausible answer") % {"where": where})
    if answer in cleaned:
        raise ReplyError(_("%(where)s lists its correct answer among the plausible answers") % {"where": where})
    return {
        "subject": subject if isinstance(subject, str) else "",
        "question": question,
        "answer": answer,
        "type": str(entry.get("type", "")),
        "distractors": cleaned,
    }


def parse_attuned_questions(text: str, *, symbols: list[str]) -> list[dict]:
    """One question per symbol (an empty list when there is no symbol)."""
    data = extract_json(text)
    if not isinstance(data, list):
        raise ReplyError(_("the reply must be a JSON list of questions"))
    questions = [_question(entry, i, subject_required=True) for i, entry in enumerate(data)]
    if len(questions) != len(symbols):
        raise ReplyError(
            _("expected one question per cultural symbol (%(k)s), got %(n)s") % {"k": len(symbols), "n": len(questions)}
        )
    return questions


def parse_agnostic_questions(text: str) -> list[dict]:
    data = extract_json(text)
    if not isinstance(data, list):
        raise ReplyError(_("the reply must be a JSON list of questions"))
    if len(data) != AGNOSTIC_QUESTIONS:
        raise ReplyError(_("expected exactly %(k)s questions, got %(n)s") % {"k": AGNOSTIC_QUESTIONS, "n": len(data)})
    return [_question(entry, i, subject_required=False) for i, entry in enumerate(data)]


def parse_background(text: str) -> str:
    text = (text or "").strip()
    if len(text.split()) < 5:
        raise ReplyError(_("the background is empty or too short"))
    return text


_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’)\]]*$")


def truncate_description(text: str, word_limit: int) -> str:
    """At most ``word_limit`` words, cut back to the last complete sentence (§5.1).

    When no sentence ends within the limit the truncated words are kept as they are.
    """
    words = (text or "").split()
    if len(words) <= word_limit:
        return " ".join(words)
    kept = words[:word_limit]
    for end in range(len(kept), 0, -1):
        if _SENTENCE_END.search(kept[end - 1]):
            return " ".join(kept[:end])
    return " ".join(kept)
