"""The study's Prolific page and its actions, against the loopback fake of Prolific's API.

Each action is a POST that answers with the page (or a redirect to it) and a message; a double
submit of publish or pay does nothing the second time; without a token every page still works
and says what it would have sent.
"""

import html
import json

import pytest
from django.conf import settings
from django.urls import reverse

from prolific.models import (
    ApiCall,
    BonusBatch,
    BonusBatchStatus,
    ProlificStudy,
    ProlificStudyStatus,
    ProlificSubmission,
)
from study.models import Participant, ParticipantStatus
from tests.study.factories import make_study, package_dict

pytestmark = pytest.mark.django_db

LONG_MESSAGE = (
    "Your answers to the attention checks were all wrong and the survey was finished in two minutes, "
    "far below the time needed to read the descriptions."
)
ACTIONS = ("create", "publish", "sync", "hooks", "approve", "reject", "request_return", "bonus_create", "bonus_pay")


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def web_study():
    return make_study(package_dict(slug="prolific-web", reward="£3.00", estimated_minutes=20))


@pytest.fixture
def no_token(monkeypatch):
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV, raising=False)


def url(name: str, study) -> str:
    return reverse(f"prolific:{name}", args=[study.slug])


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def follow(client, name, study, data=None, **extra):
    return client.post(url(name, study), data or {}, follow=True, **extra)


def create(client, study, group="each", completion="MANUALLY_REVIEW", filters=""):
    return follow(client, "create", study, {"group": group, "completion_action": completion, "filters": filters})


def complete_participant(study, pid: str, session: str, *, group="american", status=ParticipantStatus.COMPLETED):
    return Participant.objects.create(
        study=study, prolific_pid=pid, prolific_session_id=session, group=group, status=status
    )


def published(client, study, fake):
    create(client, study, group="american")
    draft = ProlificStudy.objects.get(study=study)
    follow(client, "publish", study, {"prolific_study": draft.pk, "confirm": "on"})
    draft.refresh_from_db()
    assert draft.status == ProlificStudyStatus.ACTIVE
    return draft


def awaiting_review(client, study, fake, draft, pids: dict[str, str]):
    """Submissions on the fake, awaiting review, each with a local session of the given status; then a sync."""
    for pid, status in pids.items():
        submission = fake.add_submission(draft.prolific_id, pid, status="AWAITING REVIEW")
        complete_participant(study, pid, submission, status=status)
    follow(client, "sync", study)


# --- Who may ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["study", "log"])
def test_it_shows_the_pages_to_researchers_only(name, web_study, researcher_client, annotator_client, anonymous_client):
    assert researcher_client.get(url(name, web_study)).status_code == 200
    assert annotator_client.get(url(name, web_study)).status_code == 403
    assert anonymous_client.get(url(name, web_study)).status_code == 302


@pytest.mark.parametrize("name", ACTIONS)
def test_it_refuses_every_action_to_non_researchers_and_writes_nothing(
    name, web_study, annotator_client, outsider_client, fake_prolific
):
    for client in (annotator_client, outsider_client):
        assert (
            client.post(url(name, web_study), {"group": "each", "completion_action": "MANUALLY_REVIEW"}).status_code
            == 403
        )
    assert not ProlificStudy.objects.exists() and not ApiCall.objects.exists()
    assert fake_prolific.requests == []


@pytest.mark.parametrize("name", ACTIONS)
def test_it_takes_no_get_on_an_action(name, web_study, researcher_client):
    assert researcher_client.get(url(name, web_study)).status_code == 405


def test_it_answers_404_for_an_unknown_study(researcher_client):
    assert researcher_client.get(reverse("prolific:study", args=["no-such-study"])).status_code == 404


# --- Without a token ------------------------------------------------------------------------


def test_it_says_what_it_would_do_without_a_token(web_study, researcher_client, no_token):
    page = researcher_client.get(url("study", web_study))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-testid="prolific-not-configured"' in html and settings.PROLIFIC_API_TOKEN_ENV in html
    # The preview shows the bodies that would be sent, one per group by default.
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in html and "group=american" in html and "group=chinese" in html

    answer = create(researcher_client, web_study)
    assert answer.status_code == 200
    (warning,) = messages_of(answer)
    assert "nothing was sent" in warning and "2 draft studies" in warning and settings.PROLIFIC_API_TOKEN_ENV in warning
    assert not ProlificStudy.objects.exists() and not ApiCall.objects.exists()

    for name, expected in (
        ("sync", "list the submissions"),
        ("approve", "approve every submission"),
        ("hooks", "subscribe"),
    ):
        answer = follow(researcher_client, name, web_study)
        assert answer.redirect_chain[-1][0] == url("study", web_study)
        (warning,) = messages_of(answer)
        assert "nothing was sent" in warning and expected in warning, name
    assert researcher_client.get(url("log", web_study)).status_code == 200
    assert not ApiCall.objects.exists()


# --- Publish ---------------------------------------------------------------------------------


def test_it_previews_the_request_bodies_as_a_fragment(web_study, researcher_client, no_token):
    answer = researcher_client.post(
        url("create", web_study),
        {"group": "chinese", "completion_action": "AUTOMATICALLY_APPROVE", "filters": "", "preview": "1"},
        HTTP_HX_REQUEST="true",
    )
    html = answer.content.decode()
    assert answer.status_code == 200 and "<html" not in html and 'id="request-preview"' in html
    assert "group=chinese" in html and "group=american" not in html and "AUTOMATICALLY_APPROVE" in html
    assert not ProlificStudy.objects.exists()


@pytest.mark.parametrize(
    ("filters", "error"),
    [
        ("{not json", "Filters: not valid JSON (line 1"),
        ('{"filter_id": "x"}', "Filters: a JSON list is expected"),
        ('[{"filter_id": "x"}, 3]', "Filters: item 2 is not a JSON object"),
        ('[{"selected_values": []}]', 'Filters: item 1 has no "filter_id"'),
    ],
)
def test_it_names_the_filters_field_when_they_are_wrong(filters, error, web_study, researcher_client, fake_prolific):
    answer = create(researcher_client, web_study, filters=filters)
    assert answer.status_code == 400 and error in html.unescape(answer.content.decode())
    assert not ProlificStudy.objects.exists() and fake_prolific.requests == []


def test_it_creates_one_draft_per_group_once_and_publishes_after_the_confirmation(
    web_study, researcher_client, fake_prolific
):
    filters = '[{"filter_id": "current-country-of-residence", "selected_values": ["1"]}]'
    answer = create(researcher_client, web_study, filters=filters)
    assert answer.status_code == 200 and "Draft on Prolific" in " ".join(messages_of(answer))
    drafts = {p.group: p for p in ProlificStudy.objects.filter(study=web_study)}
    assert set(drafts) == {"american", "chinese"} and len(fake_prolific.studies) == 2
    sent = fake_prolific.studies[drafts["american"].prolific_id]
    assert sent["filters"] == json.loads(filters) and sent["total_available_places"] == web_study.quota_per_group
    assert "group=american" in sent["external_study_url"]

    # Creating again (a second tab, a double click) never makes a second Prolific study.
    create(researcher_client, web_study, filters=filters)
    assert ProlificStudy.objects.filter(study=web_study).count() == 2 and len(fake_prolific.studies) == 2

    draft = drafts["american"]
    unconfirmed = follow(researcher_client, "publish", web_study, {"prolific_study": draft.pk})
    assert "Tick the confirmation to publish." in messages_of(unconfirmed)
    assert fake_prolific.calls("POST", "/transition/") == []

    for _ in range(2):  # the double submit
        answer = follow(researcher_client, "publish", web_study, {"prolific_study": draft.pk, "confirm": "on"})
    draft.refresh_from_db()
    assert draft.status == ProlificStudyStatus.ACTIVE and fake_prolific.studies[draft.prolific_id]["status"] == "ACTIVE"
    assert len(fake_prolific.calls("POST", f"/studies/{draft.prolific_id}/transition/")) == 1
    assert any("already" in m for m in messages_of(answer))
    html = answer.content.decode()
    assert f'data-prolific-study="{draft.prolific_id}" data-status="ACTIVE"' in html


def test_it_shows_prolific_s_own_message_when_it_refuses(web_study, researcher_client, fake_prolific):
    fake_prolific.fail(status=403, times=1)
    answer = create(researcher_client, web_study, group="american")
    text = " ".join(messages_of(answer))
    assert "403" in text
    assert researcher_client.get(url("log", web_study)).status_code == 200


def test_it_publishes_only_this_study_s_drafts(web_study, researcher_client, fake_prolific):
    other = make_study(package_dict(slug="other-study", reward="£2.00", estimated_minutes=10))
    create(researcher_client, other, group="american")
    foreign = ProlificStudy.objects.get(study=other)
    answer = follow(researcher_client, "publish", web_study, {"prolific_study": foreign.pk, "confirm": "on"})
    assert "No such Prolific study of this study." in messages_of(answer)
    foreign.refresh_from_db()
    assert foreign.status == ProlificStudyStatus.UNPUBLISHED


# --- Sync and review --------------------------------------------------------------------------


def test_it_syncs_and_lists_submissions_verdicts_and_discrepancies(web_study, researcher_client, fake_prolific):
    draft = published(researcher_client, web_study, fake_prolific)
    awaiting_review(
        researcher_client,
        web_study,
        fake_prolific,
        draft,
        {"PIDVALID": ParticipantStatus.COMPLETED, "PIDQC": ParticipantStatus.EXCLUDED_QC},
    )
    fake_prolific.add_submission(draft.prolific_id, "PIDNOWHERE", status="AWAITING REVIEW")
    complete_participant(web_study, "PIDLOCALONLY", "session-unknown")
    answer = follow(researcher_client, "sync", web_study)
    assert any(m.startswith("Synced: 3 submissions") for m in messages_of(answer))
    html = answer.content.decode()
    assert ProlificSubmission.objects.filter(prolific_study=draft).count() == 3
    assert (
        'data-verdict="valid"' in html and 'data-verdict="screened_out"' in html and 'data-verdict="no_session"' in html
    )
    assert 'data-testid="orphan-submissions"' in html and "PIDNOWHERE" in html
    assert 'data-testid="unknown-sessions"' in html and "PIDLOCALONLY" in html
    # The study's results page shows the same review and discrepancies (its htmx part of this page).
    results = researcher_client.get(reverse("study:results", args=[web_study.slug])).content.decode()
    panel_url = f"{url('study', web_study)}?panel=review"
    assert f'hx-get="{panel_url}"' in results
    panel = researcher_client.get(panel_url, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in panel and 'data-verdict="valid"' in panel and 'data-verdict="screened_out"' in panel
    assert "PIDNOWHERE" in panel and "PIDLOCALONLY" in panel and 'data-testid="reject-form"' in panel


def test_it_approves_the_valid_submissions_once(web_study, researcher_client, fake_prolific):
    draft = published(researcher_client, web_study, fake_prolific)
    awaiting_review(
        researcher_client,
        web_study,
        fake_prolific,
        draft,
        {
            "PIDA": ParticipantStatus.COMPLETED,
            "PIDB": ParticipantStatus.COMPLETED,
            "PIDQC": ParticipantStatus.EXCLUDED_QC,
        },
    )
    for _ in range(2):
        answer = follow(researcher_client, "approve", web_study)
    assert len(fake_prolific.calls("POST", "bulk-approve")) == 1
    statuses = {s["participant_id"]: s["status"] for s in fake_prolific.submissions.values()}
    assert statuses == {"PIDA": "APPROVED", "PIDB": "APPROVED", "PIDQC": "AWAITING REVIEW"}
    assert any("nothing was sent" in m.lower() or "no valid submission" in m.lower() for m in messages_of(answer))


def test_it_shows_prolific_s_refusal_of_an_approval(web_study, researcher_client, fake_prolific):
    draft = published(researcher_client, web_study, fake_prolific)
    awaiting_review(researcher_client, web_study, fake_prolific, draft, {"PIDA": ParticipantStatus.COMPLETED})
    (submission_id,) = fake_prolific.submissions
    fake_prolific.refuse(submission_id, "Participant is blocked.")
    answer = follow(researcher_client, "approve", web_study)
    assert "Participant is blocked." in " ".join(messages_of(answer)) + answer.content.decode()
    assert fake_prolific.status_of(submission_id) == "AWAITING REVIEW"


def test_it_rejects_one_submission_only_after_the_confirmation(web_study, researcher_client, fake_prolific):
    draft = published(researcher_client, web_study, fake_prolific)
    awaiting_review(researcher_client, web_study, fake_prolific, draft, {"PIDQC": ParticipantStatus.EXCLUDED_QC})
    (submission_id,) = fake_prolific.submissions
    data = {"submission": submission_id, "category": "FAILED_CHECK", "message": LONG_MESSAGE}

    unconfirmed = follow(researcher_client, "reject", web_study, data)
    assert "Tick the confirmation to reject." in " ".join(messages_of(unconfirmed))
    short = follow(researcher_client, "reject", web_study, {**data, "message": "too fast", "confirm": "on"})
    assert any(m.startswith("Message to the participant:") for m in messages_of(short))
    assert fake_prolific.calls("POST", "/transition/") == [] or fake_prolific.status_of(submission_id) != "REJECTED"

    answer = follow(researcher_client, "reject", web_study, {**data, "confirm": "on"})
    assert fake_prolific.status_of(submission_id) == "REJECTED"
    assert f"Submission {submission_id} rejected." in messages_of(answer)


def test_it_asks_a_participant_to_return_and_refuses_another_study_s_submission(
    web_study, researcher_client, fake_prolific
):
    draft = published(researcher_client, web_study, fake_prolific)
    awaiting_review(researcher_client, web_study, fake_prolific, draft, {"PIDA": ParticipantStatus.COMPLETED})
    (submission_id,) = fake_prolific.submissions
    answer = follow(
        researcher_client, "request_return", web_study, {"submission": submission_id, "reasons": "Wrong group\n"}
    )
    assert fake_prolific.submissions[submission_id]["return_requested"] == ["Wrong group"]
    assert any("asked to return" in m for m in messages_of(answer))

    missing = follow(researcher_client, "request_return", web_study, {"submission": "sb-elsewhere", "reasons": "x"})
    assert "Submission sb-elsewhere is not one of this study's." in messages_of(missing)


# --- Bonuses ---------------------------------------------------------------------------------


def test_it_creates_a_bonus_batch_shows_its_cost_and_pays_it_exactly_once(
    web_study, researcher_client, fake_prolific, eager, django_capture_on_commit_callbacks
):
    draft = published(researcher_client, web_study, fake_prolific)
    awaiting_review(
        researcher_client,
        web_study,
        fake_prolific,
        draft,
        {"PIDA": ParticipantStatus.COMPLETED, "PIDB": ParticipantStatus.COMPLETED},
    )
    csv = "participant_id,amount\nPIDA,1.50\nPIDB,0.50\n"
    answer = follow(researcher_client, "bonus_create", web_study, {"text": csv})
    batch = BonusBatch.objects.get()
    assert batch.status == BonusBatchStatus.CREATED and batch.total_amount > batch.amount == 2
    assert f'data-batch="{batch.pk}" data-status="CREATED"' in answer.content.decode()
    # The same rows again find the same batch.
    follow(researcher_client, "bonus_create", web_study, {"text": csv})
    assert BonusBatch.objects.count() == 1

    unconfirmed = follow(researcher_client, "bonus_pay", web_study, {"batch": batch.pk})
    assert (
        "Tick the confirmation to pay." in messages_of(unconfirmed) and fake_prolific.pay_counts[batch.prolific_id] == 0
    )

    for _ in range(2):  # the double submit; the worker's task runs inline here
        with django_capture_on_commit_callbacks(execute=True):
            answer = follow(researcher_client, "bonus_pay", web_study, {"batch": batch.pk, "confirm": "on"})
    batch.refresh_from_db()
    assert batch.status == BonusBatchStatus.SENT and fake_prolific.pay_counts[batch.prolific_id] == 1
    assert any("never sent twice" in m for m in messages_of(answer))
    assert 'data-testid="pay-form"' not in answer.content.decode()


def test_it_names_the_row_of_a_wrong_bonus(web_study, researcher_client, fake_prolific):
    draft = published(researcher_client, web_study, fake_prolific)
    awaiting_review(researcher_client, web_study, fake_prolific, draft, {"PIDA": ParticipantStatus.COMPLETED})
    answer = follow(
        researcher_client, "bonus_create", web_study, {"text": "participant_id,amount\nPIDA,1.00\nSTRANGER,2.00\n"}
    )
    text = " ".join(messages_of(answer))
    assert "STRANGER" in text and "3" in text
    assert not BonusBatch.objects.exists() and fake_prolific.calls("POST", "bonus-payments") == []


def test_it_asks_for_a_file_or_rows(web_study, researcher_client, no_token):
    answer = researcher_client.post(url("bonus_create", web_study), {})
    assert answer.status_code == 400 and "Choose a CSV file or paste its rows." in answer.content.decode()


# --- The log ---------------------------------------------------------------------------------


def test_it_logs_every_call_without_the_token(web_study, researcher_client, fake_prolific):
    published(researcher_client, web_study, fake_prolific)
    html = researcher_client.get(url("log", web_study)).content.decode()
    assert "/studies/" in html and "transition" in html and 'data-status="201"' in html
    assert fake_prolific.token not in html


# --- Webhook subscription ---------------------------------------------------------------------


def test_it_subscribes_the_webhook_once_and_refuses_a_plain_http_address(web_study, researcher_client, fake_prolific):
    refused = follow(researcher_client, "hooks", web_study)
    assert any("only calls https://" in m for m in messages_of(refused)) and fake_prolific.subscriptions == {}

    answer = follow(researcher_client, "hooks", web_study, HTTP_HOST="localhost")
    assert "Prolific now sends submission status changes to http://localhost/prolific/hooks/submissions/." in (
        messages_of(answer)
    )
    (hook,) = fake_prolific.subscriptions.values()
    assert hook["is_enabled"] and hook["target_url"] == "http://localhost/prolific/hooks/submissions/"
    again = follow(researcher_client, "hooks", web_study, HTTP_HOST="localhost")
    assert any("already sends" in m for m in messages_of(again)) and len(fake_prolific.subscriptions) == 1


def test_it_says_what_the_package_lacks_instead_of_a_request_body(researcher_client, no_token):
    study = make_study(package_dict(slug="no-reward"))
    page = researcher_client.get(url("study", study))
    text = html.unescape(page.content.decode())
    assert page.status_code == 200 and 'data-testid="bodies-error"' in text and "holds no amount" in text
