"""Every page of the demo, for every role, reads as words (#23 items 10 and 11): dates in the one
format of the reader's language, never raw ISO 8601; counts of one in the singular; codes by their
labels; a missing interval said, not printed as "[—, —]"; no word said twice in a row.

The pages are those a person reaches by links from the home page once the demo has been walked
through (tests/site/demo_world.py). Machine-readable text is left alone: attributes (a <time>'s
datetime), code, pre, kbd and samp elements, and the JSON and CSV downloads, which the crawl
does not open.
"""

import re

import pytest
from django.db import transaction
from django.test import override_settings
from django.urls import reverse

from artworks.models import ArtworkPipelineRun
from tests.site.demo_world import ROLES, USERNAMES, build_demo_world, crawl, signed_in, visible_text

# The database has to exist for the module's world (pytest-django sets up only what marked tests use).
pytestmark = pytest.mark.django_db

ISO_MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
# "1 items", but not "Table 1 prints", "0.1 s" or "#1 runs".
ONE_PLURAL = re.compile(r"(?<![\w.,/#=×-])(?<!Table )(?<!Figure )(?<!Eq\. )1 ([a-z]+s)\b")
# Verbs and singular nouns ending in s that may follow a 1.
ONE_ALLOWED = frozenset({"means", "prints", "is", "was", "has", "does", "gives", "shows", "always", "plus", "minus"})
SNAKE_CODE = re.compile(r"\b[a-z]+_[a-z_]+\b")
# Words a page shows as data: the demo's people, and the CSV column the demo dataset's description names.
CODE_ALLOWED = USERNAMES | {"english_gloss"}
EMPTY_INTERVAL = re.compile(r"\[\s*[—–-]?\s*,\s*[—–-]?\s*\]")
# "a american": an article before a vowel (not u, as in "a user", nor "one").
WRONG_ARTICLE = re.compile(r"\b[Aa] (?!one\b|once\b)[aeio][a-z]+\b")
# The same word on both sides of a separator: "aspect · aspect".
SAID_TWICE = re.compile(r"\b([A-Za-z][\w-]+) · \1\b")


@pytest.fixture(scope="module")
def pages(django_db_setup, django_db_blocker, tmp_path_factory) -> dict[str, dict[str, str]]:
    """{role: {path: HTML}} of the walked demo, built once and rolled back at the end."""
    with (
        override_settings(MEDIA_ROOT=tmp_path_factory.mktemp("media")),
        django_db_blocker.unblock(),
    ):
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            world = build_demo_world()
            # The Table 1 report of an artwork run has no link yet; a researcher opens it by its address.
            reports = tuple(reverse("artworks:report", args=[run.pk]) for run in ArtworkPipelineRun.objects.all())
            yield {
                role: crawl(signed_in(world.users[role]), also=reports if role == "researcher" else ())
                for role in ROLES
            }
        finally:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


def findings(pages: dict[str, str], check) -> list[str]:
    found = []
    for path, html in pages.items():
        texts = visible_text(html)
        found += [f"{path}: {problem}" for problem in check(texts)]
    return sorted(set(found))


@pytest.mark.parametrize("role", ROLES)
def test_it_reaches_the_pages_a_role_works_on(pages, role):
    """The crawl itself: a scan of three pages would pass everything below."""
    shapes = {re.sub(r"\d+", "N", path.split("?")[0]) for path in pages[role]}
    expected = {
        "researcher": {
            "/rounds/N/quality/",
            "/rounds/N/stats/",
            "/evaluation/models/",
            "/evaluation/runs/N/",
            "/evaluation/runs/N/bias/",
            "/evaluation/runs/N/human-report/",
            "/artworks/runs/N/",
            "/artworks/runs/N/artworks/N/",
            "/artworks/runs/N/report/",
            "/studies/demo-artworks/",
            "/studies/demo-artworks/results/",
            "/studies/demo-artworks/prolific/",
        },
        "annotator_a": {"/rounds/", "/rounds/N/my-items/", "/rounds/N/review/N/", "/evaluation/scoring/mine/"},
        "adjudicator": {"/rounds/N/adjudicate/", "/rounds/N/quality/", "/rounds/N/items/N/"},
    }[role]
    assert expected <= shapes, sorted(expected - shapes)


@pytest.mark.parametrize("role", ROLES)
def test_it_shows_every_date_in_the_readers_format_never_as_iso_text(pages, role):
    def check(texts):
        return [text for text in texts if ISO_MOMENT.search(text)]

    assert findings(pages[role], check) == []


@pytest.mark.parametrize("role", ROLES)
def test_it_says_one_in_the_singular(pages, role):
    def check(texts):
        return [text for text in texts for word in ONE_PLURAL.findall(text) if word not in ONE_ALLOWED]

    assert findings(pages[role], check) == []


@pytest.mark.parametrize("role", ROLES)
def test_it_shows_codes_by_their_labels(pages, role):
    def check(texts):
        return [text for text in texts if set(SNAKE_CODE.findall(text)) - CODE_ALLOWED]

    assert findings(pages[role], check) == []


@pytest.mark.parametrize("role", ROLES)
def test_it_says_an_interval_is_missing_and_writes_articles_and_labels_once(pages, role):
    def check(texts):
        problems = [text for text in texts if EMPTY_INTERVAL.search(text) or WRONG_ARTICLE.search(text)]
        # Across text nodes: "aspect · " and a link "aspect" read as one line.
        line = " ".join(texts)
        return problems + [match.group(0) for match in SAID_TWICE.finditer(line)]

    assert findings(pages[role], check) == []
