"""What a newcomer trips over (#23 item 4), in Chromium: the judge-versus-human report of a run
nobody has scored says what is missing and leads to the New scoring task form for that run, where
it showed screens of zero matrices; the empty Human scoring list leads to the same form."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.evaluation.factories import labelled_csv, make_dataset, make_generation_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_it_leads_from_an_unscored_report_to_the_scoring_task_form_for_its_run(context_for, live_server, researcher):
    run = make_generation_run(make_dataset(name="Chưa chấm", csv=labelled_csv(3)))
    page = context_for(researcher)
    page.goto(live_server.url + reverse("evaluation:human_report", args=[run.pk]))
    empty = page.get_by_test_id("empty-state").first
    expect(empty).to_contain_text("No human scores for this run yet")
    expect(page.get_by_test_id("table1")).to_have_count(0)
    expect(page.locator("table.eval-confusion")).to_have_count(0)
    empty.get_by_role("button", name="New scoring task").click()
    expect(page.get_by_role("heading", name="New scoring task")).to_be_visible()
    expect(page.get_by_label("Generation run")).to_have_value(str(run.pk))

    page.goto(live_server.url + reverse("evaluation:scoring_task_list"))
    empty = page.get_by_test_id("empty-state")
    expect(empty).to_contain_text("No scoring task yet.")
    empty.get_by_role("button", name="New scoring task").click()
    expect(page.get_by_role("heading", name="New scoring task")).to_be_visible()
