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


_SAFE_SCHEMES = ("http://", "https://", "mailto:")


def _markdown():
    from markdown_it import MarkdownIt

    # "zero" enables nothing; we switch on only what a consent text needs. With html off, a tag
    # written in the text is shown as text; images and autolinks stay off.
    md = MarkdownIt("zero", {"html": False, "linkify": False, "typographer": False})
    md.enable(["heading", "list", "emphasis", "link", "newline", "escape", "backticks", "hr"])
    md.validateLink = lambda url: url.strip().lower().startswith(_SAFE_SCHEMES)

    def link_open(renderer, tokens, idx, options, env):
        tokens[idx].attrSet("rel", "noopener noreferrer")
        tokens[idx].attrSet("target", "_blank")
        return renderer.renderToken(tokens, idx, options, env)

    def heading(renderer, tokens, idx, options, env):
        # The page has its own h1: the text's headings sit one level below it.
        tokens[idx].tag = f"h{min(6, int(tokens[idx].tag[1]) + 1)}"
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("heading_open", heading)
    md.add_render_rule("heading_close", heading)
    return md


def markdown_html(text: str) -> str:
    """A researcher's markdown as HTML: headings, lists, emphasis and http(s)/mailto links only."""
    return _markdown().render(text or "")
