"""Sentence splitting shared by the importer and the highlighting, so sentence indices agree."""

import re

# A sentence ends at . ! ? (or their CJK forms) followed by space, unless the word before is
# a common abbreviation or a single capital (an initial, as in "J. Smith").
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "vs", "etc", "e.g", "i.e", "c", "ca", "no", "vol"}
_BOUNDARY = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*\s+")


def split_sentences(text: str) -> list[str]:
    text = " ".join(text.split())
    if not text:
        return []
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        candidate = text[start : match.end()].strip()
        last_word = candidate.rstrip(".!?\"'”’)] ").rsplit(" ", 1)[-1]
        if last_word.lower() in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isupper()):
            continue
        sentences.append(candidate)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def gloss_html(sentence: str, glosses: dict[str, str]) -> str:
    """The sentence as HTML with each culture term followed by its Chinese label.

    Longest terms first, matched case-insensitively on word boundaries, so "plum blossom"
    wins over "plum" and no term is glossed inside another word.
    """
    from django.utils.html import escape

    if not glosses:
        return escape(sentence)
    terms = sorted((t for t in glosses if t.strip()), key=len, reverse=True)
    if not terms:
        return escape(sentence)
    pattern = re.compile(r"(?<!\w)(" + "|".join(re.escape(t) for t in terms) + r")(?!\w)", re.IGNORECASE)
    lowered = {t.lower(): z for t, z in glosses.items()}
    parts, last = [], 0
    for match in pattern.finditer(sentence):
        parts.append(escape(sentence[last : match.start()]))
        label = lowered.get(match.group(0).lower(), "")
        parts.append(
            f'<span class="term">{escape(match.group(0))}'
            f'<span class="gloss" lang="zh-Hans">（{escape(label)}）</span></span>'
        )
        last = match.end()
    parts.append(escape(sentence[last:]))
    return "".join(parts)
