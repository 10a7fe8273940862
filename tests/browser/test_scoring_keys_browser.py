"""Score entry with the keyboard, as raters type it (issue 21): digits and Tab never skip, overwrite or
land in the note, and a blank dimension is refused by name.

The README once said "Tab moves between dimensions" while a digit already moved on: a rater typing
digit, Tab, digit, Tab skipped every other dimension, the last Tab reached the note and the next
digit was typed there (an item was saved with a blank dimension and the note "1"). Here a rater
types whole items with digits and Tab, with digits alone, with "cannot judge" (x), and submits an
item with a blank dimension; every dimension stored is checked.
"""

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Dataset
from annotation.services import expression_import
from core.roles import ANNOTATOR
from evaluation.models import HumanRating, ItemStatus, PromptTemplate, RatingStatus, Run, RunItem, RunKind, RunStatus
from evaluation.services.scoring import scoring_task_create
from llm.models import ModelConfig, Provider
from tests.conftest import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CORPUS = {
    "Nước chảy đá mòn": ("Kiên trì thì việc khó cũng xong.", "Cứ kiên trì mãi thì việc gì cũng thành."),
    "Tốt gỗ hơn tốt nước sơn": ("Phẩm chất quý hơn vẻ ngoài.", "Gỗ tốt thì bền hơn lớp sơn đẹp."),
    "Ăn cháo đá bát": ("Chê kẻ vô ơn.", "Nói người được giúp rồi quay lại hại ân nhân."),
    "Uống nước nhớ nguồn": ("Nhớ ơn người đi trước.", "Biết ơn cội nguồn, tổ tiên."),
}
DIMENSIONS = ("accuracy", "completeness", "native_alignment", "score")
ITEM_URL = re.compile(r"/evaluation/scoring/\d+/ratings/\d+/$")


def _task(rater):
    rows = "\n".join(f'"{text}","{reference}"' for text, (reference, _) in CORPUS.items())
    expression_import(
        dataset_name="Phím chấm", filename="phim.csv", content=f"expression,explanation\n{rows}\n".encode()
    )
    dataset = Dataset.objects.get(name="Phím chấm")
    model = ModelConfig.objects.create(
        name="mo-hinh", provider=Provider.OPENAI, base_url="http://127.0.0.1:9/v1", model_id="mo-hinh"
    )
    prompt = PromptTemplate.objects.create(
        name="zero-shot", kind="generation", messages=[{"role": "user", "content": "{phrase}"}], content_hash="keys"
    )
    run = Run.objects.create(
        kind=RunKind.GENERATION,
        model=model,
        prompt=prompt,
        dataset=dataset,
        strategy="zero-shot",
        status=RunStatus.DONE,
    )
    for expression in dataset.expressions.all():
        RunItem.objects.create(
            run=run, expression=expression, status=ItemStatus.DONE, response=CORPUS[expression.text][1]
        )
    return scoring_task_create(name="Chấm bằng phím", run=run, raters=[rater], n_items=4, n_shared=0, seed=3)


def _current(page):
    return page.locator("#scoring-form [data-dimension].is-current")


def _start_item(page) -> str:
    expect(page).to_have_url(ITEM_URL)
    # scoring.js marks the current dimension once the item has settled; keys before that would be lost.
    expect(_current(page)).to_have_attribute("data-dimension", "accuracy")
    return page.locator("#scoring-expression").inner_text()


def _submit(page, text: str) -> None:
    page.keyboard.press("Enter")
    expect(page.locator("#scoring-panel")).to_contain_text(f"Saved “{text}”.")


def _stored(task, rater, text: str) -> HumanRating:
    return HumanRating.objects.get(task=task, rater=rater, item__expression__text=text)


def _focused_name(page) -> str:
    return page.evaluate("() => (document.activeElement && document.activeElement.name) || ''")


def test_it_stores_every_dimension_typed_with_digits_and_tab(context_for, live_server):
    rater = make_user("rater_keys", ANNOTATOR)
    task = _task(rater)
    page = context_for(rater)
    page.goto(f"{live_server.url}/evaluation/scoring/{task.pk}/queue/")

    # Item 1: digit, Tab, digit, Tab... as the README's "Tab moves on" suggests, then a stray digit.
    first = _start_item(page)
    for value in ("4", "3", "5", "2"):
        page.keyboard.press(value)
        page.keyboard.press("Tab")
    # Every dimension has its score: the focus is on the submit button, not in the note.
    expect(page.locator("[data-scoring-submit]")).to_be_focused()
    page.keyboard.press("1")
    assert page.locator("#id_note").input_value() == ""
    for dimension, value in zip(DIMENSIONS, ("4", "3", "5", "2"), strict=True):
        expect(page.locator(f'[data-dimension="{dimension}"] input[value="{value}"]')).to_be_checked()
    _submit(page, first)
    rating = _stored(task, rater, first)
    assert (rating.accuracy, rating.completeness, rating.native_alignment, rating.score) == (4, 3, 5, 2)
    assert rating.note == "" and rating.status == RatingStatus.SUBMITTED

    # Item 2: digits alone.
    second = _start_item(page)
    for value in ("5", "4", "3", "2"):
        page.keyboard.press(value)
    expect(page.locator("[data-scoring-submit]")).to_be_focused()
    _submit(page, second)
    rating = _stored(task, rater, second)
    assert (rating.accuracy, rating.completeness, rating.native_alignment, rating.score) == (5, 4, 3, 2)

    # Item 3: a Tab too many skips a dimension on purpose; the next digits fill the others, and
    # the last one goes back to the dimension left blank rather than into the note.
    third = _start_item(page)
    page.keyboard.press("1")  # accuracy; completeness is highlighted now
    page.keyboard.press("Tab")  # confirms completeness
    page.keyboard.press("Tab")  # on purpose: on to native alignment
    expect(_current(page)).to_have_attribute("data-dimension", "native_alignment")
    page.keyboard.press("2")  # native alignment
    page.keyboard.press("3")  # overall
    expect(_current(page)).to_have_attribute("data-dimension", "completeness")
    page.keyboard.press("0")  # completeness, left blank before
    expect(page.locator("[data-scoring-submit]")).to_be_focused()
    _submit(page, third)
    rating = _stored(task, rater, third)
    assert (rating.accuracy, rating.completeness, rating.native_alignment, rating.score) == (1, 0, 2, 3)
    assert rating.note == ""

    # Item 4: a blank dimension is refused by name; "cannot judge" (x) is an answer.
    fourth = _start_item(page)
    page.keyboard.press("x")  # accuracy: cannot judge
    page.keyboard.press("Tab")
    page.keyboard.press("ArrowDown")  # past completeness, leaving it blank
    page.keyboard.press("4")  # native alignment
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")  # submitted with completeness and overall blank
    panel = page.locator("#scoring-panel")
    expect(panel).to_contain_text("Interpretive completeness: choose a score from 0 to 5, or “cannot judge”.")
    expect(panel).to_contain_text("Overall score: choose a score from 0 to 5")
    assert _stored(task, rater, fourth).status != RatingStatus.SUBMITTED
    page.screenshot(path="/tmp/score-keys-refused.png", full_page=True)
    # The refused item starts on the first blank dimension, with what was typed kept.
    expect(_current(page)).to_have_attribute("data-dimension", "completeness")
    expect(page.locator('[data-dimension="accuracy"] input[value="na"]')).to_be_checked()
    page.keyboard.press("3")
    page.keyboard.press("Tab")
    page.keyboard.press("5")
    page.keyboard.press("Tab")
    assert _focused_name(page) != "note"
    _submit(page, fourth)
    rating = _stored(task, rater, fourth)
    assert (rating.accuracy, rating.completeness, rating.native_alignment, rating.score) == (None, 3, 4, 5)
    expect(page.locator("#scoring-panel")).to_contain_text("You have scored every item of this task.")
    assert HumanRating.objects.filter(task=task, rater=rater, status=RatingStatus.SUBMITTED).count() == 4
