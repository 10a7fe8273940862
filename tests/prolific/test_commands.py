"""The prolific_* commands: what they print, their errors (exit 1), and what they say without a token."""

import json

import pytest
from django.core.management import call_command, execute_from_command_line
from django.core.management.base import CommandError

from prolific.models import BonusBatch, BonusBatchStatus, ProlificStudy, ProlificStudyStatus, SubmissionStatus
from study.models import ParticipantStatus
from tests.prolific.conftest import SITE, session

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def no_token(settings, monkeypatch):
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV, raising=False)


def test_publish_dry_run_prints_the_exact_bodies_without_a_token(study_for_prolific, no_token, tmp_path):
    filters = tmp_path / "filters.json"
    filters.write_text(json.dumps([{"filter_id": "age", "selected_range": {"lower": 18}}]))
    out = run("prolific_publish", "prolific-study", "--group", "each", "--dry-run", "--filters", str(filters))
    bodies = [json.loads(part) for part in out.split("POST studies/\n")[1:]]
    assert [b["total_available_places"] for b in bodies] == [3, 3]
    assert bodies[0]["external_study_url"].startswith(f"{SITE}/s/prolific-study/?PROLIFIC_PID=")
    assert bodies[0]["filters"] == [{"filter_id": "age", "selected_range": {"lower": 18}}]
    assert not ProlificStudy.objects.exists()


def test_publish_says_what_it_would_do_and_which_variable_to_set(study_for_prolific, no_token, settings):
    with pytest.raises(CommandError, match=settings.PROLIFIC_API_TOKEN_ENV):
        run("prolific_publish", "prolific-study", "--publish")
    assert not ProlificStudy.objects.exists()


def test_publish_creates_and_publishes_once(fake_prolific, study_for_prolific):
    out = run("prolific_publish", "prolific-study", "--group", "american", "--completion", "approve", "--publish")
    row = ProlificStudy.objects.get()
    assert row.status == ProlificStudyStatus.ACTIVE and f"american: {row.prolific_id} ACTIVE" in out
    assert row.request_body["completion_codes"][0]["actions"] == [{"action": "AUTOMATICALLY_APPROVE"}]
    run("prolific_publish", "prolific-study", "--group", "american", "--publish")
    assert len(fake_prolific.studies) == 1
    assert len(fake_prolific.calls("POST", "/transition/")) == 1


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["no-such-study"], "No study with slug"),
        (["prolific-study", "--group", "martian"], "Unknown group"),
        (["prolific-study", "--filters", "/nonexistent.json"], "Cannot read the filters file"),
        (["prolific-study", "--site-url", "studies.example.org", "--dry-run"], "public address"),
    ],
)
def test_publish_names_what_is_wrong(fake_prolific, study_for_prolific, args, error):
    with pytest.raises(CommandError, match=error):
        run("prolific_publish", *args)


def test_publish_reports_prolifics_refusal(fake_prolific, study_for_prolific):
    fake_prolific.fail(status=400, path="/studies/")
    with pytest.raises(CommandError, match="HTTP 400"):
        run("prolific_publish", "prolific-study")


def test_sync_prints_the_counts(fake_prolific, study_for_prolific):
    run("prolific_publish", "prolific-study", "--group", "american")
    row = ProlificStudy.objects.get()
    sub = fake_prolific.add_submission(row.prolific_id, "PID1", status="RETURNED")
    session(study_for_prolific, "PID1", sub, status=ParticipantStatus.IN_PROGRESS)
    out = run("prolific_sync", "prolific-study")
    assert "1 submissions seen, 1 new" in out and "1 places freed" in out


def test_sync_needs_a_prolific_study_and_a_token(fake_prolific, study_for_prolific, settings, monkeypatch):
    with pytest.raises(CommandError, match="prolific_publish first"):
        run("prolific_sync", "prolific-study")
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV)
    with pytest.raises(CommandError, match=settings.PROLIFIC_API_TOKEN_ENV):
        run("prolific_sync", "prolific-study")


def test_hooks_register_subscribes_the_apps_webhook(fake_prolific, study_for_prolific):
    out = run("prolific_hooks", "prolific-study", "--register")
    (hook,) = fake_prolific.subscriptions.values()
    assert hook["target_url"] == f"{SITE}/prolific/hooks/submissions/"
    assert "subscribed" in out
    assert "already subscribed" in run("prolific_hooks", "prolific-study", "--register")


def test_hooks_new_secret_is_printed_once(fake_prolific, study_for_prolific, settings):
    out = run("prolific_hooks", "prolific-study", "--new-secret")
    assert fake_prolific.webhook_secret in out and settings.PROLIFIC_WEBHOOK_SECRET_ENV in out


def test_hooks_needs_something_to_do(study_for_prolific):
    with pytest.raises(CommandError, match="--register"):
        run("prolific_hooks", "prolific-study")


def test_review_lists_approves_and_reports_refusals(fake_prolific, study_for_prolific):
    run("prolific_publish", "prolific-study", "--group", "american")
    row = ProlificStudy.objects.get()
    good = fake_prolific.add_submission(row.prolific_id, "GOOD", status="AWAITING REVIEW")
    held = fake_prolific.add_submission(row.prolific_id, "HELD", status="AWAITING REVIEW")
    session(study_for_prolific, "GOOD", good)
    session(study_for_prolific, "HELD", held)
    run("prolific_sync", "prolific-study")
    listing = run("prolific_review", "prolific-study")
    assert f"{good}\tGOOD\tAWAITING REVIEW\tvalid" in listing
    dry = run("prolific_review", "prolific-study", "--approve-valid", "--dry-run")
    assert "2 submissions would be approved" in dry and fake_prolific.calls("POST", "bulk-approve") == []
    fake_prolific.refuse(held, "Under investigation.")
    with pytest.raises(CommandError, match="refused 1"):
        run("prolific_review", "prolific-study", "--approve-valid")
    assert fake_prolific.status_of(good) == SubmissionStatus.APPROVED
    assert "Under investigation." in run("prolific_review", "prolific-study")


def test_bonus_prints_the_cost_and_pays_only_with_pay(fake_prolific, study_for_prolific, tmp_path):
    run("prolific_publish", "prolific-study", "--group", "american")
    row = ProlificStudy.objects.get()
    fake_prolific.add_submission(row.prolific_id, "P1", status="APPROVED")
    run("prolific_sync", "prolific-study")
    csv = tmp_path / "bonuses.csv"
    csv.write_text("participant_id,amount\nP1,2.00\n")
    out = run("prolific_bonus", "prolific-study", "--file", str(csv))
    assert "1 bonuses, amount 2.00, fees 0.67, VAT 0.00, total cost 2.67" in out and "--pay" in out
    assert fake_prolific.pay_counts == {}
    out = run("prolific_bonus", "prolific-study", "--file", str(csv), "--pay")
    batch = BonusBatch.objects.get()
    assert batch.status == BonusBatchStatus.SENT and "Paid" in out
    # A rerun of the script succeeds: the batch is paid, and nothing is sent again.
    assert "already paid" in run("prolific_bonus", "prolific-study", "--file", str(csv), "--pay")
    assert fake_prolific.pay_counts[batch.prolific_id] == 1


def test_bonus_names_the_bad_rows(fake_prolific, study_for_prolific, tmp_path):
    csv = tmp_path / "bonuses.csv"
    csv.write_text("participant_id,amount\nNOBODY,1\n")
    with pytest.raises(CommandError, match="1 error"):
        run("prolific_bonus", "prolific-study", "--file", str(csv))
    with pytest.raises(CommandError, match="Cannot read"):
        run("prolific_bonus", "prolific-study", "--file", str(tmp_path / "missing.csv"))


def test_bonus_says_what_it_would_do_without_a_token(
    fake_prolific, study_for_prolific, tmp_path, settings, monkeypatch
):
    run("prolific_publish", "prolific-study", "--group", "american")
    fake_prolific.add_submission(ProlificStudy.objects.get().prolific_id, "P1", status="APPROVED")
    run("prolific_sync", "prolific-study")
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV)
    csv = tmp_path / "bonuses.csv"
    csv.write_text("participant_id,amount\nP1,2.00\n")
    with pytest.raises(CommandError, match=settings.PROLIFIC_API_TOKEN_ENV):
        run("prolific_bonus", "prolific-study", "--file", str(csv), "--pay")
    assert not BonusBatch.objects.exists()


def test_commands_exit_1_on_errors(study_for_prolific, capsys):
    with pytest.raises(SystemExit) as caught:
        execute_from_command_line(["manage.py", "prolific_sync", "no-such-study", "--skip-checks"])
    assert caught.value.code == 1
    assert "No study with slug" in capsys.readouterr().err
