"""Small things a newcomer notices (#12 item 10): the search placeholder, the Vietnamese header,
wide statistics tables and one date format per language, seen in Chromium at laptop width."""

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.annotation.test_agreement import build_round

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning"),
]

# The placeholder's rendered width against the room the input leaves for text.
PLACEHOLDER_ROOM = """(input) => {
  const style = getComputedStyle(input);
  const context = document.createElement("canvas").getContext("2d");
  context.font = style.font;
  const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {text: context.measureText(input.placeholder).width, room};
}"""

# How many rows the header's items take: items on one row share their vertical middle.
NAV_ROWS = """(nav) => {
  const middles = [...nav.querySelectorAll(":scope > ul > li")].map((li) => {
    const box = li.getBoundingClientRect();
    return box.top + box.height / 2;
  });
  return {rows: new Set(middles.map((m) => Math.round(m / 24))).size, spread: Math.max(...middles) - Math.min(...middles)};
}"""

# Each wide table's wrapper scrolls, and once scrolled to the end its last header cell is inside it.
TABLE_REACH = """(wrapper) => {
  const table = wrapper.querySelector("table");
  wrapper.scrollLeft = wrapper.scrollWidth;
  const last = table.querySelector("thead tr:last-child th:last-child").getBoundingClientRect();
  const box = wrapper.getBoundingClientRect();
  return {overflowX: getComputedStyle(wrapper).overflowX, fits: wrapper.scrollWidth <= wrapper.clientWidth,
          reachable: last.left >= box.left - 1 && last.right <= box.right + 1};
}"""


def switch_language(page, code: str) -> None:
    with page.expect_navigation():
        page.locator("#language-select").select_option(code)
    expect(page.locator("html")).to_have_attribute("lang", code)


def test_it_fits_the_placeholder_the_header_the_tables_and_shows_one_date_format(
    context_for, live_server, researcher, annotator_a, annotator_b, adjudicator
):
    round_, _labels = build_round(annotators=[annotator_a, annotator_b, adjudicator], name="Vòng gọn", n_items=8)
    dataset_url = live_server.url + reverse("annotation:dataset_detail", args=[round_.dataset_id])
    page = context_for(researcher)

    page.goto(dataset_url)
    for code in ("en", "vi"):
        if code != "en":
            switch_language(page, code)
        search = page.locator("input[type=search]")
        measured = search.evaluate(PLACEHOLDER_ROOM)
        assert measured["text"] <= measured["room"], (code, measured)

        nav = page.locator("header nav")
        rows = nav.evaluate(NAV_ROWS)
        assert rows["rows"] == 1 and rows["spread"] < 12, (code, rows)

        page.goto(live_server.url + reverse("annotation:round_detail", args=[round_.pk]))
        created = page.locator("dd time").first
        pattern = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC" if code == "en" else r"\d\d/\d\d/\d{4} \d\d:\d\d UTC"
        expect(created).to_have_text(re.compile(rf"^{pattern}$"))
        page.goto(dataset_url)

    # Vietnamese column names are the longest: every table of the agreement page is reachable to its last column.
    page.goto(live_server.url + reverse("annotation:round_stats", args=[round_.pk]))
    wrappers = page.locator("main .table-scroll:has(> table)")
    assert wrappers.count() >= 5
    for index in range(wrappers.count()):
        reach = wrappers.nth(index).evaluate(TABLE_REACH)
        assert reach["overflowX"] == "auto" and reach["reachable"], (index, reach)
    # The first table, with the most columns, fits without scrolling once its headers may wrap.
    assert wrappers.first.evaluate(TABLE_REACH)["fits"]
