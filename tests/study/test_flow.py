import random

import pytest
from django.test import Client
from django.urls import reverse

from study.models import Answer, Assignment, PageVisit, Participant, ParticipantStatus, Preference
from study.services.participants import prolific_id_for
from study.services.simulation import DjangoClientTransport, SyntheticParticipant, answer_key, entry_url, parse_form

from .factories import make_study

pytestmark = pytest.mark.django_db


def take(study, pid, *, group="american", fail_qc=False, client=None, seed=1):
    bot = SyntheticParticipant(
        DjangoClientTransport(client), key=answer_key(study=study), rng=random.Random(seed), fail_qc=fail_qc
    )
    return bot.run(entry_url("", study.slug, pid=prolific_id_for(pid), group=group), prolific_id_for(pid))


def test_it_takes_a_participant_through_the_whole_session_to_the_completion_code():
    study = make_study()
    outcome = take(study, "PID0001")
    assert outcome.errors == []
    assert outcome.final_url == "https://app.prolific.com/submissions/complete?cc=C0MPL3TE"
    participant = Participant.objects.get(prolific_pid=prolific_id_for("PID0001"))
    assert participant.status == ParticipantStatus.COMPLETED
    assert participant.qc_total == 4 and participant.qc_correct == 4
    assignments = Assignment.objects.filter(participant=participant)
    assert assignments.count() == 12
    assert assignments.filter(is_qc=True).count() == 2
    regular = assignments.filter(is_qc=False)
    # Both answer phases for every question, three preferences per described artwork.
    assert Answer.objects.filter(assignment__participant=participant).count() == 12 * 2 * 2 - 2 * 2
    assert Preference.objects.filter(assignment__participant=participant).count() == 10 * 3
    assert regular.filter(shown__speaker="base").count() == 5
    assert (
        PageVisit.objects.filter(participant=participant, submitted_at__isnull=False).count()
        == len(participant.plan) + 1
    )


def test_it_screens_out_a_participant_who_fails_quality_control():
    study = make_study()
    outcome = take(study, "PID0002", fail_qc=True)
    assert outcome.final_url.endswith("cc=SCR33N")
    assert Participant.objects.get(prolific_pid=prolific_id_for("PID0002")).status == ParticipantStatus.EXCLUDED_QC


def test_it_never_shows_the_completion_code_in_a_page_before_the_end():
    study = make_study()
    client = Client()
    client.get(entry_url("", study.slug, pid=prolific_id_for("PID0003"), group="chinese"))
    page = client.get(reverse("study:run", args=[study.slug]))
    assert b"C0MPL3TE" not in page.content
    assert 'lang="zh-Hans"' in page.content.decode()
    spec = parse_form(page.content.decode())
    assert spec.step == "consent"


def test_it_exports_the_time_on_the_page_of_every_answer():
    from study.selectors.results import study_export_rows

    study = make_study()
    take(study, "PID0004")
    rows = study_export_rows(study=study)
    assert rows and all(isinstance(row["page_seconds"], float) and row["page_seconds"] >= 0 for row in rows)
    measures = {row["measure"] for row in rows}
    assert measures == {"symbols_pre", "symbols_post", "qa", "preference"}
