"""POST /prolific/hooks/submissions/: Prolific's signed submission status changes, over HTTP.

The signature checks themselves are the service's (tests of the backend); here: the endpoint takes
no session or CSRF token, answers 403 to a bad signature and logs it, 200 otherwise, and the same
status twice changes nothing.
"""

import logging
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from prolific.models import (
    ProlificStudy,
    ProlificStudyStatus,
    ProlificSubmission,
    SubmissionStatus,
    WebhookDelivery,
    WebhookRefusalCount,
)
from study.models import Participant, ParticipantStatus
from tests.concurrency import at_the_same_instant
from tests.study.factories import make_study, package_dict

pytestmark = pytest.mark.django_db

URL = "/prolific/hooks/submissions/"


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def submission(fake_prolific):
    """A live Prolific study on the fake with one active submission, known here beside its session."""
    study = make_study(package_dict(slug="webhook-study", reward="£3.00", estimated_minutes=20))
    prolific_id = fake_prolific.add_study(status="ACTIVE")
    row = ProlificStudy.objects.create(
        study=study, group="american", prolific_id=prolific_id, status=ProlificStudyStatus.ACTIVE
    )
    submission_id = fake_prolific.add_submission(prolific_id, "PIDHOOK", status="ACTIVE")
    participant = Participant.objects.create(
        study=study,
        prolific_pid="PIDHOOK",
        prolific_session_id=submission_id,
        group="american",
        status=ParticipantStatus.IN_PROGRESS,
    )
    return ProlificSubmission.objects.create(
        prolific_study=row,
        submission_id=submission_id,
        prolific_pid="PIDHOOK",
        participant=participant,
        status=SubmissionStatus.ACTIVE,
    )


def post(client, fake, submission_id, status, **sign_options):
    body = fake.webhook_body(submission_id, status)
    headers = fake.signed_headers(body, **sign_options)
    return client.post(
        URL,
        data=body,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=headers["X-Prolific-Request-Signature"],
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=headers["X-Prolific-Request-Timestamp"],
    )


def test_it_is_named_and_served_at_the_documented_path():
    assert reverse("prolific:webhook") == URL


def test_it_applies_a_signed_status_change_without_a_session_or_csrf_token(fake_prolific, submission):
    client = Client(enforce_csrf_checks=True)
    answer = post(client, fake_prolific, submission.submission_id, "AWAITING REVIEW")
    assert answer.status_code == 200
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.AWAITING_REVIEW
    delivery = WebhookDelivery.objects.get()
    assert delivery.signature_valid and delivery.submission_id == submission.submission_id


def test_it_changes_nothing_when_the_same_status_arrives_twice(fake_prolific, submission):
    client = Client(enforce_csrf_checks=True)
    assert post(client, fake_prolific, submission.submission_id, "AWAITING REVIEW").status_code == 200
    submission.refresh_from_db()
    changed_at = submission.status_changed_at
    again = post(client, fake_prolific, submission.submission_id, "AWAITING REVIEW")
    assert again.status_code == 200
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.AWAITING_REVIEW and submission.status_changed_at == changed_at
    assert list(WebhookDelivery.objects.order_by("pk").values_list("outcome", flat=True))[-1] == "unchanged"


def test_it_frees_the_place_of_a_returned_submission_at_once(fake_prolific, submission):
    assert post(Client(), fake_prolific, submission.submission_id, "RETURNED").status_code == 200
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.RETURNED
    assert Participant.objects.get(pk=submission.participant_id).status == ParticipantStatus.RETURNED


@pytest.mark.parametrize(
    "sign_options",
    [{"secret": "not-the-secret"}, {"timestamp": "1000000000"}],
    ids=["wrong secret", "stale timestamp"],
)
def test_it_refuses_a_bad_signature_with_403_and_logs_it(fake_prolific, submission, sign_options, caplog):
    with caplog.at_level(logging.WARNING, logger="prolific.services.webhooks"):
        answer = post(Client(), fake_prolific, submission.submission_id, "RETURNED", **sign_options)
    assert answer.status_code == 403
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.ACTIVE
    delivery = WebhookDelivery.objects.get()
    assert not delivery.signature_valid
    assert any("Prolific webhook refused" in record.getMessage() for record in caplog.records)


def test_it_refuses_an_unsigned_request(fake_prolific, submission):
    answer = Client().post(URL, data=b'{"resource_id": "x", "status": "RETURNED"}', content_type="application/json")
    assert answer.status_code == 403
    assert WebhookDelivery.objects.filter(signature_valid=False).count() == 1


def test_it_takes_only_post(fake_prolific):
    assert Client().get(URL).status_code == 405


def test_it_counts_every_refused_delivery_but_keeps_few_bodies(researcher_client, settings, monkeypatch):
    """Anyone can post to the endpoint: 100 refused deliveries of 10 kB each keep the first few bodies of the
    minute and count all 100, on the study's Prolific page too."""
    settings.PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE = 5
    moment = timezone.now().replace(second=30)
    monkeypatch.setattr(timezone, "now", lambda: moment)  # one minute, whatever the clock does meanwhile
    client = Client()
    for _ in range(100):
        answer = client.post(URL, data=b"x" * 10_000, content_type="application/json")
        assert answer.status_code == 403
    assert WebhookDelivery.objects.count() == 5
    assert WebhookRefusalCount.objects.get().count == 100
    study = make_study(package_dict(slug="refusals-study"))
    page = researcher_client.get(reverse("prolific:study", args=[study.slug])).content.decode()
    assert "100 refused deliveries in the last 24 hours" in page


def test_it_keeps_bodies_again_in_the_next_minute(settings, monkeypatch):
    settings.PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE = 2
    moment = timezone.now().replace(second=0)
    monkeypatch.setattr(timezone, "now", lambda: moment)
    for _ in range(3):
        Client().post(URL, data=b"{}", content_type="application/json")
    moment += timedelta(minutes=1)
    for _ in range(3):
        Client().post(URL, data=b"{}", content_type="application/json")
    assert WebhookDelivery.objects.count() == 4
    assert sorted(WebhookRefusalCount.objects.values_list("count", flat=True)) == [3, 3]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_counts_refusals_that_arrive_at_the_same_instant(settings):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")
    settings.PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE = 1

    def refuse():
        return Client().post(URL, data=b"{}", content_type="application/json").status_code

    results, errors = at_the_same_instant(*[refuse] * 4)
    assert errors == [] and results == [403] * 4
    assert sum(WebhookRefusalCount.objects.values_list("count", flat=True)) == 4
    assert WebhookDelivery.objects.count() <= len(WebhookRefusalCount.objects.all())
