"""Issue 15 in Chromium: a researcher publishes the demo study to (a loopback fake of) Prolific, synthetic
participants take it, and the researcher syncs, approves the valid submissions and pays a bonus, all
from the study's Prolific page.
"""

import os
import random
import shutil

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from prolific.models import BonusBatch, BonusBatchStatus, ProlificStudy, ProlificStudyStatus, ProlificSubmission
from prolific.services import bonuses as bonus_services
from prolific.tasks import prolific_bonus_pay_task
from study.demo import SLUG, write_demo_package
from study.models import Participant, ParticipantStatus, Study, StudyStatus
from study.services.imports import study_import
from study.services.participants import prolific_id_for
from study.services.simulation import HttpTransport, SyntheticParticipant, answer_key, entry_url
from tests.conftest import skip_or_fail
from tests.prolific import fake_prolific as fake_module

from .conftest import CHROMIUM, poll_now

# tests/prolific/conftest.py is not this package's: its fixture comes in here under another name.
prolific_api = fake_module.fake_prolific

# In the PostgreSQL pass of `make test` (pg_pass), so that the two passes take about as long.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.pg_pass,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


@pytest.fixture
def demo_study(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    study = study_import(source=write_demo_package(tmp_path / "demo"), start_prepare=False)
    # The sentence pairs need the embedding model; the participants' pages do not.
    Study.objects.filter(pk=study.pk).update(status=StudyStatus.LIVE, highlight_status="ready", terms_status="ready")
    study.refresh_from_db()
    return study


@pytest.fixture
def researcher_page(context_for, researcher, monkeypatch):
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        skip_or_fail(f"{CHROMIUM} is missing (apt-get install chromium)")
    # The URL conf imports every app's views (scipy and all) on the first request, which can outlast a
    # page load's timeout on a busy machine; the live server shares this process, so import it here.
    reverse("login")
    page = context_for(researcher)
    page.clock.install()
    # The approve button asks "Approve every submission ...?" first (static/js/site.js).
    page.on("dialog", lambda dialog: dialog.accept())
    return page


def take_part(live_server, study, key, *, pid: str, session: str, fail_qc: bool) -> str:
    """A synthetic participant over HTTP, arriving as Prolific sends them (their PID and submission id)."""
    participant = SyntheticParticipant(HttpTransport(), key=key, rng=random.Random(pid), fail_qc=fail_qc)
    outcome = participant.run(entry_url(live_server.url, study.slug, pid=pid, group="american", session=session), pid)
    assert not outcome.errors, outcome.errors
    return outcome.final_url


def message(page):
    return page.locator("main .message[role=status]")


def test_it_publishes_the_demo_study_follows_the_participants_approves_and_pays_a_bonus(
    researcher_page, live_server, demo_study, prolific_api, monkeypatch
):
    page, fake_prolific = researcher_page, prolific_api
    # Pay queues a task: here the test is the worker, so the page must follow the batch by itself.
    queued = []
    monkeypatch.setattr(bonus_services, "bonus_batch_pay_enqueue", queued.append)
    page.goto(f"{live_server.url}/studies/{SLUG}/")
    page.get_by_role("button", name="Prolific", exact=True).click()
    expect(page.get_by_role("heading", name="Prolific", exact=True)).to_be_visible()
    expect(page.get_by_test_id("prolific-configured")).to_be_visible()

    # The preview follows the form (htmx): one body for the American group only.
    page.get_by_label("Recruit").select_option("american")
    preview = page.get_by_test_id("request-preview")
    expect(preview).to_contain_text("group=american")
    expect(preview).not_to_contain_text("group=chinese")
    page.get_by_label("Filters (JSON)").fill('{"filter_id": 1}')
    expect(preview).to_contain_text("Filters: a JSON list is expected")
    page.get_by_label("Filters (JSON)").fill("[]")
    expect(preview).to_contain_text('"total_available_places": 10')

    page.get_by_test_id("create-draft").click()
    expect(message(page)).to_contain_text("Draft on Prolific")
    draft = ProlificStudy.objects.get(study=demo_study)
    assert draft.group == "american" and draft.status == ProlificStudyStatus.UNPUBLISHED
    assert fake_prolific.studies[draft.prolific_id]["reward"] == 300

    publish = page.get_by_test_id("publish-form")
    publish.get_by_role("checkbox").check()
    publish.get_by_role("button", name="Publish").click()
    expect(page.locator(f'tr[data-prolific-study="{draft.prolific_id}"]')).to_have_attribute("data-status", "ACTIVE")
    assert fake_prolific.studies[draft.prolific_id]["status"] == "ACTIVE"

    # Three participants arrive from Prolific; the third fails the attention checks; a fourth returns at once.
    key = answer_key(study=demo_study)
    submissions = {}
    for n, fail_qc in ((1, False), (2, False), (3, True)):
        pid = prolific_id_for(f"BROWSERPID{n}")
        submissions[pid] = fake_prolific.add_submission(draft.prolific_id, pid, status="ACTIVE")
        final = take_part(live_server, demo_study, key, pid=pid, session=submissions[pid], fail_qc=fail_qc)
        assert "app.prolific.com" in final
        fake_prolific.set_status(submissions[pid], "AWAITING REVIEW")
    quitter = fake_prolific.add_submission(draft.prolific_id, prolific_id_for("BROWSERQUIT"), status="RETURNED")
    assert Participant.objects.get(prolific_pid=prolific_id_for("BROWSERPID3")).status == ParticipantStatus.EXCLUDED_QC

    page.get_by_test_id("sync").click()
    expect(message(page)).to_contain_text("Synced: 4 submissions")
    rows = page.get_by_test_id("review-rows")
    expect(rows.locator("tr[data-verdict=valid]")).to_have_count(2)
    expect(rows.locator("tr[data-verdict=screened_out]")).to_have_count(1)
    assert ProlificSubmission.objects.get(submission_id=quitter).status == "RETURNED"

    page.get_by_test_id("approve-valid").click()
    expect(message(page)).to_contain_text("Approved on Prolific: 2 submissions")
    assert {pid: fake_prolific.status_of(sub) for pid, sub in submissions.items()} == {
        prolific_id_for("BROWSERPID1"): "APPROVED",
        prolific_id_for("BROWSERPID2"): "APPROVED",
        prolific_id_for("BROWSERPID3"): "AWAITING REVIEW",
    }
    assert len(fake_prolific.calls("POST", "bulk-approve")) == 1

    # A bonus for the two valid participants: checked, priced, then paid once.
    bonus = page.get_by_test_id("bonus-form")
    bonus.get_by_label("Or paste the rows").fill(
        f"participant_id,amount\n{prolific_id_for('BROWSERPID1')},1.00\n{prolific_id_for('BROWSERPID2')},0.50\n"
    )
    bonus.get_by_role("button", name="Check and create the batch").click()
    expect(message(page)).to_contain_text("Not paid yet")
    batch = BonusBatch.objects.get()
    row = page.locator(f'tr[data-batch="{batch.pk}"]')
    expect(row.get_by_test_id("batch-total")).to_have_text(str(batch.total_amount))
    row.get_by_role("checkbox").check()
    row.get_by_role("button", name=f"Pay {batch.total_amount}").click()
    expect(message(page)).to_contain_text("a worker sends it to Prolific")
    row = page.locator(f'tr[data-batch="{batch.pk}"]')
    expect(row).to_have_attribute("data-state", "queued")
    assert queued == [batch.pk] and fake_prolific.pay_counts[batch.prolific_id] == 0
    prolific_bonus_pay_task(batch.pk)  # the worker
    poll_now(page, 2000)
    expect(row).to_have_attribute("data-status", "SENT")  # the row polls until Prolific has answered
    expect(page.get_by_test_id("pay-form")).to_have_count(0)
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.SENT and fake_prolific.pay_counts[batch.prolific_id] == 1

    page.get_by_role("button", name="API call log").click()
    expect(page.get_by_test_id("api-calls")).to_contain_text("bulk-approve")
    expect(page.get_by_test_id("api-calls")).not_to_contain_text(fake_prolific.token)
