"""Reads of a study's preparation for the terms page: the Chinese artworks with their terms and
descriptions, the sentence pairs and their matched rows, the term counts, and the confirmed terms
that occur in no description (their gloss would never reach a participant)."""

from ..models import Artwork, Culture, Description, DescriptionPair, Study, Term, TermStatus
from ..text import term_find

# Terms the page marks in the descriptions: every one not rejected.
SHOWN_STATUSES = [s for s in TermStatus.values if s != TermStatus.REJECTED]


def _pair_rows(pair: DescriptionPair) -> list[dict]:
    base, pragmatic = pair.base.sentences, pair.pragmatic.sentences
    rows = []
    for i, j, cosine in pair.matches:
        if i < len(base) and j < len(pragmatic):
            rows.append({"base": base[i], "pragmatic": pragmatic[j], "cosine": cosine, "i": i, "j": j})
    return rows


def study_terms_review(*, study: Study) -> dict:
    """``sections``: each Chinese artwork with its ``terms`` (each with ``in_descriptions``), the ``shown``
    ones (not rejected) and its ``descriptions``; ``pairs``: each sentence pair with its matched ``rows``;
    ``counts`` by term status; ``unmatched``: each confirmed term found in no description of its artwork."""
    artworks = list(
        Artwork.objects.filter(study=study, culture=Culture.CHINESE)
        .prefetch_related("descriptions", "terms__confirmed_by")
        .order_by("position")
    )
    sections = []
    for artwork in artworks:
        terms = list(artwork.terms.all())
        descriptions = list(artwork.descriptions.all())
        for term in terms:
            term.in_descriptions = _occurs(term.term, [d.text for d in descriptions])
        sections.append(
            {
                "artwork": artwork,
                "terms": terms,
                "shown": [t for t in terms if t.status in SHOWN_STATUSES],
                "descriptions": descriptions,
            }
        )
    pairs = (
        DescriptionPair.objects.filter(artwork__study=study)
        .select_related("artwork", "base", "pragmatic")
        .order_by("artwork__position", "listener")
    )
    counts = {status: 0 for status in TermStatus.values}
    for section in sections:
        for term in section["terms"]:
            counts[term.status] += 1
    return {
        "sections": sections,
        "pairs": [{"pair": pair, "rows": _pair_rows(pair)} for pair in pairs],
        "counts": counts,
        "unmatched": [
            {"artwork": section["artwork"], "term": term}
            for section in sections
            for term in section["terms"]
            if term.status == TermStatus.CONFIRMED and not term.in_descriptions
        ],
    }


def _occurs(term: str, texts) -> bool:
    """Whether the term occurs, in any inflected form, in one of the texts (see text.term_pattern)."""
    return any(term_find(term, text) for text in texts)


def study_terms_unmatched(*, study: Study) -> list[Term]:
    """The confirmed terms of the study's Chinese artworks that occur in none of their artwork's
    descriptions, in package order: participants would never see their Chinese label."""
    terms = list(
        Term.objects.filter(artwork__study=study, artwork__culture=Culture.CHINESE, status=TermStatus.CONFIRMED)
        .select_related("artwork")
        .order_by("artwork__position", "term")
    )
    if not terms:
        return []
    texts: dict[int, list[str]] = {}
    for artwork_id, text in Description.objects.filter(artwork_id__in={t.artwork_id for t in terms}).values_list(
        "artwork_id", "text"
    ):
        texts.setdefault(artwork_id, []).append(text)
    return [term for term in terms if not _occurs(term.term, texts.get(term.artwork_id, []))]


def term_in_descriptions(*, term: Term) -> bool:
    """Whether the term occurs, in any inflected form, in a description of its artwork."""
    return _occurs(term.term, Description.objects.filter(artwork_id=term.artwork_id).values_list("text", flat=True))


def study_term_find(*, study: Study, pk) -> Term | None:
    """A term of this study by its id as posted (anything else, or a missing id, finds nothing)."""
    if not str(pk or "").isdigit():
        return None
    return Term.objects.filter(pk=pk, artwork__study=study).select_related("artwork").first()


def term_study(*, term: Term) -> Study:
    """The study of a term as stored now: its status decides whether the term's row is editable."""
    return Study.objects.get(pk=term.artwork.study_id)
