"""The review page times each answer itself and sends the seconds with it (README "Annotator quality")."""

import pytest

from annotation.models import Assignment, Dataset
from annotation.services import expression_import, round_create
from core.roles import ANNOTATOR
from tests.conftest import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CORPUS = "expression,explanation\nNước chảy đá mòn,Bền bỉ.\nĂn cháo đá bát,Vô ơn.\nTấc đất tấc vàng,Đất quý.\n"


def test_it_sends_the_seconds_each_item_was_on_screen(context_for, live_server):
    annotator = make_user("annotator_a", ANNOTATOR)
    expression_import(dataset_name="Đồng hồ", filename="d.csv", content=CORPUS.encode())
    dataset = Dataset.objects.get(name="Đồng hồ")
    round_ = round_create(name="Vòng giờ", dataset=dataset, annotators=[annotator], annotators_per_item=1)
    page = context_for(annotator)
    page.goto(f"{live_server.url}/rounds/{round_.pk}/review/")
    heading = page.locator("#review-expression")
    first = heading.inner_text()
    page.wait_for_timeout(1200)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => document.querySelector('#review-expression').innerText !== {first!r}")
    # The second item, answered after its own display (the clock restarted with the htmx swap).
    # The heading changes a few milliseconds before the clock restarts (after the swap settles), so
    # the wait is twice the lower bound asserted below.
    page.wait_for_timeout(600)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#review-expression').length === 1")
    page.wait_for_timeout(500)
    answered = list(Assignment.objects.filter(item__round=round_, submitted_at__isnull=False).order_by("submitted_at"))
    assert len(answered) >= 2
    assert 1.2 <= answered[0].seconds < 30
    # Its own clock: it started when the item appeared, not when the page was first loaded.
    assert 0.3 <= answered[1].seconds < answered[0].seconds
