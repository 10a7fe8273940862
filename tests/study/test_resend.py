"""A page sent again, as study.js does when the connection dropped after the server had stored it
but before its answer arrived: stored once, and the participant is shown where they are."""

import random

import pytest
from django.test import Client
from django.urls import reverse

from study.models import Answer, Assignment, PageVisit, Participant, ParticipantStatus, Preference
from study.services.participants import prolific_id_for
from study.services.simulation import SyntheticParticipant, answer_key, entry_url, parse_form

from .factories import make_study

pytestmark = pytest.mark.django_db

COMPLETE = "https://app.prolific.com/submissions/complete?cc=C0MPL3TE"


def _enter(study, pid):
    client = Client()
    response = client.get(entry_url("", study.slug, pid=prolific_id_for(pid), group="american"))
    assert response.status_code == 302
    return client


def _stored(participant):
    """Everything the session holds, to compare before and after a second send."""
    return (
        sorted(
            Answer.objects.filter(assignment__participant=participant).values_list(
                "assignment_id", "question_id", "phase", "choice", "confidence"
            )
        ),
        sorted(
            Preference.objects.filter(assignment__participant=participant).values_list(
                "assignment_id", "criterion", "side"
            )
        ),
        sorted(Assignment.objects.filter(participant=participant).values_list("pk", "symbols_pre", "symbols_post")),
    )


def test_it_stores_every_page_once_when_each_arrives_twice_and_shows_the_next_page(settings):
    study = make_study()
    client = _enter(study, "RESEND1")
    run = reverse("study:run", args=[study.slug])
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(3))
    participant = Participant.objects.get(prolific_pid=prolific_id_for("RESEND1"))
    page = client.get(run)
    sent: list[str] = []
    for _ in range(200):
        spec = parse_form(page.content.decode())
        if spec is None:
            break
        data = bot.answer(spec)
        first = client.post(run, data)
        participant.refresh_from_db()
        after_first = (participant.step_index, participant.status, _stored(participant))
        # The same body again: the retry of a send whose answer was lost on the way back.
        second = client.post(run, data)
        participant.refresh_from_db()
        assert (participant.step_index, participant.status, _stored(participant)) == after_first, spec.step
        # Not an error page: the run page again, which shows the page the participant is on.
        assert second.status_code == 303, (spec.step, second.status_code)
        assert second["Location"] == run
        shown = client.get(run)
        if first.status_code == 303:  # the last page: Prolific's completion URL, whichever send arrives
            assert first["Location"] == COMPLETE
            assert shown.status_code == 303 and shown["Location"] == COMPLETE
            sent.append(spec.step)
            break
        assert first.status_code == 200, (spec.step, first.status_code)
        assert parse_form(shown.content.decode()).step == parse_form(first.content.decode()).step
        sent.append(spec.step)
        page = shown
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.COMPLETED
    assert sent == ["consent", *participant.plan]
    answers = list(
        Answer.objects.filter(assignment__participant=participant).values_list("assignment_id", "question_id", "phase")
    )
    assert len(answers) == len(set(answers)) > 0
    assert PageVisit.objects.filter(participant=participant, submitted_at__isnull=False).count() == len(sent)


def test_it_keeps_the_first_answers_when_a_resent_page_carries_other_ones():
    study = make_study()
    client = _enter(study, "RESEND2")
    run = reverse("study:run", args=[study.slug])
    client.post(run, {"step": "consent", "consent": "yes"})
    participant = Participant.objects.get(prolific_pid=prolific_id_for("RESEND2"))
    client.post(run, {"step": participant.plan[0]})  # the instructions
    participant.refresh_from_db()
    symbols_step = participant.plan[participant.step_index]
    assert symbols_step.endswith(":symbols")
    assignment = Assignment.objects.get(participant=participant, order=int(symbols_step.split(":")[0]))
    element = parse_form(client.get(run).content.decode()).checkboxes["symbols"][0]

    assert client.post(run, {"step": symbols_step, "symbols": [element]}).status_code == 200
    # A stale copy of the page (a second tab, an old retry) with a different answer.
    again = client.post(run, {"step": symbols_step, "none": "1"})

    assert again.status_code == 303
    assignment.refresh_from_db()
    assert assignment.symbols_pre == [element]
    participant.refresh_from_db()
    assert participant.plan[participant.step_index] == symbols_step.replace(":symbols", ":qa")
