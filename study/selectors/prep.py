"""Reads of a study's preparation for the terms page: the Chinese artworks with their terms and
descriptions, the sentence pairs and their matched rows, and the term counts."""

from ..models import Artwork, Culture, DescriptionPair, Study, Term, TermStatus

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
    """``sections``: each Chinese artwork with its ``terms``, the ``shown`` ones (not rejected) and its
    ``descriptions``; ``pairs``: each sentence pair with its matched ``rows``; ``counts`` by term status."""
    artworks = list(
        Artwork.objects.filter(study=study, culture=Culture.CHINESE)
        .prefetch_related("descriptions", "terms__confirmed_by")
        .order_by("position")
    )
    sections = []
    for artwork in artworks:
        terms = list(artwork.terms.all())
        sections.append(
            {
                "artwork": artwork,
                "terms": terms,
                "shown": [t for t in terms if t.status in SHOWN_STATUSES],
                "descriptions": list(artwork.descriptions.all()),
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
    }


def study_term_find(*, study: Study, pk) -> Term | None:
    """A term of this study by its id as posted (anything else, or a missing id, finds nothing)."""
    if not str(pk or "").isdigit():
        return None
    return Term.objects.filter(pk=pk, artwork__study=study).select_related("artwork").first()


def term_study(*, term: Term) -> Study:
    """The study of a term as stored now: its status decides whether the term's row is editable."""
    return Study.objects.get(pk=term.artwork.study_id)
