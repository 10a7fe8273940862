"""What a newcomer trips over (#23 items 7 and 9): locking asks for a confirmation that names
what it does and how to undo it, and a locked round's review page is read-only and says
nothing about unsubmitted changes, whatever draft was left behind."""

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import AssignmentStatus, RoundStatus
from annotation.services import assignment_draft_save
from tests.annotation.factories import make_dataset, make_round, make_suggestions, numbered_csv, queue_of, submit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_it_locks_after_a_confirmation_and_shows_the_annotator_a_read_only_answer(
    context_for, live_server, researcher, annotator_a, annotator_b
):
    dataset = make_dataset(name="Khoá vòng", csv=numbered_csv(3))
    round_ = make_round(
        dataset,
        [annotator_a, annotator_b],
        name="Vòng khoá",
        suggestion_set=make_suggestions(dataset, traits=["literal"]),
    )
    mine = queue_of(round_, annotator_a)[0]
    submit(mine, annotator_a, theme="love")
    # A change typed after the submit and never sent: once locked it cannot be sent any more.
    assignment_draft_save(assignment=mine, user=annotator_a, data={"theme": "virtues", "note": "nháp bỏ dở"})
    mine.refresh_from_db()
    assert mine.status == AssignmentStatus.SUBMITTED and mine.draft

    rp = context_for(researcher)
    rp.goto(live_server.url + reverse("annotation:round_detail", args=[round_.pk]))
    step = rp.get_by_test_id("lock-step")
    expect(step).to_contain_text(
        "I understand: annotators can no longer submit or change their answers in “Vòng khoá”."
    )
    expect(step).to_contain_text("1 of 6 answers are in.")
    expect(step).to_contain_text("Reopen for annotators")
    step.get_by_role("button", name="Lock the round").click()
    expect(rp.get_by_role("alert")).to_have_text("Tick “I understand” to lock the round.")
    expect(rp.get_by_test_id("round-status")).to_have_text("Open for review")
    round_.refresh_from_db()
    assert round_.status == RoundStatus.OPEN
    rp.get_by_role("checkbox", name=re.compile("I understand: annotators")).check()
    rp.get_by_test_id("lock-step").get_by_role("button", name="Lock the round").click()
    expect(rp.get_by_test_id("round-status")).to_have_text("Locked (adjudication)")
    expect(rp.get_by_role("button", name="Reopen for annotators")).to_be_visible()

    ap = context_for(annotator_a)
    ap.goto(live_server.url + reverse("annotation:review_item", args=[round_.pk, mine.pk]))
    main = ap.locator("main")
    expect(main).to_contain_text("This round is locked: answers can no longer change.")
    expect(ap.get_by_test_id("review-state")).to_have_text("Your submitted answer, read-only.")
    expect(main).not_to_contain_text("unsubmitted")
    expect(main).not_to_contain_text("nháp bỏ dở")
    expect(ap.locator("#review-form button")).to_have_count(0)
    love = ap.locator('input[name="theme"][value="love"]')
    expect(love).to_be_checked()
    expect(love).to_be_disabled()
    # The theme keys change nothing on a locked item.
    ap.locator("#review-expression").focus()
    ap.keyboard.press("2")
    expect(love).to_be_checked()
