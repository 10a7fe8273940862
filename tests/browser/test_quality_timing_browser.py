"""The review page times each answer itself and sends the seconds with it (README "Annotator quality")."""

import pytest

from annotation.models import Assignment, Dataset
from annotation.services import expression_import, round_create
from core.roles import ANNOTATOR
from tests.conftest import make_user
from tests.waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CORPUS = "expression,explanation\nNước chảy đá mòn,Bền bỉ.\nĂn cháo đá bát,Vô ơn.\nTấc đất tấc vàng,Đất quý.\n"


def test_it_sends_the_seconds_each_item_was_on_screen(context_for, live_server):
    annotator = make_user("annotator_a", ANNOTATOR)
    expression_import(dataset_name="Đồng hồ", filename="d.csv", content=CORPUS.encode())
    dataset = Dataset.objects.get(name="Đồng hồ")
    round_ = round_create(name="Vòng giờ", dataset=dataset, annotators=[annotator], annotators_per_item=1)
    page = context_for(annotator)
    # The page's clock is Playwright's: it runs on as usual, and the test moves it on by whole seconds.
    page.clock.install()
    page.goto(f"{live_server.url}/rounds/{round_.pk}/review/")
    heading = page.locator("#review-expression")
    first = heading.inner_text()
    page.clock.fast_forward(5_000)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    # The second item, answered after its own display: its clock starts as the swap settles, when
    # review.js moves the focus to its heading (a few milliseconds after the heading changes).
    page.wait_for_function(
        f"() => {{ const h = document.querySelector('#review-expression');"
        f" return h && h.innerText !== {first!r} && document.activeElement === h; }}"
    )
    page.clock.fast_forward(2_000)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#review-expression').length === 1")
    answered = Assignment.objects.filter(item__round=round_, submitted_at__isnull=False).order_by("submitted_at")
    wait_until(lambda: answered.count() >= 2, timeout=10, explain=lambda: f"{answered.count()} answers stored")
    first_answer, second_answer = list(answered)[:2]
    assert 5 <= first_answer.seconds < 30
    # Its own clock: it started when the item appeared, not when the page was first loaded.
    assert 2 <= second_answer.seconds < first_answer.seconds
