"""Prolific must reach the app: a loopback, private or link-local public address is warned about on the Prolific
page and by prolific_publish / prolific_hooks, naming the setting to change; one draft per group carries its
group in its name, and drafts are still found by their internal name."""

import html
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from prolific.models import ProlificStudy
from prolific.selectors import prolific_study_bodies, site_unreachable
from prolific.selectors.bodies import internal_name
from prolific.services import prolific_study_create
from tests.prolific.conftest import SITE
from tests.study.factories import make_study, package_dict

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1:8000", "loopback"),
        ("http://127.8.0.1", "loopback"),
        ("http://localhost:8000", "loopback"),
        ("http://app.localhost", "loopback"),
        ("http://[::1]:8000", "loopback"),
        ("http://[::ffff:127.0.0.1]", "loopback"),
        ("http://10.1.2.3", "private network address"),
        ("http://172.16.0.9:8000", "private network address"),
        ("https://192.168.1.20", "private network address"),
        ("http://[fd00::5]", "private network address"),
        ("http://0.0.0.0:8000", "private network address"),
        ("http://169.254.10.1", "link-local"),
        ("http://[fe80::1]:8000", "link-local"),
        ("http://studybox.local:8000", "local network name"),
    ],
)
def test_it_names_an_address_prolific_cannot_reach(url, kind):
    text = site_unreachable(url)
    assert text.startswith(f"Prolific cannot reach {url}: ") and kind in text


@pytest.mark.parametrize("url", [SITE, "https://8.8.8.8", "https://studies.example.org:8443", "http://testserver"])
def test_it_says_nothing_of_a_public_address(url):
    assert site_unreachable(url) == ""


@pytest.fixture
def web_study(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PROLIFIC_SITE_URL = ""
    return make_study(package_dict(slug="prolific-web", reward="£3.00", estimated_minutes=20))


def page(client, study, host: str) -> str:
    answer = client.get(reverse("prolific:study", args=[study.slug]), HTTP_HOST=host)
    assert answer.status_code == 200
    return html.unescape(answer.content.decode())


def warning_of(text: str) -> str | None:
    start = text.find('data-testid="site-unreachable">')
    return text[start : text.index("</p>", start)] if start >= 0 else None


def test_the_page_warns_of_a_loopback_address_and_names_the_setting(web_study, researcher_client):
    text = page(researcher_client, web_study, "127.0.0.1:8000")
    warning = warning_of(text)
    assert warning is not None
    assert "Prolific cannot reach http://127.0.0.1:8000: 127.0.0.1 is a loopback address" in warning
    assert "Set PROLIFIC_SITE_URL to the app's public https:// address" in warning
    # The study URL and the webhook shown are the ones warned about.
    assert '"external_study_url": "http://127.0.0.1:8000/s/prolific-web/?PROLIFIC_PID=' in text
    assert "http://127.0.0.1:8000/prolific/hooks/submissions/" in text


def test_the_page_warns_of_a_private_address(web_study, researcher_client, settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "192.168.1.20"]
    warning = warning_of(page(researcher_client, web_study, "192.168.1.20:8000"))
    assert warning is not None and "192.168.1.20 is a private network address" in warning


def test_the_setting_gives_the_public_address_whatever_the_researcher_opens(web_study, researcher_client, settings):
    settings.PROLIFIC_SITE_URL = SITE + "/"
    text = page(researcher_client, web_study, "127.0.0.1:8000")
    assert warning_of(text) is None
    assert f'"external_study_url": "{SITE}/s/prolific-web/?PROLIFIC_PID=' in text
    assert f"{SITE}/prolific/hooks/submissions/" in text and "http://127.0.0.1:8000/s/" not in text


def test_a_private_setting_is_named_as_the_one_to_change(web_study, researcher_client, settings):
    settings.PROLIFIC_SITE_URL = "http://10.0.0.7:8000"
    warning = warning_of(page(researcher_client, web_study, "testserver"))
    assert warning is not None and "10.0.0.7 is a private network address" in warning
    assert "Change PROLIFIC_SITE_URL" in warning


def test_the_page_reached_at_a_public_address_has_no_warning(web_study, researcher_client):
    assert warning_of(page(researcher_client, web_study, "testserver")) is None


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_prolific_publish_prints_the_same_warning(study_for_prolific, settings, monkeypatch):
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV, raising=False)
    out, err = run(
        "prolific_publish", "prolific-study", "--group", "each", "--dry-run", "--site-url", "http://127.0.0.1:8000"
    )
    assert err.startswith("warning: " + site_unreachable("http://127.0.0.1:8000"))
    assert "--site-url https://" in err and "PROLIFIC_SITE_URL" in err
    # stdout stays the bodies a script reads.
    bodies = [json.loads(part) for part in out.split("POST studies/\n")[1:]]
    assert bodies[0]["external_study_url"].startswith("http://127.0.0.1:8000/s/prolific-study/")

    settings.PROLIFIC_SITE_URL = "http://localhost:8000"
    assert "localhost is a loopback address" in run("prolific_publish", "prolific-study", "--dry-run")[1]
    settings.PROLIFIC_SITE_URL = SITE
    assert run("prolific_publish", "prolific-study", "--dry-run")[1] == ""


def test_prolific_hooks_warns_of_the_webhook_address(study_for_prolific, fake_prolific):
    out, err = run(
        "prolific_hooks", "prolific-study", "--register", "--url", "http://127.0.0.1:8000/prolific/hooks/submissions/"
    )
    assert "warning: Prolific cannot reach http://127.0.0.1:8000/prolific/hooks/submissions/" in err
    assert "subscribed" in out


# --- The name of each group's draft ----------------------------------------------------------


def test_each_groups_draft_carries_its_group_in_its_name(study_for_prolific):
    bodies = prolific_study_bodies(study=study_for_prolific, group="each")
    assert [b["name"] for b in bodies] == [
        "Artwork descriptions – American listeners",
        "Artwork descriptions – Chinese listeners",
    ]
    (one,) = prolific_study_bodies(study=study_for_prolific, group="chinese")
    assert one["name"] == "Artwork descriptions – Chinese listeners"
    (everyone,) = prolific_study_bodies(study=study_for_prolific, group=None)
    assert everyone["name"] == "Artwork descriptions"


def test_a_draft_made_under_the_old_name_is_still_found(fake_prolific, study_for_prolific):
    # Created by an earlier version (every group's draft named after the study alone) whose answer was lost:
    # the row has no Prolific id, and Prolific holds the study under its internal name.
    ProlificStudy.objects.create(study=study_for_prolific, group="chinese", attempt_at=None)
    existing = fake_prolific.add_study(
        name="Artwork descriptions", internal_name=internal_name(study=study_for_prolific, group="chinese")
    )
    rows = prolific_study_create(study=study_for_prolific, group="each")
    assert {row.group: row.prolific_id for row in rows}["chinese"] == existing
    (sent,) = [call["body"] for call in fake_prolific.calls("POST", "/studies/")]
    assert sent["name"] == "Artwork descriptions – American listeners"
    assert len(fake_prolific.studies) == 2
    again = prolific_study_create(study=study_for_prolific, group="each")
    assert [row.pk for row in again] == [row.pk for row in rows] and len(fake_prolific.studies) == 2
