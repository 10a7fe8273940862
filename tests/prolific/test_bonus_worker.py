"""Pay from the page goes through a worker: the web request never calls Prolific, the task pays once.

The client may wait on a rate limit for minutes (Retry-After, up to PROLIFIC_RETRY_AFTER_CAP_S per
attempt), so the page only queues the batch (QUEUED) and a Celery task claims it (SENDING, committed
before the pay request) and pays it. The batch's row polls until Prolific has answered.
"""

from datetime import timedelta
from io import StringIO

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from prolific.models import BonusBatch, BonusBatchStatus
from prolific.services import bonus_batch_create, bonus_batch_pay_request
from prolific.services import bonuses as bonus_services
from prolific.tasks import prolific_bonus_pay_task
from tests.concurrency import at_the_same_instant
from tests.prolific.conftest import light_study
from tests.prolific.test_bonuses import GOOD, batch_for_a_race, with_participants

pytestmark = pytest.mark.django_db


@pytest.fixture
def batch(fake_prolific, study_for_prolific):
    with_participants(fake_prolific, study_for_prolific)
    return bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)


def queued(batch):
    BonusBatch.objects.filter(pk=batch.pk).update(status=BonusBatchStatus.QUEUED, queued_at=timezone.now())


def pay_on_the_page(client, batch):
    return client.post(
        reverse("prolific:bonus_pay", args=[batch.prolific_study.study.slug]),
        {"batch": batch.pk, "confirm": "on"},
        follow=True,
    )


def batch_row(client, batch, **headers) -> str:
    url = reverse("prolific:study", args=[batch.prolific_study.study.slug])
    return client.get(f"{url}?batch={batch.pk}", HTTP_HX_REQUEST="true", **headers).content.decode()


def test_it_returns_from_the_web_request_without_calling_prolific(
    researcher_client, batch, fake_prolific, eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        answer = pay_on_the_page(researcher_client, batch)
    assert fake_prolific.calls("POST", "/pay/") == []
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.QUEUED and batch.queued_at
    assert any("a worker sends it to Prolific" in str(m) for m in answer.context["messages"])
    row = batch_row(researcher_client, batch)
    assert 'data-state="queued"' in row and 'hx-trigger="every 2s"' in row and 'data-testid="pay-form"' not in row

    (task,) = enqueued  # the worker
    task()
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.SENT and fake_prolific.pay_counts[batch.prolific_id] == 1
    row = batch_row(researcher_client, batch)
    assert 'data-status="SENT"' in row and "hx-trigger" not in row


def test_it_pays_once_when_the_task_is_delivered_again(batch, fake_prolific, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        assert bonus_batch_pay_request(batch=batch) is True
        assert bonus_batch_pay_request(batch=batch) is False  # a second tab
    prolific_bonus_pay_task(batch.pk)
    prolific_bonus_pay_task(batch.pk)  # redelivered (acks_late: the worker died before acknowledging)
    assert fake_prolific.pay_counts[batch.prolific_id] == 1
    assert len(fake_prolific.calls("POST", "/pay/")) == 1


@pytest.mark.parametrize("status", [BonusBatchStatus.CREATED, BonusBatchStatus.FAILED])
def test_it_sends_nothing_for_a_batch_the_page_did_not_queue(batch, fake_prolific, status):
    """A late redelivery after Prolific refused the batch, or a task for a batch nobody asked to pay."""
    BonusBatch.objects.filter(pk=batch.pk).update(status=status)
    prolific_bonus_pay_task(batch.pk)
    assert fake_prolific.calls("POST", "/pay/") == []
    assert BonusBatch.objects.get(pk=batch.pk).status == status


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_pays_once_when_two_workers_get_the_task_at_the_same_instant(fake_prolific, settings):
    batch = batch_for_a_race(fake_prolific, settings, "race-task")
    queued(batch)
    results, errors = at_the_same_instant(*[lambda: prolific_bonus_pay_task(batch.pk)] * 3)
    assert errors == []
    assert fake_prolific.pay_counts[batch.prolific_id] == 1
    assert BonusBatch.objects.get(pk=batch.pk).status == BonusBatchStatus.SENT


def test_it_shows_prolifics_refusal_on_the_row_and_lets_it_be_paid_again(researcher_client, batch, fake_prolific):
    queued(batch)
    fake_prolific.fail(status=400, path="/pay/")
    prolific_bonus_pay_task(batch.pk)  # recorded on the batch, not raised
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.FAILED and "Injected by the fake" in batch.error
    row = batch_row(researcher_client, batch)
    assert "Injected by the fake" in row and 'data-testid="pay-form"' in row and "hx-trigger" not in row


def test_it_says_the_answer_is_unknown_and_never_sends_it_again(researcher_client, batch, fake_prolific):
    queued(batch)
    fake_prolific.fail(status=502, path="/pay/")
    prolific_bonus_pay_task(batch.pk)
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.SENDING and "never sent again" in batch.error
    row = batch_row(researcher_client, batch)
    assert 'data-state="unknown"' in row and "never sent again" in row and "hx-trigger" not in row
    prolific_bonus_pay_task(batch.pk)
    assert len(fake_prolific.calls("POST", "/pay/")) == 1


def test_it_polls_while_the_answer_is_awaited_and_gives_up_past_the_time_limit(researcher_client, batch, settings):
    BonusBatch.objects.filter(pk=batch.pk).update(status=BonusBatchStatus.SENDING, sent_at=timezone.now())
    row = batch_row(researcher_client, batch)
    assert 'data-state="sending"' in row and 'hx-trigger="every 2s"' in row
    # The worker was killed with the request out: past the hard time limit nobody will answer.
    old = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 1)
    BonusBatch.objects.filter(pk=batch.pk).update(sent_at=old)
    row = batch_row(researcher_client, batch)
    assert 'data-state="unknown"' in row and "hx-trigger" not in row and "Check the bonuses" in row


def test_it_says_when_no_worker_picks_the_payment_up(researcher_client, batch, settings):
    settings.EVAL_NO_WORKER_SECONDS = 15
    BonusBatch.objects.filter(pk=batch.pk).update(
        status=BonusBatchStatus.QUEUED, queued_at=timezone.now() - timedelta(seconds=16)
    )
    row = batch_row(researcher_client, batch)
    assert 'data-testid="no-worker"' in row and "celery -A vivid_site worker" in row and "hx-trigger" in row


def test_it_fails_the_batch_when_the_worker_has_no_token(batch, fake_prolific, monkeypatch, settings):
    queued(batch)
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV)
    prolific_bonus_pay_task(batch.pk)
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.FAILED and settings.PROLIFIC_API_TOKEN_ENV in batch.error
    assert fake_prolific.calls("POST", "/pay/") == []


def test_it_leaves_a_batch_cut_off_by_the_time_limit_for_a_person_to_check(batch, fake_prolific, monkeypatch):
    queued(batch)

    def out_of_time(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(bonus_services.ProlificClient, "post", out_of_time)
    with pytest.raises(SoftTimeLimitExceeded):  # Celery must see its time limit
        prolific_bonus_pay_task(batch.pk)
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.SENDING and "SoftTimeLimitExceeded" in batch.error


def test_it_shows_only_this_studys_batch(researcher_client, batch, fake_prolific):
    other = light_study("other-study")
    url = reverse("prolific:study", args=[other.slug])
    assert researcher_client.get(f"{url}?batch={batch.pk}", HTTP_HX_REQUEST="true").status_code == 404


def test_the_command_pays_a_batch_queued_on_the_page_and_the_task_then_sends_nothing(batch, fake_prolific, tmp_path):
    """No worker running: ``prolific_bonus --pay`` pays what the page queued, once; the task, when a worker
    starts at last, finds it paid."""
    queued(batch)
    file = tmp_path / "bonuses.csv"
    file.write_text(GOOD)
    out = StringIO()
    call_command("prolific_bonus", batch.prolific_study.study.slug, "--file", str(file), "--pay", stdout=out)
    assert f"batch {batch.pk}: Paid" in out.getvalue()
    prolific_bonus_pay_task(batch.pk)
    assert fake_prolific.pay_counts[batch.prolific_id] == 1


def test_the_command_exits_1_when_a_worker_claims_the_batch_first(batch, fake_prolific, tmp_path, monkeypatch):
    queued(batch)
    real, clients = bonus_services.ProlificClient, []

    def worker_claims_meanwhile(**kwargs):
        clients.append(kwargs)
        if len(clients) == 2:  # the command's pay, after its create found the batch
            BonusBatch.objects.filter(pk=batch.pk).update(status=BonusBatchStatus.SENDING, sent_at=timezone.now())
        return real(**kwargs)

    monkeypatch.setattr(bonus_services, "ProlificClient", worker_claims_meanwhile)
    file = tmp_path / "bonuses.csv"
    file.write_text(GOOD)
    with pytest.raises(CommandError, match="being paid by another process"):
        call_command("prolific_bonus", batch.prolific_study.study.slug, "--file", str(file), "--pay", stdout=StringIO())
    assert fake_prolific.calls("POST", "/pay/") == []
