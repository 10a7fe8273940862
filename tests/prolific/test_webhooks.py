"""Prolific's submission status-change webhook: signature, staleness, duplicates, places freed; the subscription."""

import json
import time

import pytest

from prolific.client import ProlificError
from prolific.models import ApiCall, ProlificSubmission, SubmissionStatus, WebhookDelivery
from prolific.services import (
    WebhookSignatureError,
    prolific_hooks_register,
    prolific_hooks_secret_create,
    prolific_study_create,
    prolific_submissions_sync,
    prolific_webhook_receive,
)
from study.models import ParticipantStatus
from tests.prolific.conftest import session
from tests.prolific.fake_prolific import WEBHOOK_SECRET

pytestmark = pytest.mark.django_db


@pytest.fixture
def submission(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group="american")
    sub = fake_prolific.add_submission(row.prolific_id, "PIDW", status="ACTIVE")
    participant = session(study_for_prolific, "PIDW", sub, status=ParticipantStatus.IN_PROGRESS)
    participant.prolific_study_id = row.prolific_id
    participant.save()
    return sub, participant


def receive(fake_prolific, sub, status, **sign):
    body = fake_prolific.webhook_body(sub, status)
    return prolific_webhook_receive(
        body=body, headers=fake_prolific.signed_headers(body, **sign), remote_addr="1.2.3.4"
    )


def test_it_applies_a_signed_status_change_and_frees_the_place(fake_prolific, submission):
    sub, participant = submission
    prolific_submissions_sync(study=participant.study)
    delivery = receive(fake_prolific, sub, "RETURNED")
    assert delivery.signature_valid and delivery.outcome == "updated, place freed"
    assert (delivery.event_type, delivery.submission_id, delivery.status) == (
        "submission.status.change",
        sub,
        "RETURNED",
    )
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.RETURNED
    assert ProlificSubmission.objects.get().status == SubmissionStatus.RETURNED


def test_it_changes_nothing_when_the_same_status_arrives_twice(fake_prolific, submission):
    sub, participant = submission
    receive(fake_prolific, sub, "AWAITING REVIEW")
    changed_at = ProlificSubmission.objects.get().status_changed_at
    second = receive(fake_prolific, sub, "AWAITING REVIEW")
    assert second.outcome == "unchanged"
    assert ProlificSubmission.objects.get().status_changed_at == changed_at
    assert ProlificSubmission.objects.count() == 1


def test_it_stores_a_submission_not_synced_yet_through_its_session(fake_prolific, submission):
    sub, participant = submission
    delivery = receive(fake_prolific, sub, "TIMED-OUT")
    assert delivery.outcome == "created, place freed"
    stored = ProlificSubmission.objects.get()
    assert (stored.participant, stored.prolific_pid) == (participant, "PIDW")


def test_it_records_a_submission_nobody_knows(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group="american")
    sub = fake_prolific.add_submission(row.prolific_id, "PIDZ")
    assert receive(fake_prolific, sub, "RETURNED").outcome == "unknown submission"


@pytest.mark.parametrize(
    ("sign", "outcome"),
    [
        ({"secret": "not-the-secret"}, "invalid signature"),
        ({"timestamp": str(int(time.time()) - 3600)}, "stale timestamp"),
        ({"timestamp": str(int(time.time()) + 3600)}, "stale timestamp"),
    ],
)
def test_it_refuses_and_logs_a_delivery_that_is_not_prolifics(fake_prolific, submission, sign, outcome, caplog):
    sub, participant = submission
    with pytest.raises(WebhookSignatureError):
        receive(fake_prolific, sub, "RETURNED", **sign)
    delivery = WebhookDelivery.objects.get()
    assert (delivery.signature_valid, delivery.outcome, delivery.remote_addr) == (False, outcome, "1.2.3.4")
    assert "refused" in caplog.text
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.IN_PROGRESS


def test_it_refuses_a_body_changed_after_signing(fake_prolific, submission):
    sub, _participant = submission
    body = fake_prolific.webhook_body(sub, "AWAITING REVIEW")
    headers = fake_prolific.signed_headers(body)
    tampered = body.replace(b"AWAITING REVIEW", b"RETURNED")
    with pytest.raises(WebhookSignatureError):
        prolific_webhook_receive(body=tampered, headers=headers, remote_addr="")
    assert not ProlificSubmission.objects.exists()


def test_it_refuses_everything_without_a_secret(fake_prolific, submission, monkeypatch, settings):
    sub, _participant = submission
    monkeypatch.delenv(settings.PROLIFIC_WEBHOOK_SECRET_ENV)
    with pytest.raises(WebhookSignatureError):
        receive(fake_prolific, sub, "RETURNED")
    assert WebhookDelivery.objects.get().outcome == "no secret configured"


def test_it_refuses_an_unsigned_delivery(fake_prolific, submission):
    sub, _participant = submission
    with pytest.raises(WebhookSignatureError):
        prolific_webhook_receive(body=fake_prolific.webhook_body(sub), headers={}, remote_addr="")
    assert WebhookDelivery.objects.get().outcome == "unsigned"


def test_it_reads_headers_in_any_case(fake_prolific, submission):
    sub, _participant = submission
    body = fake_prolific.webhook_body(sub, "AWAITING REVIEW")
    headers = {key.lower(): value for key, value in fake_prolific.signed_headers(body).items()}
    assert prolific_webhook_receive(body=body, headers=headers, remote_addr="").signature_valid


def test_it_ignores_other_events(fake_prolific):
    body = json.dumps({"resource_id": "st1", "event_type": "study.status.change", "status": "ACTIVE"}).encode()
    delivery = prolific_webhook_receive(body=body, headers=fake_prolific.signed_headers(body), remote_addr="")
    assert delivery.outcome == "ignored event"


def test_it_subscribes_once_and_confirms_without_logging_the_confirmation(fake_prolific, study_for_prolific):
    target = "https://studies.example.org/prolific/hooks/submissions/"
    first = prolific_hooks_register(study=study_for_prolific, target_url=target)
    assert first["created"] is True and first["workspace_id"] == fake_prolific.workspace_id
    (hook,) = fake_prolific.subscriptions.values()
    assert hook["is_enabled"] and hook["target_url"] == target
    assert hook["_confirm"] not in " ".join(str(v) for v in ApiCall.objects.values_list("request_body", flat=True))
    again = prolific_hooks_register(study=study_for_prolific, target_url=target)
    assert again["created"] is False and len(fake_prolific.subscriptions) == 1


def test_it_refuses_a_plain_http_target(fake_prolific, study_for_prolific):
    with pytest.raises(ProlificError, match="https"):
        prolific_hooks_register(study=study_for_prolific, target_url="http://studies.example.org/hook/")


def test_it_creates_a_secret_without_storing_it(fake_prolific, study_for_prolific):
    assert prolific_hooks_secret_create(study=study_for_prolific) == WEBHOOK_SECRET
    logged = " ".join(ApiCall.objects.values_list("response_body", flat=True))
    assert WEBHOOK_SECRET not in logged and "[redacted]" in logged
