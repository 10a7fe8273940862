"""Synthetic participants without HTTP or templates: the same forms the pages draw, the same
services, the same rows; and several processes at once for a large study."""

import random
from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse

from study.models import Answer, Assignment, PageVisit, Participant, ParticipantStatus, Preference
from study.selectors.participants import participant_current
from study.services.participants import prolific_id_for
from study.services.simulation import (
    DjangoClientTransport,
    ServiceTransport,
    SyntheticParticipant,
    answer_key,
    entry_url,
    form_spec,
    parse_form,
    synthetic_plan,
    synthetic_responses_generate,
)
from study.steps import participant_step

from .factories import make_study, package_dict

PAGES, SERVICES = prolific_id_for("PAGES"), prolific_id_for("SERVICES")

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("group", ["", "american", "chinese"])
def test_it_builds_each_page_form_as_the_page_draws_it(group):
    study = make_study()
    client = Client()
    pid = prolific_id_for(f"FORM-{group or 'none'}")
    client.get(entry_url("", study.slug, pid=pid, group=group))
    run = reverse("study:run", args=[study.slug])
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(3))
    html = client.get(run).content.decode()
    kinds = set()
    while (drawn := parse_form(html)) is not None:
        pk = Participant.objects.get(prolific_pid=pid).pk
        participant = participant_current(slug=study.slug, pk=pk)
        step = participant_step(participant)
        built = form_spec(participant=participant, step=step)
        drawn.csrf = ""
        assert built == drawn, step.key
        kinds.add(step.kind)
        html = client.post(run, bot.answer(drawn)).content.decode()
    assert kinds >= {"consent", "instructions", "symbols", "qa", "post_symbols", "post_qa", "compare"}
    assert ("group" in kinds) == (group == "")


def rows_of(participant: Participant) -> dict:
    visits = PageVisit.objects.filter(participant=participant)
    return {
        "status": participant.status,
        "assignments": Assignment.objects.filter(participant=participant).count(),
        "answers": Answer.objects.filter(assignment__participant=participant).count(),
        "knew_asked": Answer.objects.filter(assignment__participant=participant, knew_before__isnull=False).count(),
        "preferences": Preference.objects.filter(assignment__participant=participant).count(),
        "pages": Counter(visit.step.split(":")[-1] for visit in visits),
        "submitted": visits.filter(submitted_at__isnull=False).count(),
        "views": sum(visit.views for visit in visits),
    }


def test_it_writes_through_the_services_what_the_pages_write():
    study = make_study()
    key = answer_key(study=study)
    for pid, transport in ((PAGES, DjangoClientTransport()), (SERVICES, ServiceTransport())):
        outcome = SyntheticParticipant(transport, key=key, rng=random.Random(8)).run(
            entry_url("", study.slug, pid=pid, group="chinese"), pid
        )
        assert outcome.errors == [] and outcome.final_url.endswith("cc=C0MPL3TE")
        assert len(outcome.timings) == 2 + len(Participant.objects.get(prolific_pid=pid).plan) + 1
    pages, services = (rows_of(Participant.objects.get(prolific_pid=pid)) for pid in (PAGES, SERVICES))
    assert pages == services and pages["status"] == ParticipantStatus.COMPLETED


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_sends_participants_from_several_processes():
    study = make_study(package_dict(slug="crowd", n_american=2, n_chinese=2, n_qc=1))
    outcomes = synthetic_responses_generate(study=study, n=6, seed=4, qc_fail_rate=0.5, workers=2)
    assert [outcome.errors for outcome in outcomes] == [[]] * 6
    # In the order asked for, whichever process took each; the same participants as one process makes.
    pids = [outcome.pid for outcome in outcomes]
    assert (
        pids == [outcome.pid for outcome in synthetic_plan(groups=study.groups, n=6, seed=4, qc_fail_rate=0.5)]
        and len(set(pids)) == 6
    )
    statuses = Counter(Participant.objects.filter(study=study).values_list("status", flat=True))
    assert statuses == {ParticipantStatus.COMPLETED: 3, ParticipantStatus.EXCLUDED_QC: 3}


def test_it_posts_a_page_url_encoded_as_the_pages_script_does():
    """study.js sends ``URLSearchParams(new FormData(form))``: the in-process transport (the survey
    benchmark's profile) must make the server parse the same body, not the test client's multipart."""
    study = make_study()
    client = Client()
    transport = DjangoClientTransport(client)
    transport.get(entry_url("", study.slug, pid=prolific_id_for("ENCODED"), group=study.groups[0]))
    run = reverse("study:run", args=[study.slug])
    step = parse_form(transport.get(run).html).step
    seen = []
    original = client.post

    def post(path, data=None, content_type=None, **extra):
        seen.append((content_type, data))
        return original(path, data, **({"content_type": content_type} if content_type else {}), **extra)

    client.post = post
    page = transport.post(run, {"step": step, "consent": "yes", "note": ["a b", "c&d"]})

    assert seen == [("application/x-www-form-urlencoded", f"step={step}&consent=yes&note=a+b&note=c%26d")]
    assert page.status == 200
    assert Participant.objects.get(prolific_pid=prolific_id_for("ENCODED")).consented_at is not None
