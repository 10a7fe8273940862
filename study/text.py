"""Sentence splitting shared by the importer and the highlighting, so sentence indices agree; where
culture terms occur in a text, in any inflected form; the consent text's markdown."""

import functools
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


# Hyphens a typesetter may put between the words of a compound, and the apostrophes of a possessive.
# As a character class's contents: the hyphen-minus escaped, then U+2010 and U+2011.
_HYPHENS = r"\-\u2010\u2011"
_APOSTROPHES = "'\u2019"
_JOINER = rf"[\s{_HYPHENS}]+"
_WORDS = re.compile(_JOINER)
# "crane's", "crane’s", "cranes'": the possessive belongs to the term it follows.
_POSSESSIVE = rf"(?:[{_APOSTROPHES}]s|(?<=[sS])[{_APOSTROPHES}])?"


@functools.cache
def _inflectors():
    # inflect knows the irregular plurals (geese, people, oxen), the invariable ones (sheep) and
    # compounds whose head is not the last word (mothers-in-law, Temples of Heaven); the classical
    # engine adds the Latin and Greek plurals (cacti) beside the anglicised ones.
    import inflect

    modern, classical = inflect.engine(), inflect.engine()
    classical.classical(all=True)
    return modern, classical


@functools.lru_cache(maxsize=4096)
def term_forms(term: str) -> tuple[str, ...]:
    """The forms a culture term takes in running text: as written, its singular and its plurals.

    A term may be stored in either number ("mandarin duck", "mandarin ducks"). A wrong singular
    of a word that only looks plural ("lotus" read as "lotu") is harmless: it occurs in no text.
    """
    term = " ".join(term.split())
    if not term:
        return ()
    modern, classical = _inflectors()
    bases = [term]
    singular = modern.singular_noun(term)
    if singular and singular.strip():
        bases.append(singular)
    forms = set(bases)
    for base in bases:
        for engine in (modern, classical):
            plural = engine.plural_noun(base)
            if plural and plural.strip():
                forms.add(plural)
    return tuple(sorted(forms, key=lambda form: (-len(form), form)))


def term_singular(term: str) -> str:
    """The term with its head noun in the singular ("red-crowned crane" for "red-crowned cranes");
    the term itself when it is not a plural."""
    term = " ".join(term.split())
    singular = _inflectors()[0].singular_noun(term) if term else False
    return singular if singular and singular.strip() else term


def _form_pattern(form: str) -> str:
    words = [word for word in _WORDS.split(form) if word]
    escaped = [
        "".join(f"[{_APOSTROPHES}]" if char in _APOSTROPHES else re.escape(char) for char in word) for word in words
    ]
    return _JOINER.join(escaped)


@functools.lru_cache(maxsize=4096)
def term_pattern(term: str) -> str:
    """A regular expression (case-insensitive) for every inflected form of ``term`` as a whole word:
    plural and singular, possessive, any case, a space or a hyphen between its words."""
    # Longest form first, so "cranes" is taken whole rather than as "crane" and a stray "s". A term
    # of hyphens alone has no word: no pattern, or it would match the empty string everywhere.
    patterns = [pattern for pattern in dict.fromkeys(_form_pattern(form) for form in term_forms(term)) if pattern]
    if not patterns or not _WORDS.sub("", " ".join(term.split())):
        return ""
    alternatives = "|".join(patterns)
    return rf"(?<!\w)(?:{alternatives}){_POSSESSIVE}(?!\w)"


@functools.lru_cache(maxsize=512)
def _terms_regex(terms: tuple[str, ...]) -> re.Pattern:
    return re.compile(
        "|".join(f"(?P<t{index}>{term_pattern(term)})" for index, term in enumerate(terms)), re.IGNORECASE
    )


def term_matches(text: str, terms) -> list[tuple[int, int, str]]:
    """Where the culture terms occur in ``text``: ``(start, end, term)`` left to right, never overlapping.

    Longer terms first, so "plum blossom" wins over "plum" where both start; each term matches
    its inflected forms (see ``term_pattern``) and never inside another word ("crane" is not in
    "cranesbill").
    """
    ordered = tuple(sorted({" ".join(t.split()) for t in terms if t and term_pattern(t)}, key=lambda t: (-len(t), t)))
    if not ordered or not text:
        return []
    regex = _terms_regex(ordered)
    return [(match.start(), match.end(), ordered[int(match.lastgroup[1:])]) for match in regex.finditer(text)]


def term_find(term: str, text: str) -> str | None:
    """The first occurrence of ``term`` (any inflected form) in ``text`` as written there, its
    whitespace collapsed; None when the term is not there."""
    pattern = term_pattern(term)
    match = re.search(pattern, text, flags=re.IGNORECASE) if pattern else None
    return " ".join(match.group(0).split()) if match else None


def terms_same(first: str, second: str) -> bool:
    """Whether two terms are one term in another number, case or hyphenation ("Mandarin ducks",
    "mandarin duck")."""
    return any(
        re.fullmatch(term_pattern(a), " ".join(b.split()), flags=re.IGNORECASE)
        for a, b in ((first, second), (second, first))
        if term_pattern(a)
    )


def gloss_html(sentence: str, glosses: dict[str, str]) -> str:
    """The sentence as HTML with each culture term followed by its Chinese label.

    Every inflected form of a term is glossed ("mandarin ducks" for the term "mandarin duck"),
    longest terms first, never inside another word.
    """
    from django.utils.html import escape

    labels = {" ".join(term.split()): zh for term, zh in glosses.items() if term.strip()}
    parts, last = [], 0
    for start, end, term in term_matches(sentence, labels):
        parts.append(escape(sentence[last:start]))
        parts.append(
            f'<span class="term">{escape(sentence[start:end])}'
            f'<span class="gloss" lang="zh-Hans">（{escape(labels[term])}）</span></span>'
        )
        last = end
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
