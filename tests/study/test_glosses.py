"""Which glosses an artwork page shows: the confirmed terms with a label, read afresh for each page."""

import pytest

from study.models import Culture, Term, TermSource, TermStatus
from study.selectors.participants import artwork_glosses

from .factories import make_study

pytestmark = pytest.mark.django_db


def chinese_artworks():
    artworks = list(make_study().artworks.filter(culture=Culture.CHINESE, is_qc=False).order_by("pk")[:2])
    Term.objects.filter(artwork__in=artworks).delete()
    return artworks


def add(artwork, term, zh, status=TermStatus.CONFIRMED):
    Term.objects.create(artwork=artwork, term=term, zh=zh, source=TermSource.LLM, status=status)


def test_it_glosses_only_the_confirmed_terms_that_have_a_label():
    artwork, _other = chinese_artworks()
    add(artwork, "peony", "牡丹")
    add(artwork, "crane", "鹤", status=TermStatus.FOUND)
    add(artwork, "silk", "  ")
    add(artwork, "plum blossom", "梅花")

    assert artwork_glosses(artwork=artwork) == {"peony": "牡丹", "plum blossom": "梅花"}


def test_it_shows_a_term_confirmed_after_the_page_before_and_no_other_artworks_terms():
    artwork, other = chinese_artworks()
    add(other, "silk", "丝绸")
    add(artwork, "peony", "牡丹")
    assert artwork_glosses(artwork=artwork) == {"peony": "牡丹"}

    add(artwork, "crane", "鹤", status=TermStatus.FOUND)
    Term.objects.filter(artwork=artwork, term="crane").update(status=TermStatus.CONFIRMED)

    assert artwork_glosses(artwork=artwork) == {"crane": "鹤", "peony": "牡丹"}
    assert artwork_glosses(artwork=other) == {"silk": "丝绸"}


def test_it_glosses_nothing_on_an_artwork_of_another_culture():
    artwork = make_study().artworks.exclude(culture=Culture.CHINESE).first()
    add(artwork, "bald eagle", "白头海雕")

    assert artwork_glosses(artwork=artwork) == {}
