"""The results are computed once per change: every service that writes what they read retires the
cached figures at once (the next page shows the change), a page view that changes nothing does
not, and a session that goes idle counts as returned when its time is up, with no write at all.
"""

import random
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.stamps import stamp_get
from study.models import Participant, ParticipantStatus
from study.selectors.participants import participant_current
from study.selectors.results import study_results, study_results_scope
from study.services import participants as flow
from study.services.participants import prolific_id_for
from study.services.simulation import ServiceTransport, SyntheticParticipant, answer_key, entry_url
from study.steps import participant_step

from .factories import make_study, package_dict
from .test_results import _media  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(_media):  # noqa: F811
    return make_study(package_dict(slug="cached", n_american=2, n_chinese=2, n_qc=1))


def arrive(study, pid: str, *, group: str = "american", pages: int = 0):
    """A participant who entered, consented and sent ``pages`` pages after the consent, through
    the participant pages' services; with ``pages=-1`` all but the last."""
    transport = ServiceTransport()
    page = transport.get(transport.get(entry_url("", study.slug, pid=prolific_id_for(pid), group=group)).location)
    bot = SyntheticParticipant(transport, key=answer_key(study=study), rng=random.Random(pid))
    page = transport.post(page.url, bot.answer(page.spec))
    participant = transport.participant
    sent = 0
    while page.spec is not None and (
        sent < pages or (pages < 0 and participant.step_index < len(participant.plan) - 1)
    ):
        page = transport.post(page.url, bot.answer(page.spec))
        participant = transport.participant
        sent += 1
    return transport, bot, page


def counts(study) -> dict:
    return study_results(study=study)["participants"]


def cached_reads(study) -> int:
    with CaptureQueriesContext(connection) as captured:
        study_results(study=study)
    return len(captured)


def test_it_computes_the_results_once_per_change(study):
    arrive(study, "P1", pages=3)
    first = study_results(study=study)
    assert cached_reads(study) == 0
    assert study_results(study=study)["generated_at"] == first["generated_at"]
    arrive(study, "P2", pages=1)
    assert cached_reads(study) > 0 and counts(study)["started"] == 2


def test_it_shows_a_consent_a_decline_and_a_group_chosen_at_once(study):
    assert counts(study)["started"] == 0
    arrive(study, "P1")
    assert counts(study)["started"] == 1 and counts(study)["in_progress"] == 1

    transport = ServiceTransport()
    page = transport.get(transport.get(entry_url("", study.slug, pid=prolific_id_for("P2"), group="chinese")).location)
    transport.post(page.url, {"step": "consent", "consent": "no"})
    assert counts(study)["no_consent"] == 1

    # Entered without a group: counted as unassigned until the group page is sent.
    transport = ServiceTransport()
    page = transport.get(transport.get(entry_url("", study.slug, pid=prolific_id_for("P3"))).location)
    assert page.spec.step == "group" and "unassigned" in counts(study)["by_group"]
    transport.post(page.url, {"step": "group", "group": "chinese"})
    assert "unassigned" not in counts(study)["by_group"]


def test_it_shows_the_last_page_sent_at_once(study, researcher_client):
    transport, bot, page = arrive(study, "P1", pages=-1)
    results = reverse("study:results", args=[study.slug]) + "?format=json"
    before = researcher_client.get(results).json()
    assert before["participants"]["completed"] == 0 and before["preferences"]["comprehension"]["n"] == 0
    figure = reverse("study:results_figure", args=[study.slug, "preferences", "svg"])
    drawn = b"".join([researcher_client.get(figure).content])

    page = transport.post(page.url, bot.answer(page.spec))
    assert "cc=" in page.location
    after = researcher_client.get(results).json()
    assert after["participants"]["completed"] == 1 and after["preferences"]["comprehension"]["n"] == 4
    assert researcher_client.get(figure).content != drawn


def test_it_shows_a_session_scored_by_the_finish_at_once(study, monkeypatch):
    transport, bot, page = arrive(study, "P1", pages=-1)
    # The last page stored, the score lost with the request: the next visit scores it.
    with monkeypatch.context() as lost:
        lost.setattr("study.services.participants.steps.participant_score", lambda **kwargs: None)
        transport.post(page.url, bot.answer(page.spec))
    assert counts(study)["completed"] == 0
    flow.participant_finish(participant=transport.participant)
    assert counts(study)["completed"] == 1


def test_it_shows_a_release_and_a_return_from_prolific_at_once(study):
    transport, _, _ = arrive(study, "P1", pages=2)
    assert counts(study)["in_progress"] == 1
    assert flow.participant_release(participant=transport.participant)
    assert counts(study)["returned"] == 1 and counts(study)["in_progress"] == 0
    # The same link again, with a place free: the session goes on.
    again = ServiceTransport()
    again.get(entry_url("", study.slug, pid=prolific_id_for("P1"), group="american"))
    assert counts(study)["returned"] == 0 and counts(study)["in_progress"] == 1


def test_it_counts_an_idle_session_as_returned_when_its_time_is_up(study, monkeypatch):
    transport, _, _ = arrive(study, "P1", pages=2)
    seen = timezone.now() - timedelta(minutes=89)
    Participant.objects.filter(pk=transport.participant.pk).update(last_seen_at=seen)
    # A write no service made (the clock moving on is none either): the figures are not retired...
    stamp = stamp_get(scope=study_results_scope(study.pk))
    assert counts(study)["in_progress"] == 1

    real_now = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real_now() + timedelta(minutes=2))
    # ...but the counts end when the session's ninety minutes do.
    assert counts(study)["in_progress"] == 0 and counts(study)["returned"] == 1
    assert stamp_get(scope=study_results_scope(study.pk)) == stamp

    # Marking it returned changes the export's status, not the counts; a view brings it back.
    assert flow.participants_mark_returned(study=study) == 1
    assert stamp_get(scope=study_results_scope(study.pk)) != stamp
    participant = Participant.objects.get(pk=transport.participant.pk)
    assert participant.status == ParticipantStatus.RETURNED


def test_it_counts_an_idle_session_seen_again_as_open_at_once(study):
    transport, _, _ = arrive(study, "P1", pages=2)
    Participant.objects.filter(pk=transport.participant.pk).update(last_seen_at=timezone.now() - timedelta(minutes=120))
    assert counts(study)["returned"] == 1
    participant = participant_current(slug=study.slug, pk=transport.participant.pk)
    flow.participant_touch(participant=participant, step=participant_step(participant))
    assert counts(study)["returned"] == 0 and counts(study)["in_progress"] == 1


def test_it_keeps_the_results_when_a_page_is_only_seen(study, researcher_client):
    transport, _, _ = arrive(study, "P1", pages=2)
    study_results(study=study)
    stamp = stamp_get(scope=study_results_scope(study.pk))
    # Shown again (a refresh, another tab): its views are counted, the results stay as they were.
    for _ in range(3):
        participant = participant_current(slug=study.slug, pk=transport.participant.pk)
        flow.participant_page_show(participant=participant)
    assert stamp_get(scope=study_results_scope(study.pk)) == stamp
    assert cached_reads(study) == 0
    # A page sent again from an old tab stores nothing and changes nothing.
    transport.post(f"/s/{study.slug}/run/", {"step": "consent", "consent": "yes"})
    assert stamp_get(scope=study_results_scope(study.pk)) == stamp
