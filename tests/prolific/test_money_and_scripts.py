"""Prolific's money read in its documented unit, and the commands as scripts use them.

Prolific answers a bulk bonus record's ``amount``, ``fees``, ``vat`` and ``total_amount`` in the
currency's minor unit (its documentation: two bonuses of 4.25 answer ``"amount": 850, "fees":
283.34, "total_amount": 1133.34``), while the csv it is sent is in the major unit. The loopback fake
answers in exactly that shape. The scripts: ``prolific_sync`` prints the discrepancies it finds,
``prolific_bonus --pay`` on a paid batch exits 0 saying so, and ``prolific_publish`` that finds a
draft still being created by another run waits for it or exits 1.
"""

import importlib
import re
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command, execute_from_command_line
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from prolific.management.commands import prolific_publish
from prolific.models import BonusBatch, BonusBatchStatus, ProlificStudy, ProlificStudyStatus
from prolific.services import bonus_batch_create, prolific_study_create, prolific_submissions_sync
from prolific.services.bonuses import bonus_answer_money, minor_to_major
from tests.prolific.conftest import session

pytestmark = pytest.mark.django_db

SLUG = "prolific-study"


def creates(fake) -> list[dict]:
    return [call for call in fake.calls("POST") if call["path"].endswith("/studies/")]


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def with_participants(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group="american")
    for pid in ("P1", "P2"):
        fake_prolific.add_submission(row.prolific_id, pid, status="APPROVED")
    prolific_submissions_sync(study=study_for_prolific)
    return row


# --- Money ------------------------------------------------------------------------------------


def test_it_reads_the_documentations_own_example_in_the_major_unit(
    fake_prolific, study_for_prolific, with_participants, researcher_client, tmp_path
):
    csv = "participant_id,amount\nP1,4.25\nP2,4.25\n"

    batch = bonus_batch_create(study=study_for_prolific, file_or_text=csv)

    # What Prolific answered, word for word as its documentation shows it.
    (call,) = fake_prolific.calls("POST", "bonus-payments")
    answered = fake_prolific.bonuses[batch.prolific_id]
    assert (answered["amount"], answered["fees"], answered["total_amount"]) == (850, 283.34, 1133.34)
    assert call["body"]["csv_bonuses"] == "P1,4.25\nP2,4.25\n"
    assert (batch.amount, batch.fees, batch.vat, batch.total_amount) == (
        Decimal("8.50"),
        Decimal("2.83"),
        Decimal("0.00"),
        Decimal("11.33"),
    )
    page = researcher_client.get(reverse("prolific:study", args=[SLUG])).content.decode()
    # Prolific's minor units nowhere on the page as a number of their own (the fake Prolific's port,
    # 127.0.0.1:38507 in one run, may hold the same digits).
    assert 'data-testid="batch-total">11.33<' in page
    assert not re.search(r"(?<![\d.:])(850|1133)(?!\d)", page)
    file = tmp_path / "bonuses.csv"
    file.write_text(csv)
    out = run("prolific_bonus", SLUG, "--file", str(file))
    assert "amount 8.50, fees 2.83, VAT 0.00, total cost 11.33" in out


def test_it_shows_the_issues_batch_of_1_50_and_0_75_as_2_25_not_225(
    fake_prolific, study_for_prolific, with_participants
):
    batch = bonus_batch_create(study=study_for_prolific, file_or_text="participant_id,amount\nP1,1.50\nP2,0.75\n")

    assert fake_prolific.bonuses[batch.prolific_id]["amount"] == 225
    assert (batch.amount, batch.fees, batch.total_amount) == (Decimal("2.25"), Decimal("0.75"), Decimal("3.00"))


@pytest.mark.parametrize(
    ("value", "major"),
    [
        (850, Decimal("8.50")),
        (850.0, Decimal("8.50")),
        ("850", Decimal("8.50")),
        (" 1133.34 ", Decimal("11.33")),
        (283.34, Decimal("2.83")),
        (0.5, Decimal("0.01")),  # half a penny rounds up, as money does
        (0, Decimal("0.00")),
        (1, Decimal("0.01")),
        (None, None),
        ("", None),
        ("n/a", None),
        ("NaN", None),
        ("Infinity", None),
        (True, None),
    ],
)
def test_it_converts_prolifics_minor_units(value, major):
    assert minor_to_major(value) == major


def test_it_fills_the_fields_prolific_leaves_out():
    assert bonus_answer_money({"id": "x", "amount": 300}, file_total=Decimal("3.00")) == {
        "amount": Decimal("3.00"),
        "fees": Decimal("0.00"),
        "vat": Decimal("0.00"),
        "total_amount": Decimal("3.00"),
    }
    assert bonus_answer_money({"id": "x", "fees": 100, "vat": 20}, file_total=Decimal("3.00")) == {
        "amount": Decimal("3.00"),
        "fees": Decimal("1.00"),
        "vat": Decimal("0.20"),
        "total_amount": Decimal("4.20"),
    }


def test_it_corrects_batches_stored_in_minor_units_and_leaves_the_others(with_participants):
    wrong = BonusBatch.objects.create(
        prolific_study=with_participants,
        prolific_id="bb-old",
        rows=[{"participant_id": "P1", "amount": "1.50"}, {"participant_id": "P2", "amount": "0.75"}],
        fingerprint="old",
        amount=Decimal("225.00"),
        fees=Decimal("75.00"),
        vat=Decimal("0.00"),
        total_amount=Decimal("300.00"),
    )
    right = BonusBatch.objects.create(
        prolific_study=with_participants,
        prolific_id="bb-new",
        rows=[{"participant_id": "P1", "amount": "4.25"}, {"participant_id": "P2", "amount": "4.25"}],
        fingerprint="new",
        amount=Decimal("8.50"),
        fees=Decimal("2.83"),
        total_amount=Decimal("11.33"),
    )
    migration = importlib.import_module("prolific.migrations.0003_bonus_money_in_major_units")
    from django.apps import apps

    migration.money_in_major_units(apps, None)

    wrong.refresh_from_db()
    right.refresh_from_db()
    assert (wrong.amount, wrong.fees, wrong.total_amount) == (Decimal("2.25"), Decimal("0.75"), Decimal("3.00"))
    assert (right.amount, right.fees, right.total_amount) == (Decimal("8.50"), Decimal("2.83"), Decimal("11.33"))


# --- Scripts: prolific_bonus --pay ---------------------------------------------------------------


def test_it_exits_0_saying_so_when_the_batch_was_already_paid(
    fake_prolific, study_for_prolific, with_participants, tmp_path
):
    file = tmp_path / "bonuses.csv"
    file.write_text("participant_id,amount\nP1,2.00\n")
    run("prolific_bonus", SLUG, "--file", str(file), "--pay")
    batch = BonusBatch.objects.get()

    again = run("prolific_bonus", SLUG, "--file", str(file), "--pay")

    assert batch.status == BonusBatchStatus.SENT and f"batch {batch.pk} was already paid" in again
    assert "nothing was sent again" in again and fake_prolific.pay_counts[batch.prolific_id] == 1
    # As a script runs it: no SystemExit at all is exit status 0.
    execute_from_command_line(["manage.py", "prolific_bonus", SLUG, "--file", str(file), "--pay", "--skip-checks"])
    assert fake_prolific.pay_counts[batch.prolific_id] == 1


def test_it_exits_1_when_a_paid_batchs_answer_was_never_known(
    fake_prolific, study_for_prolific, with_participants, tmp_path
):
    file = tmp_path / "bonuses.csv"
    file.write_text("participant_id,amount\nP1,2.00\n")
    run("prolific_bonus", SLUG, "--file", str(file))
    BonusBatch.objects.update(status=BonusBatchStatus.SENDING, sent_at=timezone.now())

    with pytest.raises(CommandError, match="check it in Prolific's web app"):
        run("prolific_bonus", SLUG, "--file", str(file), "--pay")
    assert fake_prolific.pay_counts == {}


# --- Scripts: prolific_sync ---------------------------------------------------------------------


def test_it_prints_the_discrepancies_the_sync_finds(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group="american")
    known = fake_prolific.add_submission(row.prolific_id, "PIDK", status="AWAITING REVIEW")
    orphan = fake_prolific.add_submission(row.prolific_id, "PIDO", status="AWAITING REVIEW")
    session(study_for_prolific, "PIDK", known)
    session(study_for_prolific, "PIDU", "sb-unknown")

    out = run("prolific_sync", SLUG)

    lines = out.splitlines()
    assert "1 session(s) here that Prolific does not know:" in lines
    assert any(line.split() == ["PIDU", "sb-unknown", "Completed"] for line in lines)
    assert "1 submission(s) on Prolific with no session here:" in lines
    assert any(line.split()[:2] == ["PIDO", orphan] for line in lines)
    assert not any("PIDK" in line for line in lines)


def test_it_says_when_the_sync_finds_no_discrepancy(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group="american")
    known = fake_prolific.add_submission(row.prolific_id, "PIDK", status="AWAITING REVIEW")
    session(study_for_prolific, "PIDK", known)

    assert "No discrepancies" in run("prolific_sync", SLUG)


# --- Scripts: prolific_publish ------------------------------------------------------------------


@pytest.fixture
def under_way(study_for_prolific):
    """The draft another run is creating at this moment (its row claimed, no Prolific id yet)."""
    return ProlificStudy.objects.create(
        study=study_for_prolific, group="american", status=ProlificStudyStatus.CREATING, attempt_at=timezone.now()
    )


def test_it_exits_1_when_another_run_is_still_creating_the_draft(fake_prolific, under_way):
    with pytest.raises(CommandError, match="still being created by another run after 0 s"):
        run("prolific_publish", SLUG, "--group", "american", "--publish", "--wait", "0")
    assert fake_prolific.calls("POST") == []


def test_it_waits_for_the_other_run_and_then_publishes(fake_prolific, under_way, monkeypatch):
    prolific_id = fake_prolific.add_study(internal_name="made by the other run")
    pauses = []

    def other_run_finishes(seconds):
        pauses.append(seconds)
        ProlificStudy.objects.filter(pk=under_way.pk).update(
            prolific_id=prolific_id, status=ProlificStudyStatus.UNPUBLISHED, attempt_at=None
        )

    monkeypatch.setattr(prolific_publish, "pause", other_run_finishes)

    out = run("prolific_publish", SLUG, "--group", "american", "--publish")

    assert len(pauses) == 1 and "being created by another run; waiting up to 150 s" in out
    assert f"american: {prolific_id} ACTIVE" in out and fake_prolific.studies[prolific_id]["status"] == "ACTIVE"
    assert creates(fake_prolific) == []  # the other run's draft, not a second one


def test_it_takes_over_the_create_of_a_run_that_died(fake_prolific, under_way, monkeypatch):
    def time_passes(seconds):
        ProlificStudy.objects.filter(pk=under_way.pk).update(attempt_at=timezone.now() - timedelta(minutes=10))

    monkeypatch.setattr(prolific_publish, "pause", time_passes)

    out = run("prolific_publish", SLUG, "--group", "american")

    row = ProlificStudy.objects.get()
    assert row.prolific_id and f"american: {row.prolific_id} UNPUBLISHED" in out
    assert len(creates(fake_prolific)) == 1
