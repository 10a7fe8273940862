"""Issue 23, item 2: in development the finish lands on a local page that shows Prolific's code,
since Prolific is not there; elsewhere it goes to Prolific, and the page does not exist."""

import random

import pytest
from django.test import Client
from django.urls import reverse

from study.models import StudyStatus
from study.services.participants import prolific_id_for
from study.services.simulation import DjangoClientTransport, SyntheticParticipant, answer_key, entry_url, parse_form
from tests.site.test_settings import STRONG_KEY, run_manage

from .factories import make_study, package_dict

pytestmark = pytest.mark.django_db
PROLIFIC = "https://app.prolific.com/submissions/complete?cc="


def done_url(study, code: str) -> str:
    return f"{reverse('study:done', args=[study.slug])}?cc={code}"


def take(study, label, *, client, group="american", fail_qc=False):
    bot = SyntheticParticipant(
        DjangoClientTransport(client), key=answer_key(study=study), rng=random.Random(1), fail_qc=fail_qc
    )
    pid = prolific_id_for(label)
    return bot.run(entry_url("", study.slug, pid=pid, group=group), pid)


@pytest.fixture
def local(settings):
    settings.PROLIFIC_COMPLETE_LOCAL = True


@pytest.mark.usefixtures("local")
def test_it_ends_on_the_local_page_that_shows_the_code_prolific_would_get():
    study = make_study()
    client = Client()
    outcome = take(study, "done-1", client=client)
    assert outcome.errors == []
    assert outcome.final_url == done_url(study, "C0MPL3TE")
    page = client.get(outcome.final_url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "data-local-done" in html
    assert '<strong data-testid="completion-code">C0MPL3TE</strong>' in html
    assert f'<code data-testid="prolific-url">{PROLIFIC}C0MPL3TE</code>' in html
    assert "Completed" in html


@pytest.mark.usefixtures("local")
def test_it_names_the_screen_out_and_the_declined_consent_on_the_local_page():
    study = make_study()
    client = Client()
    outcome = take(study, "done-2", client=client, fail_qc=True)
    assert outcome.final_url == done_url(study, "SCR33N")
    assert "Excluded (quality control)" in client.get(outcome.final_url).content.decode()

    other = Client()
    other.get(entry_url("", study.slug, pid=prolific_id_for("done-3"), group="american"))
    response = other.post(reverse("study:run", args=[study.slug]), {"step": "consent", "consent": "no"})
    assert response.status_code == 303 and response["Location"] == done_url(study, "N0C0NSENT")
    assert "Declined consent" in other.get(response["Location"]).content.decode()


@pytest.mark.usefixtures("local")
def test_it_shows_the_local_page_in_the_participants_language():
    study = make_study()
    client = Client()
    outcome = take(study, "done-4", client=client, group="chinese")
    page = client.get(outcome.final_url)
    assert page["Content-Language"] == "zh-hans"
    assert 'lang="zh-Hans"' in page.content.decode()


@pytest.mark.usefixtures("local")
def test_it_knows_only_the_studys_own_codes(client):
    study = make_study()
    assert client.get(done_url(study, "NOTACODE")).status_code == 404
    assert client.get(reverse("study:done", args=[study.slug])).status_code == 404
    assert client.get(f"{reverse('study:done', args=['no-such-study'])}?cc=C0MPL3TE").status_code == 404


@pytest.mark.usefixtures("local")
def test_it_still_shows_prolifics_url_at_the_end_of_a_preview(client, researcher):
    study = make_study(package_dict(quota_per_group=1), status=StudyStatus.DRAFT)
    client.force_login(researcher)
    client.post(reverse("study:preview", args=[study.slug]), {"group": "american"})
    run = reverse("study:run", args=[study.slug])
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(0))
    for _ in range(200):
        page = client.get(run)
        spec = parse_form(page.content.decode())
        if spec is None:
            break
        client.post(run, bot.answer(spec))
    assert b"data-preview-done" in page.content
    assert f"{PROLIFIC}C0MPL3TE".encode() in page.content


def test_it_sends_participants_to_prolific_and_has_no_local_page_when_off(settings):
    settings.PROLIFIC_COMPLETE_LOCAL = False
    study = make_study()
    client = Client()
    outcome = take(study, "done-5", client=client)
    assert outcome.final_url == f"{PROLIFIC}C0MPL3TE"
    assert client.get(done_url(study, "C0MPL3TE")).status_code == 404


def test_it_is_on_in_development_and_refused_in_production(tmp_path):
    show = "from django.conf import settings; print(settings.PROLIFIC_COMPLETE_LOCAL)"
    development = run_manage("shell", "-c", show, DJANGO_ENV="development", VIVID_VAR_DIR=str(tmp_path))
    assert development.returncode == 0, development.stderr
    assert development.stdout.splitlines()[-1] == "True"
    production = run_manage(
        "check",
        DJANGO_ENV="production",
        SECRET_KEY=STRONG_KEY,
        ALLOWED_HOSTS="vivid.example.org",
        PROLIFIC_COMPLETE_LOCAL="1",
        VIVID_VAR_DIR=str(tmp_path),
    )
    assert production.returncode != 0
    assert "PROLIFIC_COMPLETE_LOCAL=1 is for development" in production.stderr
