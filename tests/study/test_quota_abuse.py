"""Scripted entries cannot fill a live study's quota: Prolific-shaped ids only, entries and consents
limited per address, a place without answers held for STUDY_HOLD_MINUTES, unverified sessions released."""

import random
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from study.models import Participant, ParticipantStatus
from study.selectors.participants import participant_places_taken
from study.selectors.results import study_export_rows, study_results
from study.services import participants as flow
from study.services.participants import prolific_id_for
from study.services.simulation import SyntheticParticipant, answer_key, entry_url, parse_form

from .factories import make_study, package_dict

pytestmark = pytest.mark.django_db

STUDY_ID = prolific_id_for("prolific-study")


@pytest.fixture
def study():
    return make_study(package_dict(quota_per_group=1))


def run_url(study):
    return reverse("study:run", args=[study.slug])


def link(study, *, pid, session, study_id=STUDY_ID, group="american"):
    return f"/s/{study.slug}/?{urlencode({'PROLIFIC_PID': pid, 'STUDY_ID': study_id, 'SESSION_ID': session, 'group': group})}"


def consented(study, label, *, group="american", address="127.0.0.1"):
    """A participant who entered and consented (on the instructions page); their browser."""
    client = Client(REMOTE_ADDR=address)
    assert client.get(entry_url("", study.slug, pid=prolific_id_for(label), group=group)).status_code == 302
    response = client.post(run_url(study), {"step": "consent", "consent": "yes"})
    return client, response


def answer_first_page(client, study):
    """Past the instructions, the first artwork page's answers as the page sends them."""
    assert client.post(run_url(study), {"step": "instructions"}).status_code == 200
    spec = parse_form(client.get(run_url(study)).content.decode())
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(0))
    assert client.post(run_url(study), bot.answer(spec)).status_code == 200


def participant(label) -> Participant:
    return Participant.objects.get(prolific_pid=prolific_id_for(label))


# Ids of Prolific's shape


@pytest.mark.parametrize(
    "field",
    ["pid", "session", "study_id"],
)
@pytest.mark.parametrize(
    "value",
    ["scripted-entry-001", "5f3c" * 5, "5f3c" * 6 + "0", "5f3c" * 5 + "zzzz"],
    ids=["free-text", "short", "long", "not-hex"],
)
def test_it_refuses_an_id_not_shaped_like_prolifics_and_takes_no_place(study, field, value):
    ids = {"pid": prolific_id_for("pid"), "session": prolific_id_for("session"), "study_id": STUDY_ID}
    ids[field] = value
    response = Client().get(link(study, **ids))
    assert response.status_code == 400
    assert b'data-reason="bad_id"' in response.content
    assert b"This link does not come from Prolific" in response.content
    assert not Participant.objects.exists()


def test_it_answers_a_malformed_id_in_the_participants_language(study):
    response = Client().get(link(study, pid="scripted-1", session=prolific_id_for("s"), group="chinese"))
    assert response.status_code == 400 and response["Content-Language"] == "zh-hans"
    assert b'lang="zh-Hans"' in response.content and b'data-reason="bad_id"' in response.content


def test_it_admits_prolific_shaped_ids_in_either_case(study):
    pid = prolific_id_for("upper").upper()
    response = Client().get(link(study, pid=pid, session=prolific_id_for("upper-session")))
    assert response.status_code == 302
    assert Participant.objects.get().prolific_pid == pid


def test_it_refuses_a_link_without_study_id(study):
    response = Client().get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id_for('p')}&SESSION_ID={prolific_id_for('s')}")
    assert response.status_code == 400 and b'data-reason="bad_params"' in response.content
    assert not Participant.objects.exists()


def test_the_service_refuses_a_malformed_id_whoever_calls_it(study):
    with pytest.raises(flow.EntryError) as refused:
        flow.participant_enter(study=study, pid="PIDA", prolific_study_id=STUDY_ID, session_id=prolific_id_for("s"))
    assert refused.value.reason == "bad_id"


# Per-address limits


def test_it_answers_429_once_an_address_opened_too_many_links(study, settings):
    settings.STUDY_ENTRY_RATE = "3/m"
    for n in range(3):
        assert Client().get(entry_url("", study.slug, pid=prolific_id_for(f"e{n}"))).status_code == 302
    refused = Client().get(entry_url("", study.slug, pid=prolific_id_for("e3"), group="chinese"))
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert b'data-reason="too_many"' in refused.content and refused["Content-Language"] == "zh-hans"
    # A template like every participant page: no inline script (the CSP forbids it anyway).
    assert b"<script>" not in refused.content and b"<script " not in refused.content.replace(b"<script src", b"")
    assert Participant.objects.count() == 3
    # Another address is counted on its own.
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert other.get(entry_url("", study.slug, pid=prolific_id_for("e3"))).status_code == 302


def test_it_answers_429_once_an_address_sent_too_many_consents_and_takes_no_place(settings):
    settings.STUDY_CONSENT_RATE = "2/m"
    study = make_study(package_dict(quota_per_group=5))
    for n in range(2):
        assert consented(study, f"c{n}")[1].status_code == 200
    client, refused = consented(study, "c2")
    assert refused.status_code == 429 and b'data-reason="too_many"' in refused.content
    assert int(refused["Retry-After"]) >= 1
    assert participant("c2").status == ParticipantStatus.ENTERED and participant("c2").plan == []
    assert participant_places_taken(study=study, group="american") == 2
    assert consented(study, "c3", address="203.0.113.9")[1].status_code == 200


# The hold of a place without answers


def test_it_releases_a_place_held_without_answers_after_the_hold_minutes(study, settings):
    settings.STUDY_HOLD_MINUTES = 10
    consented(study, "holder")
    assert consented(study, "late")[1].status_code == 403
    Participant.objects.filter(prolific_pid=prolific_id_for("holder")).update(
        last_seen_at=timezone.now() - timedelta(minutes=11)
    )
    assert participant_places_taken(study=study, group="american") == 0
    assert study_results(study=study)["participants"]["returned"] == 1
    late = Client()
    late.get(entry_url("", study.slug, pid=prolific_id_for("later"), group="american"))
    assert late.post(run_url(study), {"step": "consent", "consent": "yes"}).status_code == 200
    assert participant("holder").status == ParticipantStatus.RETURNED


def test_it_keeps_the_place_of_a_session_with_answers_for_the_abandon_minutes(study, settings):
    settings.STUDY_HOLD_MINUTES = 10
    client, _ = consented(study, "answering")
    answer_first_page(client, study)
    held = participant("answering")
    assert held.step_index == 2
    Participant.objects.filter(pk=held.pk).update(last_seen_at=timezone.now() - timedelta(minutes=60))
    assert participant_places_taken(study=study, group="american") == 1
    late = Client()
    late.get(entry_url("", study.slug, pid=prolific_id_for("late"), group="american"))
    assert late.post(run_url(study), {"step": "consent", "consent": "yes"}).status_code == 403
    held.refresh_from_db()
    assert held.status == ParticipantStatus.IN_PROGRESS


def test_the_counts_turn_a_held_place_returned_when_the_hold_ends(study, settings, monkeypatch):
    settings.STUDY_HOLD_MINUTES = 10
    consented(study, "holder")
    Participant.objects.filter(prolific_pid=prolific_id_for("holder")).update(
        last_seen_at=timezone.now() - timedelta(minutes=9)
    )
    assert study_results(study=study)["participants"]["in_progress"] == 1
    real_now = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real_now() + timedelta(minutes=2))
    # No write since the cached counts: they end with the hold, not after STUDY_ABANDON_MINUTES.
    counts = study_results(study=study)["participants"]
    assert counts["in_progress"] == 0 and counts["returned"] == 1


def test_a_released_holder_coming_back_continues_while_a_place_is_free(study):
    client, _ = consented(study, "slow")
    Participant.objects.filter(prolific_pid=prolific_id_for("slow")).update(
        last_seen_at=timezone.now() - timedelta(minutes=30), status=ParticipantStatus.RETURNED
    )
    assert client.get(entry_url("", study.slug, pid=prolific_id_for("slow"))).status_code == 302
    assert participant("slow").status == ParticipantStatus.IN_PROGRESS


# Sessions Prolific does not know


def test_an_unverified_session_frees_its_place_and_leaves_results_and_exports(client, researcher):
    study = make_study(package_dict(quota_per_group=1))
    fake, _ = consented(study, "fake")
    answer_first_page(fake, study)
    real, _ = consented(study, "real", group="chinese")
    answer_first_page(real, study)
    fake_row = participant("fake")
    exported = {row["participant"] for row in study_export_rows(study=study)}
    assert exported == {str(fake_row.pseudonym), str(participant("real").pseudonym)}
    assert flow.participants_exclude_unverified(study=study, participant_ids=[fake_row.pk]) == 1
    assert participant_places_taken(study=study, group="american") == 0
    counts = study_results(study=study)["participants"]
    assert counts["unverified"] == 1 and counts["started"] == 1 and counts["in_progress"] == 1
    assert counts["by_group"]["american"]["unverified"] == 1
    assert {row["participant"] for row in study_export_rows(study=study)} == {str(participant("real").pseudonym)}
    client.force_login(researcher)
    page = client.get(reverse("study:results", args=[study.slug])).content.decode()
    assert "1 unverified entry released" in page
    api = client.get(reverse("study_api:responses", args=[study.slug]) + "?page_size=1000").json()
    assert {row["participant"] for row in api["results"]} == {str(participant("real").pseudonym)}
    # Its browser stores nothing more and is told why; the link does not reopen it.
    again = fake.post(run_url(study), {"step": "instructions"})
    assert again.status_code == 403 and b'data-reason="unverified"' in again.content
    reopened = fake.get(entry_url("", study.slug, pid=prolific_id_for("fake")))
    assert reopened.status_code == 403 and b'data-reason="unverified"' in reopened.content
    assert participant("fake").status == ParticipantStatus.UNVERIFIED


def test_it_never_marks_previews_test_responses_or_unconsented_sessions_unverified(study, researcher):
    entered = Client()
    entered.get(entry_url("", study.slug, pid=prolific_id_for("entered")))
    preview = flow.preview_start(study=study, user=researcher, group="american")
    ids = [participant("entered").pk, preview.pk]
    assert flow.participants_exclude_unverified(study=study, participant_ids=ids) == 0
    assert participant("entered").status == ParticipantStatus.ENTERED
