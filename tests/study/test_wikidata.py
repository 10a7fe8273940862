"""Wikidata lookups against the loopback fake: label fallbacks, backoff, User-Agent and the cache."""

import pytest

from study.models import WikidataLookup
from study.wikidata import WikidataError, wikidata_label
from tests.study.fake_wikidata import fake_wikidata  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


def test_it_prefers_the_simplified_chinese_label(fake_wikidata):  # noqa: F811
    result = wikidata_label("Peony")

    assert (result.qid, result.zh, result.language) == ("Q171497", "牡丹", "zh-hans")
    search, entities = fake_wikidata.requests
    assert search["params"] == {
        "action": "wbsearchentities",
        "search": "Peony",
        "language": "en",
        "uselang": "en",
        "type": "item",
        "limit": "1",
        "format": "json",
        "maxlag": "5",
    }
    assert entities["params"]["action"] == "wbgetentities"
    assert entities["params"]["ids"] == "Q171497"
    assert entities["params"]["props"] == "labels"
    assert set(entities["params"]["languages"].split("|")) == {"zh-hans", "zh-cn", "zh", "mul"}
    assert entities["params"]["maxlag"] == "5"


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("crane", ("Q25420", "鹤", "zh")),
        ("shan shui", ("Q1146395", "山水画", "zh-cn")),
        ("qilin", ("Q1058469", "麒麟", "mul")),
    ],
)
def test_it_falls_back_from_zh_hans_to_zh_cn_zh_and_mul(fake_wikidata, term, expected):  # noqa: F811
    result = wikidata_label(term)
    assert (result.qid, result.zh, result.language) == expected
    assert result.found


def test_it_reports_a_term_without_an_item_or_without_a_chinese_label(fake_wikidata):  # noqa: F811
    missing = wikidata_label("flibbertigibbet")
    assert (missing.qid, missing.zh, missing.found) == ("", "", False)
    assert fake_wikidata.actions() == ["wbsearchentities"]

    unlabelled = wikidata_label("calligraphy")
    assert (unlabelled.qid, unlabelled.zh, unlabelled.found) == ("Q12681", "", False)


def test_it_searches_a_plural_term_again_in_the_singular(fake_wikidata):  # noqa: F811
    # Wikidata has no item for this one: both numbers are asked, then the miss is cached.
    assert wikidata_label("Red-crowned  cranes").found is False
    searches = [r["params"]["search"] for r in fake_wikidata.requests if r["params"]["action"] == "wbsearchentities"]
    assert searches == ["Red-crowned cranes", "Red-crowned crane"]

    fake_wikidata.requests.clear()
    cranes = wikidata_label("cranes")
    assert (cranes.qid, cranes.zh, cranes.found) == ("Q25420", "鹤", True)
    assert fake_wikidata.actions() == ["wbsearchentities", "wbsearchentities", "wbgetentities"]
    assert [r["params"].get("search") for r in fake_wikidata.requests][:2] == ["cranes", "crane"]
    # Cached under the term as asked: no request the second time.
    fake_wikidata.requests.clear()
    assert wikidata_label("Cranes").zh == "鹤" and fake_wikidata.requests == []


def test_it_asks_once_for_a_term_found_as_written_or_already_singular(fake_wikidata):  # noqa: F811
    assert wikidata_label("crane").zh == "鹤"
    assert wikidata_label("flibbertigibbet").found is False
    searches = [r["params"]["search"] for r in fake_wikidata.requests if r["params"]["action"] == "wbsearchentities"]
    assert searches == ["crane", "flibbertigibbet"]


def test_it_sends_a_descriptive_user_agent(fake_wikidata):  # noqa: F811
    wikidata_label("peony")
    assert {r["headers"]["User-Agent"] for r in fake_wikidata.requests} == {
        "VIVIDStudioTests/1.0 (test suite; research@example.org)"
    }


def test_it_backs_off_when_rate_limited_then_succeeds(fake_wikidata, settings):  # noqa: F811
    settings.WIKIDATA_MAX_ATTEMPTS = 4
    fake_wikidata.busy(times=2)
    fake_wikidata.busy(times=1, code="maxlag", retry_after="0")

    result = wikidata_label("peony")

    assert result.zh == "牡丹"
    assert [r["error"] for r in fake_wikidata.requests] == ["ratelimited", "ratelimited", "maxlag", "", ""]


def test_it_backs_off_on_http_429(fake_wikidata):  # noqa: F811
    fake_wikidata.busy(times=1, status=429, retry_after="0")
    assert wikidata_label("crane").zh == "鹤"
    assert [r["status"] for r in fake_wikidata.requests] == [429, 200, 200]


def test_it_gives_up_after_the_last_attempt_with_a_clear_error(fake_wikidata, settings):  # noqa: F811
    settings.WIKIDATA_MAX_ATTEMPTS = 3
    fake_wikidata.busy(times=10)

    with pytest.raises(WikidataError, match=r"still busy after 3 attempts \(ratelimited\)"):
        wikidata_label("peony")

    assert len(fake_wikidata.requests) == 3
    # A refusal is not an answer: nothing is cached, so the next run asks again.
    assert not WikidataLookup.objects.exists()


def test_it_refuses_an_unexpected_api_error(fake_wikidata):  # noqa: F811
    fake_wikidata.busy(times=1, code="badtoken")
    with pytest.raises(WikidataError, match="badtoken"):
        wikidata_label("peony")
    assert len(fake_wikidata.requests) == 1


def test_it_asks_each_term_once_including_misses(fake_wikidata):  # noqa: F811
    wikidata_label("Peony")
    wikidata_label("flibbertigibbet")
    asked = len(fake_wikidata.requests)

    again = wikidata_label("  peony ")
    miss = wikidata_label("FLIBBERTIGIBBET")

    assert len(fake_wikidata.requests) == asked == 3
    assert (again.qid, again.zh, again.language) == ("Q171497", "牡丹", "zh-hans")
    assert not miss.found
    assert set(WikidataLookup.objects.values_list("query", flat=True)) == {"peony", "flibbertigibbet"}
