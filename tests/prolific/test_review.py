"""The review: approve every valid submission in bulk batches and never twice; reject with a reason; request a return."""

import pytest
from django.db import connection

from prolific.client import ProlificApiError, ProlificError
from prolific.models import ProlificSubmission, SubmissionStatus
from prolific.services import (
    prolific_study_create,
    prolific_submission_reject,
    prolific_submission_request_return,
    prolific_submissions_approve_valid,
    prolific_submissions_sync,
)
from prolific.services import submissions as submission_services
from study.models import ParticipantStatus
from tests.concurrency import at_the_same_instant
from tests.prolific.conftest import SITE, light_study, session

pytestmark = pytest.mark.django_db

REASON = (
    "The quality-control questions were all answered wrongly and the survey took under two minutes, "
    "far less than reading the descriptions needs."
)


def reviewed(fake_prolific, study, verdicts: dict[str, str]) -> dict[str, str]:
    """Submissions awaiting review, each with a local session in the given status; pid -> submission id."""
    (row,) = prolific_study_create(study=study, group="american")
    ids = {}
    for pid, status in verdicts.items():
        ids[pid] = fake_prolific.add_submission(row.prolific_id, pid, status="AWAITING REVIEW")
        if status is not None:
            session(study, pid, ids[pid], status=status)
    prolific_submissions_sync(study=study)
    return ids


def test_it_approves_only_the_valid_ones_in_batches(fake_prolific, study_for_prolific, monkeypatch):
    monkeypatch.setattr(submission_services, "BULK_APPROVE_BATCH", 2)
    valid = {f"V{n}": ParticipantStatus.COMPLETED for n in range(5)}
    ids = reviewed(
        fake_prolific,
        study_for_prolific,
        {**valid, "QC": ParticipantStatus.EXCLUDED_QC, "INC": ParticipantStatus.IN_PROGRESS, "NONE": None},
    )
    result = prolific_submissions_approve_valid(study=study_for_prolific)
    assert (result["approved"], result["requests"], result["refused"]) == (5, 3, [])
    bodies = [call["body"]["submission_ids"] for call in fake_prolific.calls("POST", "bulk-approve")]
    assert [len(b) for b in bodies] == [2, 2, 1]
    assert sorted(sum(bodies, [])) == sorted(ids[pid] for pid in valid)
    assert {fake_prolific.status_of(ids[pid]) for pid in valid} == {"APPROVED"}
    assert {fake_prolific.status_of(ids[pid]) for pid in ("QC", "INC", "NONE")} == {"AWAITING REVIEW"}
    stored = dict(ProlificSubmission.objects.values_list("prolific_pid", "status"))
    assert {stored[pid] for pid in valid} == {SubmissionStatus.APPROVED}


def test_it_never_approves_twice(fake_prolific, study_for_prolific):
    reviewed(fake_prolific, study_for_prolific, {"A": ParticipantStatus.COMPLETED})
    assert prolific_submissions_approve_valid(study=study_for_prolific)["approved"] == 1
    # Even if a sync brought it back to AWAITING REVIEW, its approval was asked for once.
    ProlificSubmission.objects.update(status=SubmissionStatus.AWAITING_REVIEW)
    assert prolific_submissions_approve_valid(study=study_for_prolific)["approved"] == 0
    assert len(fake_prolific.calls("POST", "bulk-approve")) == 1


def test_it_prints_the_requests_on_a_dry_run(fake_prolific, study_for_prolific):
    ids = reviewed(
        fake_prolific, study_for_prolific, {"A": ParticipantStatus.COMPLETED, "B": ParticipantStatus.COMPLETED}
    )
    result = prolific_submissions_approve_valid(study=study_for_prolific, dry_run=True)
    assert result["requests"] == [{"submission_ids": [ids["A"], ids["B"]]}]
    assert fake_prolific.calls("POST", "bulk-approve") == []
    assert not ProlificSubmission.objects.filter(approval_requested_at__isnull=False).exists()


def test_it_keeps_prolifics_message_for_a_refused_approval(fake_prolific, study_for_prolific):
    ids = reviewed(
        fake_prolific, study_for_prolific, {"A": ParticipantStatus.COMPLETED, "B": ParticipantStatus.COMPLETED}
    )
    fake_prolific.refuse(ids["B"], "Participant account is under review.")
    result = prolific_submissions_approve_valid(study=study_for_prolific)
    assert result["approved"] == 1
    assert result["refused"] == [
        {"submission_id": ids["B"], "participant_id": "B", "message": "Participant account is under review."}
    ]
    refused = ProlificSubmission.objects.get(prolific_pid="B")
    assert refused.last_error == "Participant account is under review."
    assert refused.approval_requested_at is None  # it may be tried again once the cause is fixed
    assert fake_prolific.status_of(ids["A"]) == "APPROVED"


def test_it_lets_an_unanswered_approval_be_tried_again(fake_prolific, study_for_prolific, settings):
    settings.PROLIFIC_MAX_ATTEMPTS = 1
    reviewed(fake_prolific, study_for_prolific, {"A": ParticipantStatus.COMPLETED})
    fake_prolific.fail(status=503, path="bulk-approve")
    result = prolific_submissions_approve_valid(study=study_for_prolific)
    assert result["approved"] == 0 and len(result["refused"]) == 1
    assert prolific_submissions_approve_valid(study=study_for_prolific)["approved"] == 1


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_sends_each_approval_once_when_two_approve_at_the_same_instant(fake_prolific, settings):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")
    settings.PROLIFIC_SITE_URL = SITE
    study = light_study("race-approve")
    reviewed(fake_prolific, study, {f"V{n}": ParticipantStatus.COMPLETED for n in range(6)})
    fake_prolific.delay = 0.1

    def approve():
        return prolific_submissions_approve_valid(study=study)["approved"]

    results, errors = at_the_same_instant(approve, approve, approve)
    assert errors == []
    assert sorted(results) == [0, 0, 6]
    sent = [i for call in fake_prolific.calls("POST", "bulk-approve") for i in call["body"]["submission_ids"]]
    assert len(sent) == len(set(sent)) == 6


def test_it_rejects_with_a_category_and_a_message(fake_prolific, study_for_prolific):
    reviewed(fake_prolific, study_for_prolific, {"R": ParticipantStatus.EXCLUDED_QC})
    submission = ProlificSubmission.objects.get()
    rejected = prolific_submission_reject(submission=submission, message=REASON, category="FAILED_CHECK")
    assert rejected.status == SubmissionStatus.REJECTED
    (call,) = fake_prolific.calls("POST", "/transition/")
    assert call["body"] == {"action": "REJECT", "message": REASON, "rejection_category": "FAILED_CHECK"}


@pytest.mark.parametrize(
    ("message", "category", "error"),
    [(REASON, "RUDE", "Unknown rejection category"), ("Too fast.", "TOO_QUICKLY", "at least 100 characters")],
)
def test_it_checks_a_rejection_before_sending_it(fake_prolific, study_for_prolific, message, category, error):
    reviewed(fake_prolific, study_for_prolific, {"R": ParticipantStatus.EXCLUDED_QC})
    with pytest.raises(ProlificError, match=error):
        prolific_submission_reject(submission=ProlificSubmission.objects.get(), message=message, category=category)
    assert fake_prolific.calls("POST", "/transition/") == []


def test_it_rejects_only_a_submission_awaiting_review(fake_prolific, study_for_prolific):
    reviewed(fake_prolific, study_for_prolific, {"A": ParticipantStatus.COMPLETED})
    prolific_submissions_approve_valid(study=study_for_prolific)
    with pytest.raises(ProlificError, match="awaiting review"):
        prolific_submission_reject(submission=ProlificSubmission.objects.get(), message=REASON, category="OTHER")


def test_it_keeps_prolifics_message_when_a_rejection_is_refused(fake_prolific, study_for_prolific):
    ids = reviewed(fake_prolific, study_for_prolific, {"R": ParticipantStatus.EXCLUDED_QC})
    fake_prolific.set_status(ids["R"], "APPROVED")  # approved in Prolific's web app meanwhile
    with pytest.raises(ProlificApiError):
        prolific_submission_reject(submission=ProlificSubmission.objects.get(), message=REASON, category="OTHER")
    assert "not AWAITING REVIEW" in ProlificSubmission.objects.get().last_error


def test_it_requests_a_return_once(fake_prolific, study_for_prolific):
    ids = reviewed(fake_prolific, study_for_prolific, {"I": ParticipantStatus.IN_PROGRESS})
    submission = ProlificSubmission.objects.get()
    done = prolific_submission_request_return(submission=submission, reasons=["Did not finish the survey."])
    assert done.return_requested_at is not None
    assert fake_prolific.submissions[ids["I"]]["return_requested"] == ["Did not finish the survey."]
    prolific_submission_request_return(submission=submission, reasons=["Again."])
    assert len(fake_prolific.calls("POST", "request-return")) == 1
    with pytest.raises(ProlificError, match="reason"):
        prolific_submission_request_return(submission=submission, reasons=[" "])
