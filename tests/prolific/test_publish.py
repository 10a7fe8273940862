"""Creating and publishing the Prolific study: the exact bodies, never two Prolific studies, a guarded publish."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from prolific.client import ProlificApiError, ProlificError, ProlificNotConfigured
from prolific.models import CompletionAction, ProlificStudy, ProlificStudyStatus
from prolific.selectors import prolific_study_bodies, reward_minor_units
from prolific.services import prolific_study_create, prolific_study_publish
from study.models import StudyStatus
from tests.concurrency import at_the_same_instant
from tests.prolific.conftest import SITE, light_study

pytestmark = pytest.mark.django_db

FILTERS = [{"filter_id": "current-country-of-residence", "selected_values": ["1"]}]


def test_it_builds_one_body_per_group_with_the_link_codes_quota_minutes_and_reward(study_for_prolific):
    bodies = prolific_study_bodies(
        study=study_for_prolific,
        group="each",
        completion_action=CompletionAction.AUTOMATICALLY_APPROVE,
        filters=FILTERS,
    )
    assert [b["internal_name"] for b in bodies] == [
        f"vivid:prolific-study:american:{study_for_prolific.pk}",
        f"vivid:prolific-study:chinese:{study_for_prolific.pk}",
    ]
    body = bodies[0]
    assert body["external_study_url"] == (
        f"{SITE}/s/prolific-study/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        "&SESSION_ID={{%SESSION_ID%}}&group=american"
    )
    assert body["prolific_id_option"] == "url_parameters"
    assert body["total_available_places"] == 3
    assert body["estimated_completion_time"] == 20
    assert body["reward"] == 300
    assert body["filters"] == FILTERS
    codes = {code["code_type"]: code for code in body["completion_codes"]}
    assert codes["COMPLETED"] == {
        "code": "C0MPLETE",
        "code_type": "COMPLETED",
        "actions": [{"action": "AUTOMATICALLY_APPROVE"}],
    }
    assert codes["FIXED_SCREENOUT"]["code"] == "SCREEN0UT"
    assert codes["FIXED_SCREENOUT"]["actions"] == [
        {"action": "FIXED_SCREEN_OUT_PAYMENT", "fixed_screen_out_reward": 150, "slots": 3}
    ]
    assert codes["NO_CONSENT"]["code"] == "N0CONSENT"


def test_it_builds_one_body_for_all_groups_without_a_group_parameter(study_for_prolific):
    (body,) = prolific_study_bodies(study=study_for_prolific, group=None)
    assert "group=" not in body["external_study_url"]
    assert body["total_available_places"] == 6
    assert body["completion_codes"][0]["actions"] == [{"action": "MANUALLY_REVIEW"}]


@pytest.mark.parametrize(
    ("reward", "cents"), [("£3.00 (demo)", 300), ("$2.5", 250), ("1,75 €", 175), (4, 400), ("3.999", 399)]
)
def test_it_reads_the_packages_reward_in_minor_units(reward, cents):
    assert reward_minor_units(reward) == cents


def test_it_names_what_is_missing_from_the_package(study_for_prolific):
    study_for_prolific.package = {"estimated_minutes": 20, "reward": "a coffee"}
    with pytest.raises(ProlificError, match="reward"):
        prolific_study_bodies(study=study_for_prolific, group=None)
    study_for_prolific.package = {"reward": "£3"}
    with pytest.raises(ProlificError, match="estimated_minutes"):
        prolific_study_bodies(study=study_for_prolific, group=None)
    with pytest.raises(ProlificError, match="Unknown group"):
        prolific_study_bodies(study=light_study("other"), group="martian", site=SITE)
    with pytest.raises(ProlificError, match="JSON list"):
        prolific_study_bodies(study=study_for_prolific, group=None, filters={"age": 1})


def test_it_needs_the_apps_public_address(settings, db):
    settings.PROLIFIC_SITE_URL = ""
    with pytest.raises(ProlificError, match="PROLIFIC_SITE_URL"):
        prolific_study_bodies(study=light_study(), group=None)
    (body,) = prolific_study_bodies(study=light_study("x2"), group=None, site="http://localhost:8000/")
    assert body["external_study_url"].startswith("http://localhost:8000/s/x2/?")


def test_it_creates_a_draft_and_stores_its_id(fake_prolific, study_for_prolific, researcher):
    (row,) = prolific_study_create(study=study_for_prolific, group="american", filters=FILTERS, user=researcher)
    assert row.prolific_id in fake_prolific.studies
    assert row.status == ProlificStudyStatus.UNPUBLISHED
    assert row.created_by == researcher
    sent = fake_prolific.calls("POST", "/studies/")[0]["body"]
    assert sent == row.request_body
    assert fake_prolific.studies[row.prolific_id]["filters"] == FILTERS


def test_it_never_creates_a_second_prolific_study(fake_prolific, study_for_prolific):
    first = prolific_study_create(study=study_for_prolific, group="each")
    again = prolific_study_create(study=study_for_prolific, group="each")
    assert [r.pk for r in first] == [r.pk for r in again]
    assert len(fake_prolific.calls("POST", "/studies/")) == 2
    assert len(fake_prolific.studies) == 2


def test_it_forgets_a_create_prolific_refused(fake_prolific, study_for_prolific):
    study_for_prolific.package = {**study_for_prolific.package, "reward": "0.001"}
    with pytest.raises(ProlificError):
        prolific_study_create(study=study_for_prolific, group=None)
    assert not ProlificStudy.objects.exists()
    fake_prolific.fail(status=400, path="/studies/")
    study_for_prolific.package = {**study_for_prolific.package, "reward": "£3"}
    with pytest.raises(ProlificApiError):
        prolific_study_create(study=study_for_prolific, group=None)
    assert not ProlificStudy.objects.exists()
    (row,) = prolific_study_create(study=study_for_prolific, group=None)
    assert row.prolific_id


def test_it_adopts_the_study_a_lost_answer_created(fake_prolific, study_for_prolific):
    # The create reached Prolific but its answer was lost (a 502 after the fact): the row stays.
    fake_prolific.fail(status=502, path="/studies/")
    with pytest.raises(ProlificApiError):
        prolific_study_create(study=study_for_prolific, group=None)
    row = ProlificStudy.objects.get()
    assert row.prolific_id == "" and row.attempt_at is None and "502" in row.last_error
    # Meanwhile Prolific holds the study after all (the fake did not create it: do it as Prolific would have).
    (body,) = prolific_study_bodies(study=study_for_prolific, group=None)
    existing = fake_prolific.add_study(internal_name=body["internal_name"])
    (again,) = prolific_study_create(study=study_for_prolific, group=None)
    assert again.pk == row.pk and again.prolific_id == existing
    assert len(fake_prolific.calls("POST", "/studies/")) == 1  # only the lost one


def test_it_leaves_a_create_under_way_to_its_sender(fake_prolific, study_for_prolific):
    ProlificStudy.objects.create(study=study_for_prolific, group="", attempt_at=timezone.now())
    (row,) = prolific_study_create(study=study_for_prolific, group=None)
    assert row.prolific_id == "" and fake_prolific.calls("POST") == []
    ProlificStudy.objects.update(attempt_at=timezone.now() - timedelta(minutes=10))
    (row,) = prolific_study_create(study=study_for_prolific, group=None)
    assert row.prolific_id and len(fake_prolific.calls("POST", "/studies/")) == 1


def test_it_says_which_variable_to_set_without_a_token(study_for_prolific, settings, monkeypatch):
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV, raising=False)
    with pytest.raises(ProlificNotConfigured, match=settings.PROLIFIC_API_TOKEN_ENV):
        prolific_study_create(study=study_for_prolific, group=None)
    assert not ProlificStudy.objects.exists()


def test_it_publishes_a_draft_once(fake_prolific, study_for_prolific, django_capture_on_commit_callbacks):
    (row,) = prolific_study_create(study=study_for_prolific, group=None)
    with django_capture_on_commit_callbacks() as callbacks:
        published = prolific_study_publish(prolific_study=row)
    assert published.status == ProlificStudyStatus.ACTIVE and published.published_at
    assert fake_prolific.studies[row.prolific_id]["status"] == "ACTIVE"
    assert len(callbacks) == 1  # the periodic sync starts
    again = prolific_study_publish(prolific_study=row)
    assert again.status == ProlificStudyStatus.ACTIVE
    assert len(fake_prolific.calls("POST", "/transition/")) == 1


def test_it_refuses_to_publish_before_the_study_is_live_here(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group=None)
    study_for_prolific.status = StudyStatus.DRAFT
    study_for_prolific.save()
    row.refresh_from_db()
    with pytest.raises(ProlificError, match="Launch the study"):
        prolific_study_publish(prolific_study=row)
    assert fake_prolific.calls("POST", "/transition/") == []


def test_it_keeps_the_draft_when_prolific_refuses_the_publish(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group=None)
    fake_prolific.fail(status=400, path="/transition/")
    with pytest.raises(ProlificApiError):
        prolific_study_publish(prolific_study=row)
    row.refresh_from_db()
    assert row.status == ProlificStudyStatus.UNPUBLISHED and "400" in row.last_error


def test_it_trusts_prolific_when_the_publish_answer_was_lost(fake_prolific, study_for_prolific):
    (row,) = prolific_study_create(study=study_for_prolific, group=None)
    fake_prolific.studies[row.prolific_id]["status"] = "ACTIVE"  # it went through; the answer did not
    fake_prolific.fail(status=502, path="/transition/")
    published = prolific_study_publish(prolific_study=row)
    assert published.status == ProlificStudyStatus.ACTIVE


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_creates_one_prolific_study_when_two_publish_at_the_same_instant(fake_prolific, settings):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")
    settings.PROLIFIC_SITE_URL = SITE
    study = light_study("race")
    fake_prolific.delay = 0.2  # the first create is still under way when the second arrives

    def create():
        return [row.pk for row in prolific_study_create(study=study, group="each")]

    results, errors = at_the_same_instant(create, create, create)
    assert errors == []
    assert len(fake_prolific.calls("POST", "/studies/")) == 2  # one per group, whoever sent it
    assert len(fake_prolific.studies) == 2
    assert ProlificStudy.objects.filter(study=study).count() == 2
    assert all(sorted(r) == sorted(results[0]) for r in results)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_publishes_once_when_two_publish_at_the_same_instant(fake_prolific, settings):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")
    settings.PROLIFIC_SITE_URL = SITE
    study = light_study("race-publish")
    (row,) = prolific_study_create(study=study, group=None)
    fake_prolific.delay = 0.2

    def publish():
        return prolific_study_publish(
            prolific_study=ProlificStudy.objects.select_related("study").get(pk=row.pk)
        ).status

    results, errors = at_the_same_instant(publish, publish)
    assert errors == []
    assert len(fake_prolific.calls("POST", "/transition/")) == 1
    row.refresh_from_db()
    assert row.status == ProlificStudyStatus.ACTIVE
