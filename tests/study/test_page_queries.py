"""A page's answers are checked against the assignment read with the session, never another one."""

import random

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from study.models import Assignment, Participant
from study.services.participants import prolific_id_for
from study.services.simulation import SyntheticParticipant, answer_key, entry_url, parse_form

from .factories import make_study

pytestmark = pytest.mark.django_db


def on_first_artwork(study):
    """A participant past the consent and the instructions, on the first artwork's symbols page."""
    client = Client()
    pid = prolific_id_for("PAGEQ")
    assert client.get(entry_url("", study.slug, pid=pid, group="american")).status_code == 302
    run = reverse("study:run", args=[study.slug])
    assert client.post(run, {"step": "consent", "consent": "yes"}).status_code == 200
    page = client.post(run, {"step": "instructions"})
    return client, run, page.content.decode()


def test_it_reads_the_sent_pages_assignment_with_the_session():
    study = make_study()
    client, run, html = on_first_artwork(study)
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(0))
    spec = parse_form(html)
    assert spec.step == "1:symbols"
    sent = bot.answer(spec)
    with CaptureQueriesContext(connection) as queries:
        page = client.post(run, sent)
    assert page.status_code == 200 and parse_form(page.content.decode()).step == "1:qa"
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    # The session, its study and the page's assignment in one statement.
    assert len(reads) == 1 and "study_assignment" in reads[0], reads
    stored = Assignment.objects.get(participant=Participant.objects.get(), order=1)
    assert sorted(stored.symbols_pre) == sorted(sent.get("symbols", []))


@pytest.mark.parametrize("step", ["2:symbols", "99:compare", "0:symbols", "1:nothing", "x:symbols", "12345:qa"])
def test_it_stores_nothing_for_a_step_that_is_not_the_current_page(step):
    study = make_study()
    client, run, html = on_first_artwork(study)
    page = client.post(run, {"step": step, "none": "1"})
    # Another page's step is stale: the current page again, nothing stored.
    assert page.status_code in (200, 303)
    assert not Assignment.objects.filter(symbols_pre__isnull=False).exists()
    assert Participant.objects.get().step_index == 1
    assert b'value="1:symbols"' in client.get(run).content
