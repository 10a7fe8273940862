"""How imported files name traits and themes: by code (``pragmatic``) or by number (``3``).

The corpus, the suggestions and the annotations imports read them the same way.
"""

import re

from core.tables import cell

from ...models import Theme, Trait

_LIST_SEPARATORS = re.compile(r"[;,]")


def trait_tokens() -> tuple[list[Trait], dict[str, Trait]]:
    """The traits in prompt order, and each one by its code and by its number."""
    traits = list(Trait.objects.order_by("number"))
    return traits, {t.code: t for t in traits} | {str(t.number): t for t in traits}


def theme_tokens() -> tuple[list[Theme], dict[str, Theme]]:
    """The themes in prompt order, and each one by its code and by its number."""
    themes = list(Theme.objects.order_by("number"))
    return themes, {t.code: t for t in themes} | {str(t.number): t for t in themes}


def parse_traits(raw, traits_by_token: dict[str, Trait]) -> tuple[list[Trait], list[str]]:
    """The traits a cell names (a list, or codes or numbers separated by commas or semicolons), and the unknown."""
    tokens = raw if isinstance(raw, list) else _LIST_SEPARATORS.split(cell(raw))
    found, unknown = [], []
    for token in tokens:
        token = cell(token).lower()
        if not token:
            continue
        trait = traits_by_token.get(token)
        if trait is None:
            unknown.append(token)
        elif trait not in found:
            found.append(trait)
    return found, unknown


def unknown_trait_params(unknown: list[str], traits: list[Trait]) -> dict:
    """The parameters of the ``unknown_trait`` message: what the file said and what it could have said."""
    return {
        "values": ", ".join(repr(u) for u in unknown),
        "codes": ", ".join(t.code for t in traits),
        "count": len(traits),
    }
