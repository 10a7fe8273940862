"""Following every submission: all pages, statuses beside the local sessions, places freed at once, discrepancies."""

import pytest

from prolific.models import ApiCall, ProlificStudyStatus, ProlificSubmission, ProlificSyncChain, SubmissionStatus
from prolific.selectors import prolific_discrepancies, prolific_review_rows
from prolific.services import (
    prolific_study_create,
    prolific_submission_status_apply,
    prolific_submissions_sync,
    prolific_sync_scheduled,
)
from prolific.tasks import prolific_sync_start, prolific_sync_task
from study.models import ParticipantStatus, StudyStatus
from study.selectors.participants import participant_places_taken
from tests.prolific.conftest import session

pytestmark = pytest.mark.django_db


@pytest.fixture
def live(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group="american")
    fake_prolific.studies[row.prolific_id]["status"] = "ACTIVE"
    return row


def test_it_reads_every_page_and_stores_each_status_beside_its_session(fake_prolific, live, study_for_prolific):
    fake_prolific.page_size = 2
    statuses = ["RESERVED", "ACTIVE", "AWAITING REVIEW", "APPROVED", "REJECTED", "SCREENED OUT", "PARTIALLY APPROVED"]
    ids = [fake_prolific.add_submission(live.prolific_id, f"PID{n}", status=s) for n, s in enumerate(statuses)]
    sessions = [session(study_for_prolific, f"PID{n}", sub) for n, sub in enumerate(ids)]
    counts = prolific_submissions_sync(study=study_for_prolific)
    assert counts == {"seen": 7, "created": 7, "updated": 0, "unchanged": 0, "freed": 0, "studies": 1, "unverified": 0}
    assert len(fake_prolific.calls("GET", "/submissions/")) == 4
    stored = {s.submission_id: (s.status, s.participant) for s in ProlificSubmission.objects.all()}
    assert stored == {sub: (status, sessions[n]) for n, (sub, status) in enumerate(zip(ids, statuses, strict=True))}
    live.refresh_from_db()
    assert live.last_synced_at is not None and live.status == ProlificStudyStatus.ACTIVE
    assert ApiCall.objects.filter(study=study_for_prolific, method="GET").count() == 5  # the study, four pages


def test_it_changes_nothing_when_the_same_status_comes_twice(fake_prolific, live, study_for_prolific):
    sub = fake_prolific.add_submission(live.prolific_id, "PIDX", status="ACTIVE")
    prolific_submissions_sync(study=study_for_prolific)
    counts = prolific_submissions_sync(study=study_for_prolific)
    assert (counts["created"], counts["updated"], counts["unchanged"]) == (0, 0, 1)
    fake_prolific.set_status(sub, "AWAITING REVIEW")
    counts = prolific_submissions_sync(study=study_for_prolific)
    assert counts["updated"] == 1
    assert ProlificSubmission.objects.get().status == SubmissionStatus.AWAITING_REVIEW


@pytest.mark.parametrize("status", ["RETURNED", "TIMED-OUT"])
def test_it_frees_the_place_of_a_returned_or_timed_out_submission_at_once(
    fake_prolific, live, study_for_prolific, status
):
    sub = fake_prolific.add_submission(live.prolific_id, "PIDR", status="ACTIVE")
    participant = session(study_for_prolific, "PIDR", sub, status=ParticipantStatus.IN_PROGRESS)
    prolific_submissions_sync(study=study_for_prolific)
    assert participant_places_taken(study=study_for_prolific, group="american") == 1
    fake_prolific.set_status(sub, status)
    counts = prolific_submissions_sync(study=study_for_prolific)
    assert counts["freed"] == 1
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.RETURNED
    assert participant_places_taken(study=study_for_prolific, group="american") == 0


def test_it_keeps_a_finished_session_when_prolific_reports_it_returned(fake_prolific, live, study_for_prolific):
    sub = fake_prolific.add_submission(live.prolific_id, "PIDF", status="RETURNED")
    participant = session(study_for_prolific, "PIDF", sub, status=ParticipantStatus.COMPLETED)
    assert prolific_submissions_sync(study=study_for_prolific)["freed"] == 0
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.COMPLETED


def test_it_matches_by_pid_and_session_only(fake_prolific, live, study_for_prolific):
    sub = fake_prolific.add_submission(live.prolific_id, "PIDS", status="ACTIVE")
    session(study_for_prolific, "PIDS", "an-other-session", status=ParticipantStatus.IN_PROGRESS)
    prolific_submissions_sync(study=study_for_prolific)
    assert ProlificSubmission.objects.get(submission_id=sub).participant is None


def test_it_matches_a_session_that_started_after_the_first_sync(fake_prolific, live, study_for_prolific):
    sub = fake_prolific.add_submission(live.prolific_id, "PIDL", status="RESERVED")
    prolific_submissions_sync(study=study_for_prolific)
    participant = session(study_for_prolific, "PIDL", sub, status=ParticipantStatus.IN_PROGRESS)
    prolific_submissions_sync(study=study_for_prolific)
    assert ProlificSubmission.objects.get().participant == participant


def test_it_lists_the_discrepancies_both_ways(fake_prolific, live, study_for_prolific):
    assert prolific_discrepancies(study=study_for_prolific)["synced"] is False
    known = fake_prolific.add_submission(live.prolific_id, "PIDK", status="AWAITING REVIEW")
    orphan = fake_prolific.add_submission(live.prolific_id, "PIDO", status="AWAITING REVIEW")
    session(study_for_prolific, "PIDK", known)
    stranger = session(study_for_prolific, "PIDU", "sb-unknown")
    test_session = session(study_for_prolific, "PIDT", "sb-test")
    test_session.is_test = True
    test_session.save()
    prolific_submissions_sync(study=study_for_prolific)
    found = prolific_discrepancies(study=study_for_prolific)
    assert found["synced"] is True
    assert found["unknown_sessions"] == [stranger]
    assert [s.submission_id for s in found["orphan_submissions"]] == [orphan]


def test_it_gives_the_review_its_local_verdicts(fake_prolific, live, study_for_prolific):
    verdicts = {
        ParticipantStatus.COMPLETED: "valid",
        ParticipantStatus.EXCLUDED_QC: "screened_out",
        ParticipantStatus.IN_PROGRESS: "incomplete",
    }
    for n, status in enumerate(verdicts):
        sub = fake_prolific.add_submission(live.prolific_id, f"PV{n}", status="AWAITING REVIEW")
        session(study_for_prolific, f"PV{n}", sub, status=status)
    fake_prolific.add_submission(live.prolific_id, "PVX", status="AWAITING REVIEW")
    fake_prolific.add_submission(live.prolific_id, "PVA", status="ACTIVE")  # not finished: not reviewed
    prolific_submissions_sync(study=study_for_prolific)
    rows = {row["participant_id"]: row["verdict"] for row in prolific_review_rows(study=study_for_prolific)}
    assert rows == {"PV0": "valid", "PV1": "screened_out", "PV2": "incomplete", "PVX": "no_session"}


def test_it_normalises_prolifics_spellings_of_a_status(live):
    result = prolific_submission_status_apply(
        submission_id="sbN", status="TIMED_OUT", participant_id="PN", prolific_study=live
    )
    assert result["outcome"] == "created" and result["submission"].status == SubmissionStatus.TIMED_OUT
    assert prolific_submission_status_apply(submission_id="sbN", status="nonsense")["outcome"] == "unknown status"


def test_it_syncs_nothing_without_a_prolific_study(fake_prolific, study_for_prolific):
    assert prolific_submissions_sync(study=study_for_prolific)["studies"] == 0
    assert fake_prolific.requests == []


def test_it_keeps_the_periodic_sync_going_only_while_the_study_is_live(fake_prolific, live, study_for_prolific):
    live.status = ProlificStudyStatus.ACTIVE
    live.save()
    assert prolific_sync_scheduled(study_id=study_for_prolific.pk) is True
    study_for_prolific.status = StudyStatus.CLOSED
    study_for_prolific.save()
    assert prolific_sync_scheduled(study_id=study_for_prolific.pk) is False


def test_it_runs_one_sync_chain_per_study(fake_prolific, live, study_for_prolific, monkeypatch, settings):
    sent = []
    monkeypatch.setattr(prolific_sync_task, "apply_async", lambda args, countdown: sent.append((args, countdown)))
    assert prolific_sync_start(study_for_prolific.pk) is True
    assert prolific_sync_start(study_for_prolific.pk) is False
    ((args, countdown),) = sent
    assert args == [study_for_prolific.pk, ProlificSyncChain.objects.get().holder]
    assert countdown == settings.PROLIFIC_SYNC_SECONDS
    live.status = ProlificStudyStatus.ACTIVE
    live.save()
    prolific_sync_task(*args)  # runs, and schedules the next one
    assert sent[1] == (args, settings.PROLIFIC_SYNC_SECONDS)
    study_for_prolific.status = StudyStatus.CLOSED
    study_for_prolific.save()
    prolific_sync_task(*args)  # the study closed: the chain ends
    assert len(sent) == 2
    assert not ProlificSyncChain.objects.exists()


def test_it_keeps_the_chain_alive_when_prolific_fails_once(fake_prolific, live, study_for_prolific, settings):
    live.status = ProlificStudyStatus.ACTIVE
    live.save()
    settings.PROLIFIC_MAX_ATTEMPTS = 1
    fake_prolific.fail(status=503)
    assert prolific_sync_scheduled(study_id=study_for_prolific.pk) is True


def test_it_syncs_once_at_publish_when_tasks_run_inline(
    fake_prolific, study_for_prolific, eager, django_capture_on_commit_callbacks
):
    from prolific.services import prolific_study_publish

    (row,) = prolific_study_create(study=study_for_prolific, group="american")
    fake_prolific.add_submission(row.prolific_id, "PIDE", status="ACTIVE")
    with django_capture_on_commit_callbacks(execute=True):
        prolific_study_publish(prolific_study=row)  # the chain's first run, inline: it must not call itself again
    assert ProlificSubmission.objects.filter(prolific_pid="PIDE").exists()
    assert len(fake_prolific.calls("GET", "/submissions/")) == 1
