"""A culture term is found in the forms running text gives it (plural, possessive, case, hyphen or
space, an inflected last word) and never inside another word."""

import pytest

from study.text import gloss_html, term_find, term_forms, term_matches, term_singular, terms_same

# (term, text, the occurrence found as written there)
FOUND = [
    ("mandarin duck", "Two mandarin ducks swim side by side.", "mandarin ducks"),
    ("red-crowned crane", "Two red-crowned cranes stand on a rock.", "red-crowned cranes"),
    ("crane", "A crane stands on one leg.", "crane"),
    ("crane", "Cranes fly over the sea.", "Cranes"),
    ("crane", "the crane's long neck", "crane's"),
    ("crane", "the crane\u2019s long neck", "crane\u2019s"),
    ("crane", "the cranes' nests", "cranes'"),
    ("crane", "THE CRANE", "CRANE"),
    ("red-crowned crane", "Two red crowned cranes", "red crowned cranes"),
    ("red-crowned crane", "RED\u2011CROWNED CRANES at dawn", "RED\u2011CROWNED CRANES"),
    ("red-crowned crane", "a red-crowned\n  crane", "red-crowned crane"),
    ("red-crowned crane", "as long as the red-crowned crane's life", "red-crowned crane's"),
    ("red crowned crane", "a red-crowned crane", "red-crowned crane"),
    ("plum blossom", "white plum-blossoms in snow", "plum-blossoms"),
    ("Mandarin Duck", "a pair of mandarin ducks", "mandarin ducks"),
    ("mandarin ducks", "a single mandarin duck", "mandarin duck"),
    ("mandarin ducks", "the mandarin duck's feathers", "mandarin duck's"),
    ("goose", "wild geese fly south", "geese"),
    ("wild goose", "a line of wild geese", "wild geese"),
    ("geese", "a goose", "goose"),
    ("person", "three people walk", "people"),
    ("ox", "Five Oxen by Han Huang", "Oxen"),
    ("mouse", "two mice", "mice"),
    ("child", "children at play", "children"),
    ("peony", "peonies in bloom", "peonies"),
    ("peonies", "a peony", "peony"),
    ("lily", "lilies", "lilies"),
    ("lotus", "pink lotuses", "lotuses"),
    ("leaf", "fallen leaves", "leaves"),
    ("fox", "two foxes", "foxes"),
    ("dynasty", "several dynasties", "dynasties"),
    ("fish", "the fish swim", "fish"),
    ("goldfish", "three goldfish", "goldfish"),
    ("bodhisattva", "the bodhisattvas", "bodhisattvas"),
    ("Temple of Heaven", "like the temples of heaven", "temples of heaven"),
    ("scholar's rock", "two scholar\u2019s rocks", "scholar\u2019s rocks"),
    ("qilin", "a pair of qilins", "qilins"),
    ("pine tree", "old pine trees", "pine trees"),
    ("crane", "(crane)", "crane"),
    ("crane", "crane-like grace", "crane"),
    ("crane", "a 'crane' in quotes", "crane"),
]

# (term, text): the term is not in the text.
NOT_FOUND = [
    ("crane", "cranesbill grows by the path"),
    ("crane", "a cranefly"),
    ("crane", "Cranesville"),
    ("crane", "the craned neck"),
    ("duck", "a duckling"),
    ("duck", "duckweed on the pond"),
    ("pine", "a pineapple"),
    ("pine", "his spine"),
    ("plum", "plumage"),
    ("ink", "she thinks"),
    ("tea", "a team"),
    ("tea", "steam rises"),
    ("magpie", "magpielike"),
    ("red-crowned crane", "a crowned crane"),
    ("red-crowned crane", "a red crane"),
    ("mandarin duck", "Mandarin is spoken; a duck swims"),
    ("mandarin duck", "mandarin ducklings"),
    ("goose", "gooseberry"),
    ("lotus", "a lot"),
    ("dragon", "dragonfly"),
    ("peony", "peon"),
    ("crane", ""),
]


@pytest.mark.parametrize(("term", "text", "expected"), FOUND)
def test_it_finds_a_term_in_its_inflected_forms(term, text, expected):
    assert term_find(term, text) == expected


@pytest.mark.parametrize(("term", "text"), NOT_FOUND)
def test_it_never_finds_a_term_inside_another_word_or_in_part(term, text):
    assert term_find(term, text) is None


def test_it_finds_nothing_for_an_empty_term_or_one_without_a_word():
    assert term_find("   ", "anything at all") is None
    assert term_forms("") == ()
    assert term_matches("a crane", ["", "  "]) == []
    # Hyphens alone would otherwise match the empty string at every position.
    for term in ("-", " - ", "\u2010-"):
        assert term_find(term, "a - b") is None
        assert term_matches("a - b", [term]) == []
        assert gloss_html("a - b", {term: "x"}) == "a - b"


def test_it_prefers_the_longer_term_where_two_start_together():
    text = "Plum blossoms, a plum and red-crowned cranes near a crane."
    found = [(text[start:end], term) for start, end, term in term_matches(text, ["plum", "plum blossom", "crane"])]
    assert found == [("Plum blossoms", "plum blossom"), ("plum", "plum"), ("cranes", "crane"), ("crane", "crane")]


def test_it_glosses_inflected_forms_for_participants():
    html = gloss_html(
        "Two mandarin ducks & the red crowned crane\u2019s nest; cranesbill <grows>.",
        {"mandarin duck": "鸳鸯", "red-crowned crane": "丹顶鹤", "crane": "鹤"},
    )
    assert html == (
        'Two <span class="term">mandarin ducks<span class="gloss" lang="zh-Hans">（鸳鸯）</span></span>'
        ' &amp; the <span class="term">red crowned crane\u2019s<span class="gloss" lang="zh-Hans">（丹顶鹤）</span>'
        "</span> nest; cranesbill &lt;grows&gt;."
    )


def test_it_escapes_a_term_and_its_label():
    html = gloss_html("A <b> tag & a crane.", {"crane": "<鹤>", "<b>": "x"})
    assert "<b>" not in html and "&lt;鹤&gt;" in html and "crane<span" in html


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("mandarin duck", "Mandarin ducks", True),
        ("red-crowned crane", "red crowned cranes", True),
        ("goose", "geese", True),
        ("lotus", "lotuses", True),
        ("crane", "crane", True),
        ("crane", "cranesbill", False),
        ("crane", "red-crowned crane", False),
        ("plum", "plum blossom", False),
    ],
)
def test_it_tells_one_term_in_two_numbers_from_two_terms(first, second, same):
    assert terms_same(first, second) is same
    assert terms_same(second, first) is same


@pytest.mark.parametrize(
    ("term", "singular"),
    [
        ("mandarin ducks", "mandarin duck"),
        ("red-crowned cranes", "red-crowned crane"),
        ("geese", "goose"),
        ("crane", "crane"),
        ("  plum   blossoms ", "plum blossom"),
    ],
)
def test_it_names_the_singular_of_a_term(term, singular):
    assert term_singular(term) == singular
