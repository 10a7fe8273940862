"""Issue 12, item 9: keys typed while the next item swaps in apply to the new item, never lost.

An annotator who knows the shortcuts submits with Enter and types the next
answer at once. The keys that arrive while the request is in flight, or while
htmx settles the new item, are held and replayed on the item that appears.
"""

import json
import re

import pytest
from playwright.sync_api import expect

from annotation.models import AnnotationRound, Dataset
from annotation.services import expression_import, round_create, suggestion_set_create
from core.roles import ANNOTATOR
from tests.conftest import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

TEXTS = ["Nước chảy đá mòn", "Tốt gỗ hơn tốt nước sơn", "Ăn cháo đá bát"]
CORPUS = ("expression,explanation\n" + "".join(f"{t},Giải thích {n}.\n" for n, t in enumerate(TEXTS))).encode()
# Both traits suggested on every item: the rows come in taxonomy order (literal 1, pragmatic 5).
CODES = ["literal", "pragmatic"]


def _round_for(annotator) -> AnnotationRound:
    expression_import(dataset_name="Phím tắt", filename="phim.csv", content=CORPUS)
    dataset = Dataset.objects.get(name="Phím tắt")
    ids = list(dataset.expressions.order_by("id").values_list("id", flat=True))
    suggestions = suggestion_set_create(
        dataset=dataset,
        name="gợi ý",
        model_name="m",
        predictions=[(pk, CODES, json.dumps(CODES)) for pk in ids],
    )
    return round_create(
        name="Vòng phím", dataset=dataset, annotators=[annotator], annotators_per_item=1, suggestion_set=suggestions
    )


def _decision(page, number: int, value: str):
    return page.locator(f'[data-trait-row][data-trait-number="{number}"] input[value="{value}"]')


def test_it_applies_keys_typed_during_the_swap_to_the_next_item(context_for, live_server):
    annotator = make_user("annotator_a", ANNOTATOR)
    round_ = _round_for(annotator)
    page = context_for(annotator)

    # Hold the submit in flight until the test lets it go, so the keys surely arrive mid-swap.
    held = []

    def hold_submits(route):
        request = route.request
        if request.method == "POST" and re.search(r"/review/\d+/$", request.url) and not held:
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(r".*/rounds/\d+/review/.*"), hold_submits)
    page.goto(f"{live_server.url}/rounds/{round_.pk}/review/")
    heading = page.locator("#review-expression")
    page.locator("[data-trait-row].is-current").wait_for()
    first = heading.inner_text()

    page.keyboard.press("a")
    page.keyboard.press("a")
    page.keyboard.press("6")
    expect(_decision(page, 5, "accept")).to_be_checked()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#review-form').classList.contains('htmx-request')")
    # The request is in flight: these belong to the next item, not to the one on the screen.
    page.keyboard.press("r")
    page.keyboard.press("u")
    page.keyboard.press("3")
    expect(_decision(page, 1, "reject")).not_to_be_checked()
    assert len(held) == 1
    held[0].continue_()

    expect(heading).not_to_have_text(first)
    second = heading.inner_text()
    expect(_decision(page, 1, "reject")).to_be_checked()
    expect(_decision(page, 5, "unsure")).to_be_checked()
    expect(page.locator('[data-theme-number="3"] input')).to_be_checked()

    # Without any help from the test: Enter, then the next answer typed at once.
    page.keyboard.press("Enter")
    page.keyboard.press("a")
    page.keyboard.press("r")
    page.keyboard.press("2")
    expect(heading).not_to_have_text(second)
    expect(_decision(page, 1, "accept")).to_be_checked()
    expect(_decision(page, 5, "reject")).to_be_checked()
    expect(page.locator('[data-theme-number="2"] input')).to_be_checked()
    page.keyboard.press("Enter")
    expect(page.locator("#queue-title")).to_have_text("Queue finished")

    answers = {
        a.item.expression.text: (a.theme.number if a.theme else None, a.trait_decisions)
        for a in annotator.assignments.select_related("item__expression", "theme")
    }
    assert answers[first][0] == 6
    assert answers[second] == (3, {"literal": "reject", "pragmatic": "unsure"})
    third = next(t for t in TEXTS if t not in (first, second))
    assert answers[third] == (2, {"literal": "accept", "pragmatic": "reject"})
