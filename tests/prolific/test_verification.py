"""A consented session Prolific does not know (no submission of its PROLIFIC_PID and SESSION_ID) within
PROLIFIC_VERIFY_SECONDS is released by the sync and left out of the results."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from prolific.client import ProlificError
from prolific.services import prolific_study_create, prolific_submissions_sync
from study.models import Participant, ParticipantStatus
from study.selectors.participants import participant_places_taken
from study.selectors.results import study_results
from study.services.participants import prolific_id_for
from study.services.simulation import entry_url
from tests.study.factories import make_study, package_dict

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(settings):
    settings.PROLIFIC_SITE_URL = "https://studies.example.org"
    settings.PROLIFIC_VERIFY_SECONDS = 300
    return make_study(package_dict(quota_per_group=2, estimated_minutes=20, reward="£3.00"))


@pytest.fixture
def american(fake_prolific, study):
    """The American group's Prolific study, live; the Chinese group is recruited elsewhere."""
    (row,) = prolific_study_create(study=study, group="american")
    fake_prolific.studies[row.prolific_id]["status"] = "ACTIVE"
    return row


def arrive(study, *, pid, session, group="american", minutes_ago=10) -> Participant:
    """A participant who opened the link with these ids and consented ``minutes_ago``."""
    client = Client()
    assert client.get(entry_url("", study.slug, pid=pid, group=group, session=session)).status_code == 302
    assert (
        client.post(reverse("study:run", args=[study.slug]), {"step": "consent", "consent": "yes"}).status_code == 200
    )
    participant = Participant.objects.get(study=study, prolific_pid=pid)
    # Seen just now (the idle rules do not release it), consented a while ago.
    Participant.objects.filter(pk=participant.pk).update(consented_at=timezone.now() - timedelta(minutes=minutes_ago))
    return participant


def status(participant) -> str:
    participant.refresh_from_db()
    return participant.status


def test_it_releases_a_session_prolific_does_not_know_after_the_verification_time(fake_prolific, study, american):
    real_pid = prolific_id_for("real")
    real = arrive(study, pid=real_pid, session=fake_prolific.add_submission(american.prolific_id, real_pid))
    scripted = arrive(study, pid=prolific_id_for("scripted"), session=prolific_id_for("scripted-session"))
    assert participant_places_taken(study=study, group="american") == 2
    counts = prolific_submissions_sync(study=study)
    assert counts["unverified"] == 1
    assert status(scripted) == ParticipantStatus.UNVERIFIED and status(real) == ParticipantStatus.IN_PROGRESS
    assert participant_places_taken(study=study, group="american") == 1
    participants = study_results(study=study)["participants"]
    assert participants["unverified"] == 1 and participants["started"] == 1
    # A second sync finds nothing more to release.
    assert prolific_submissions_sync(study=study)["unverified"] == 0


def test_it_waits_for_the_verification_time_after_the_consent(fake_prolific, study, american):
    recent = arrive(study, pid=prolific_id_for("recent"), session=prolific_id_for("recent-s"), minutes_ago=2)
    assert prolific_submissions_sync(study=study)["unverified"] == 0
    assert status(recent) == ParticipantStatus.IN_PROGRESS


def test_it_needs_the_pid_and_the_session_of_one_submission(fake_prolific, study, american):
    # A real participant's PID with a made-up session, and a real submission id under another PID.
    victim = prolific_id_for("victim")
    submission = fake_prolific.add_submission(american.prolific_id, victim)
    borrowed_pid = arrive(study, pid=victim, session=prolific_id_for("made-up"))
    borrowed_session = arrive(study, pid=prolific_id_for("other"), session=submission)
    assert prolific_submissions_sync(study=study)["unverified"] == 2
    assert status(borrowed_pid) == status(borrowed_session) == ParticipantStatus.UNVERIFIED


def test_it_leaves_groups_without_a_prolific_study_and_test_responses_alone(fake_prolific, study, american):
    elsewhere = arrive(study, pid=prolific_id_for("zh"), session=prolific_id_for("zh-s"), group="chinese")
    synthetic = arrive(study, pid=prolific_id_for("syn"), session=prolific_id_for("syn-s"))
    Participant.objects.filter(pk=synthetic.pk).update(is_test=True)
    assert prolific_submissions_sync(study=study)["unverified"] == 0
    assert status(elsewhere) == status(synthetic) == ParticipantStatus.IN_PROGRESS


def test_it_releases_nothing_when_the_listing_fails(fake_prolific, study, american, settings):
    scripted = arrive(study, pid=prolific_id_for("scripted"), session=prolific_id_for("scripted-session"))
    settings.PROLIFIC_MAX_ATTEMPTS = 1
    fake_prolific.fail(status=503, path="/submissions/")
    with pytest.raises(ProlificError):
        prolific_submissions_sync(study=study)
    assert status(scripted) == ParticipantStatus.IN_PROGRESS


def test_the_results_page_counts_the_released_entries(fake_prolific, study, american, researcher_client):
    arrive(study, pid=prolific_id_for("a"), session=prolific_id_for("a-s"))
    arrive(study, pid=prolific_id_for("b"), session=prolific_id_for("b-s"))
    prolific_submissions_sync(study=study)
    page = researcher_client.get(reverse("study:results", args=[study.slug])).content.decode()
    assert "2 unverified entries released" in page
    assert (
        researcher_client.get(reverse("study:results", args=[study.slug]) + "?format=json").json()["participants"][
            "unverified"
        ]
        == 2
    )


def test_the_command_and_the_sync_button_say_how_many_were_released(fake_prolific, study, american, researcher_client):
    arrive(study, pid=prolific_id_for("c"), session=prolific_id_for("c-s"))
    out = io.StringIO()
    call_command("prolific_sync", study.slug, stdout=out)
    assert "1 sessions unknown to Prolific released" in out.getvalue()
    arrive(study, pid=prolific_id_for("d"), session=prolific_id_for("d-s"))
    page = researcher_client.post(reverse("prolific:sync", args=[study.slug]), follow=True).content.decode()
    assert "1 session Prolific does not know was released and left out of the results." in page
