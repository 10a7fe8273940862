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
