"""Bonuses paid exactly once: validation naming rows, one batch per file, the SENDING claim before the pay request."""

from decimal import Decimal

import pytest
from django.db import connection

from prolific.client import ProlificApiError, ProlificNotConfigured
from prolific.models import BonusBatch, BonusBatchStatus
from prolific.services import (
    BonusFileError,
    bonus_batch_create,
    bonus_batch_pay,
    bonus_rows_validate,
    prolific_study_create,
    prolific_submissions_sync,
)
from prolific.services import bonuses as bonus_services
from prolific.tasks import prolific_bonus_pay_task
from tests.concurrency import at_the_same_instant
from tests.prolific.conftest import SITE, light_study

pytestmark = pytest.mark.django_db

GOOD = "participant_id,amount\nP1,1.50\nP2,2\n"


def with_participants(fake_prolific, study, pids=("P1", "P2", "P3"), group="american"):
    (row,) = prolific_study_create(study=study, group=group)
    for pid in pids:
        fake_prolific.add_submission(row.prolific_id, pid, status="APPROVED")
    prolific_submissions_sync(study=study)
    return row


@pytest.fixture
def synced(fake_prolific, study_for_prolific):
    return with_participants(fake_prolific, study_for_prolific)


def test_it_creates_a_batch_with_prolifics_costs_and_pays_nothing(fake_prolific, study_for_prolific, synced):
    batch = bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)
    assert batch.status == BonusBatchStatus.CREATED and batch.prolific_id in fake_prolific.bonuses
    assert batch.rows == [{"participant_id": "P1", "amount": "1.50"}, {"participant_id": "P2", "amount": "2.00"}]
    assert (batch.amount, batch.fees, batch.vat, batch.total_amount) == (
        Decimal("3.50"),
        Decimal("1.17"),
        Decimal("0.00"),
        Decimal("4.67"),
    )
    (call,) = fake_prolific.calls("POST", "bonus-payments")
    assert call["body"] == {"study_id": synced.prolific_id, "csv_bonuses": "P1,1.50\nP2,2.00\n"}
    assert fake_prolific.pay_counts == {}


def test_it_gives_back_the_same_batch_for_the_same_file(fake_prolific, study_for_prolific, synced):
    first = bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)
    again = bonus_batch_create(study=study_for_prolific, file_or_text="participant_id,amount\nP2,2.00\nP1,1.5\n")
    assert again.pk == first.pk
    assert len(fake_prolific.calls("POST", "bonus-payments")) == 1


def test_it_names_every_bad_row_and_creates_nothing(fake_prolific, study_for_prolific, synced, settings):
    settings.PROLIFIC_BONUS_CAP = 10
    text = "participant_id,amount\nP1,1.50\nSTRANGER,1\nP2,-1\nP3,11\nP1,2\n,1\nP2,1.505\nP3,abc\n"
    with pytest.raises(BonusFileError) as caught:
        bonus_batch_create(study=study_for_prolific, file_or_text=text)
    errors = caught.value.errors
    assert any(e.startswith("row 3, column 'participant_id'") and "STRANGER" in e for e in errors)
    assert any(e.startswith("row 4, column 'amount'") and "more than zero" in e for e in errors)
    assert any(e.startswith("row 5, column 'amount'") and "cap of 10" in e for e in errors)
    assert any(e.startswith("row 6, column 'participant_id'") and "row 2" in e for e in errors)
    assert any(e.startswith("row 7, column 'participant_id'") and "empty" in e for e in errors)
    assert any(e.startswith("row 8, column 'amount'") and "two decimals" in e for e in errors)
    assert any(e.startswith("row 9, column 'amount'") and "not an amount" in e for e in errors)
    assert not BonusBatch.objects.exists()
    assert fake_prolific.calls("POST", "bonus-payments") == []


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("pid,amount\nP1,1\n", "column 'participant_id' is missing"),
        ("participant_id,amount\n", "no bonus rows"),
        ("participant_id,amount\nP1,1,2\n", "row 2"),
        ("", "empty"),
    ],
)
def test_it_refuses_a_file_it_cannot_use(study_for_prolific, synced, text, error):
    with pytest.raises(BonusFileError, match=error):
        bonus_rows_validate(study=study_for_prolific, file_or_text=text)


def test_it_wants_one_prolific_study_per_file(fake_prolific, study_for_prolific, synced):
    with_participants(fake_prolific, study_for_prolific, pids=("C1",), group="chinese")
    with pytest.raises(BonusFileError, match="several Prolific studies"):
        bonus_rows_validate(study=study_for_prolific, file_or_text="participant_id,amount\nP1,1\nC1,1\n")


def test_it_pays_once_however_often_pay_is_called(fake_prolific, study_for_prolific, synced):
    batch = bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)
    paid = bonus_batch_pay(batch=batch)
    assert paid.status == BonusBatchStatus.SENT and paid.sent_at
    assert bonus_batch_pay(batch=batch).status == BonusBatchStatus.SENT
    prolific_bonus_pay_task(batch.pk)  # a worker's redelivery
    assert fake_prolific.pay_counts[batch.prolific_id] == 1


def test_it_never_sends_again_a_batch_interrupted_after_sending(fake_prolific, study_for_prolific, synced):
    batch = bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)
    fake_prolific.fail(status=502, path="/pay/")  # the pay may have gone through; its answer did not come back
    with pytest.raises(ProlificApiError):
        bonus_batch_pay(batch=batch)
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.SENDING and "never sent again" in batch.error
    assert bonus_batch_pay(batch=batch).status == BonusBatchStatus.SENDING
    assert len(fake_prolific.calls("POST", "/pay/")) == 1


def test_it_never_sends_again_a_batch_whose_process_died_after_the_claim(fake_prolific, study_for_prolific, synced):
    batch = bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)
    BonusBatch.objects.filter(pk=batch.pk).update(status=BonusBatchStatus.SENDING)  # killed before the answer
    assert bonus_batch_pay(batch=batch).status == BonusBatchStatus.SENDING
    assert fake_prolific.calls("POST", "/pay/") == []


def test_it_lets_a_refused_payment_be_paid_later(fake_prolific, study_for_prolific, synced):
    batch = bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)
    fake_prolific.fail(status=400, path="/pay/")  # e.g. not enough balance: nothing was paid
    with pytest.raises(ProlificApiError):
        bonus_batch_pay(batch=batch)
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.FAILED and batch.error
    assert bonus_batch_pay(batch=batch).status == BonusBatchStatus.SENT
    assert fake_prolific.pay_counts[batch.prolific_id] == 1


def test_it_retries_a_rate_limited_payment(fake_prolific, study_for_prolific, synced):
    batch = bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)
    fake_prolific.fail(status=429, path="/pay/", retry_after="0")
    assert bonus_batch_pay(batch=batch).status == BonusBatchStatus.SENT
    assert fake_prolific.pay_counts[batch.prolific_id] == 1


def test_it_changes_nothing_without_a_token(fake_prolific, study_for_prolific, synced, monkeypatch, settings):
    batch = bonus_batch_create(study=study_for_prolific, file_or_text=GOOD)
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV)
    with pytest.raises(ProlificNotConfigured):
        bonus_batch_pay(batch=batch)
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.CREATED


def batch_for_a_race(fake_prolific, settings, slug: str) -> BonusBatch:
    """A batch of a committed study, for payers on several connections at once, and a Prolific slow to answer."""
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")
    settings.PROLIFIC_SITE_URL = SITE
    study = light_study(slug)
    with_participants(fake_prolific, study)
    batch = bonus_batch_create(study=study, file_or_text=GOOD)
    fake_prolific.delay = 0.2
    return batch


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_pays_once_when_two_pay_at_the_same_instant(fake_prolific, settings):
    batch = batch_for_a_race(fake_prolific, settings, "race-pay")

    def pay():
        return bonus_batch_pay(batch=BonusBatch.objects.select_related("prolific_study__study").get(pk=batch.pk)).status

    results, errors = at_the_same_instant(pay, pay, pay, pay)
    assert errors == []
    assert fake_prolific.pay_counts[batch.prolific_id] == 1
    assert len(fake_prolific.calls("POST", "/pay/")) == 1
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.SENT


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_creates_one_batch_when_the_same_file_is_sent_twice_at_once(fake_prolific, settings):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")
    settings.PROLIFIC_SITE_URL = SITE
    study = light_study("race-bonus")
    with_participants(fake_prolific, study)
    fake_prolific.delay = 0.1

    def create():
        return bonus_batch_create(study=study, file_or_text=GOOD).pk

    results, errors = at_the_same_instant(create, create)
    assert errors == []
    assert BonusBatch.objects.count() == 1
    assert len(set(results)) == 1


def test_it_reads_an_uploaded_file(fake_prolific, study_for_prolific, synced):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("bonuses.csv", GOOD.encode(), content_type="text/csv")
    assert bonus_batch_create(study=study_for_prolific, file_or_text=upload).amount == Decimal("3.50")
    assert bonus_services.bonus_csv([{"participant_id": "P1", "amount": "1.50"}]) == "P1,1.50\n"
