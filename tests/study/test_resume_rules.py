"""A participant session is resumed only with its PID and the same Prolific SESSION_ID, on every path."""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.db import IntegrityError, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from study.models import Participant, ParticipantStatus, Study, StudyStatus
from study.services import participants as flow
from study.services.participants import prolific_id_for
from study.services.simulation import entry_url

from .factories import make_study, package_dict

pytestmark = pytest.mark.django_db

# Prolific-shaped ids (the entry link refuses any other), named by the labels the tests read.
PIDA, PIDB, PIDR, PIDNEW, PIDSYN = (prolific_id_for(label) for label in ("PIDA", "PIDB", "PIDR", "PIDNEW", "PIDSYN"))
S1, S2, S9, SB = (prolific_id_for(label) for label in ("S1", "S2", "S9", "SB"))
STUDY_ID = prolific_id_for("prolific-study")


@pytest.fixture
def study():
    return make_study()


def run_url(study):
    return reverse("study:run", args=[study.slug])


def link(study, pid, session=None, group="american"):
    params = {"PROLIFIC_PID": pid, "STUDY_ID": STUDY_ID, "group": group}
    if session is not None:
        params["SESSION_ID"] = session
    return f"/s/{study.slug}/?{urlencode(params)}"


def started(study, pid=PIDA, session=S1):
    """A participant who entered, consented and is on the instructions page."""
    client = Client()
    assert client.get(link(study, pid, session)).status_code == 302
    assert client.post(run_url(study), {"step": "consent", "consent": "yes"}).status_code == 200
    return client


def test_it_resumes_with_the_same_pid_and_session_id(study):
    started(study)
    other = Client()
    assert other.get(link(study, PIDA, S1)).status_code == 302
    assert b'name="step" value="instructions"' in other.get(run_url(study)).content


def test_it_refuses_a_visit_with_the_pid_and_no_session_id(study):
    started(study)
    intruder = Client()
    response = intruder.get(link(study, PIDA))
    assert response.status_code == 400
    assert b"Please open the study from Prolific again" in response.content
    assert intruder.get(run_url(study)).status_code == 400


def test_it_refuses_a_visit_with_the_pid_and_an_empty_session_id(study):
    started(study)
    intruder = Client()
    assert intruder.get(link(study, PIDA, "")).status_code == 400
    assert intruder.get(run_url(study)).status_code == 400


def test_it_refuses_a_visit_with_a_different_session_id(study):
    started(study)
    intruder = Client()
    response = intruder.get(link(study, PIDA, S2))
    assert response.status_code == 403
    assert b"another Prolific session" in response.content
    assert intruder.get(run_url(study)).status_code == 400


def test_it_starts_no_session_without_a_session_id(study):
    response = Client().get(link(study, PIDNEW))
    assert response.status_code == 400
    assert not Participant.objects.exists()


def test_it_refuses_a_returned_session_coming_back_from_another_prolific_session(study):
    started(study)
    Participant.objects.update(last_seen_at=timezone.now() - timedelta(days=1))
    flow.participants_mark_returned(study=study)
    intruder = Client()
    assert intruder.get(link(study, PIDA, S9)).status_code == 403
    assert intruder.get(run_url(study)).status_code == 400
    participant = Participant.objects.get()
    assert participant.status == ParticipantStatus.RETURNED and participant.prolific_session_id == S1
    # The participant with the right link may still come back.
    assert Client().get(link(study, PIDA, S1)).status_code == 302


def test_it_drops_another_participants_session_from_the_browser_when_a_link_is_refused(study):
    shared = started(study, pid=PIDA, session=S1)
    # Someone else on the same computer opens a link of their own that is refused.
    assert shared.get(link(study, PIDB, SB, group="martian")).status_code == 400
    assert shared.get(run_url(study)).status_code == 400
    assert Participant.objects.get().step_index == 0


def test_it_keeps_the_first_tab_going_when_the_pid_opens_another_session_id(study):
    browser = started(study, pid=PIDA, session=S1)
    # A second link of the same PID with another SESSION_ID: refused, and nothing else changes.
    refused = browser.get(link(study, PIDA, S2))
    assert refused.status_code == 403 and b"another Prolific session" in refused.content
    assert f"vivid_participant_{study.slug}" not in refused.cookies
    # The first tab sends its page and is taken on.
    response = browser.post(run_url(study), {"step": "instructions"})
    assert response.status_code == 200 and b'name="step" value="instructions"' not in response.content
    participant = Participant.objects.get()
    assert participant.step_index == 1 and participant.prolific_session_id == S1
    assert b'name="step"' in browser.get(run_url(study)).content
    # The refused link itself never opens a session, in a browser that has none.
    assert Client().get(link(study, PIDA, S2)).status_code == 403


def test_it_keeps_the_cookie_when_the_pids_own_session_cannot_resume_yet(study):
    browser = started(study, pid=PIDA, session=S1)
    Participant.objects.update(status=ParticipantStatus.RETURNED)
    Study.objects.filter(pk=study.pk).update(status=StudyStatus.PAUSED)
    # Its own link while the study is paused: refused, and the browser keeps the session for later.
    refused = browser.get(link(study, PIDA, S1))
    assert refused.status_code == 400
    assert f"vivid_participant_{study.slug}" not in refused.cookies


def test_it_replaces_the_cookie_of_another_participant_with_the_new_entry(study):
    shared = started(study, pid=PIDA, session=S1)
    assert shared.get(link(study, PIDB, SB, group="chinese")).status_code == 302
    page = shared.get(run_url(study))
    # B's own first page (consent), not A's instructions.
    assert b'value="consent"' in page.content and b'value="instructions"' not in page.content
    assert Participant.objects.get(prolific_pid=PIDA).step_index == 0


def test_it_checks_the_session_id_when_two_entries_race(study, monkeypatch):
    Client().get(link(study, PIDR, S1))
    # The other request created the session between this one's lookup and its insert.
    real_filter = Participant.objects.filter

    class Missed:
        def first(self):
            return None

    def filter_missing_once(*args, **kwargs):
        if kwargs.get("prolific_pid") == PIDR and not getattr(filter_missing_once, "done", False):
            filter_missing_once.done = True
            return Missed()
        return real_filter(*args, **kwargs)

    monkeypatch.setattr(Participant.objects, "filter", filter_missing_once)
    monkeypatch.setattr(Participant.objects, "create", lambda **kwargs: (_ for _ in ()).throw(IntegrityError()))
    with pytest.raises(flow.EntryError) as refused:
        flow.participant_enter(study=study, pid=PIDR, prolific_study_id=STUDY_ID, session_id=S2, group="american")
    assert refused.value.reason == "other_session"
    same = flow.participant_enter(study=study, pid=PIDR, prolific_study_id=STUDY_ID, session_id=S1, group="american")
    assert same.prolific_pid == PIDR


def test_it_keeps_the_synthetic_entry_links_working(study):
    client = Client()
    assert client.get(entry_url("", study.slug, pid=PIDSYN, group="american")).status_code == 302
    assert client.get(entry_url("", study.slug, pid=PIDSYN, group="american")).status_code == 302


def test_it_finds_the_participant_from_a_signed_cookie_without_a_session_row(study):
    client = started(study)
    cookie = client.cookies[f"vivid_participant_{study.slug}"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == f"/s/{study.slug}/"
    assert "sessionid" not in client.cookies
    with CaptureQueriesContext(connection) as queries:
        assert b'value="instructions"' in client.get(run_url(study)).content
    tables = " ".join(query["sql"] for query in queries.captured_queries)
    assert "django_session" not in tables and "auth_user" not in tables, tables


def test_it_refuses_a_forged_or_another_studys_participant_cookie(study):
    client = started(study)
    participant = Participant.objects.get()
    forged = Client()
    forged.cookies[f"vivid_participant_{study.slug}"] = f"{participant.pk}:forged"
    assert forged.get(run_url(study)).status_code == 400
    other = make_study(package_dict(slug="other-study"))
    carried = Client()
    carried.cookies[f"vivid_participant_{other.slug}"] = client.cookies[f"vivid_participant_{study.slug}"].value
    assert carried.get(run_url(other)).status_code == 400
