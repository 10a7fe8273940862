"""Researcher pages and API of studies, and the guarded status changes behind them."""

import io
import re
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from study.models import (
    Artwork,
    Assignment,
    DescriptionPair,
    Participant,
    ParticipantStatus,
    PrepStatus,
    Study,
    StudyStatus,
    Term,
    TermStatus,
)
from study.selectors.studies import study_checklist, study_list
from study.services.studies import (
    StudyTransitionError,
    study_close,
    study_delete,
    study_launch,
    study_pause,
    study_resume,
)

from .factories import make_study, package_dict, write_package

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def draft(slug="draft-study", **prep) -> Study:
    study = make_study(package_dict(slug=slug), status=StudyStatus.DRAFT)
    if prep:
        Study.objects.filter(pk=study.pk).update(**prep)
        study.refresh_from_db()
    return study


def package_zip(tmp_path, package) -> bytes:
    folder = write_package(tmp_path / package["slug"], package)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in folder.rglob("*"):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def participant(study, pid, group, status=ParticipantStatus.COMPLETED, **extra):
    return Participant.objects.create(
        study=study, prolific_pid=pid, group=group, status=status, consented_at=timezone.now(), **extra
    )


# --- Who may see what --------------------------------------------------------------------------

PAGES = [
    ("get", "study:list", False),
    ("get", "study:import", False),
    ("post", "study:import", False),
    ("get", "study:detail", True),
    ("post", "study:transition", True),
]


@pytest.mark.parametrize("method,name,with_slug", PAGES)
def test_it_refuses_the_pages_to_anyone_but_researchers(
    method, name, with_slug, outsider_client, annotator_client, anonymous_client
):
    study = draft()
    url = reverse(name, args=[study.slug] if with_slug else [])
    data = {"action": "launch"} if name == "study:transition" else {}
    for client in (outsider_client, annotator_client):
        assert getattr(client, method)(url, data).status_code == 403
    response = getattr(anonymous_client, method)(url, data)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    study.refresh_from_db()
    assert study.status == StudyStatus.DRAFT


def test_it_shows_the_studies_link_to_researchers_only(researcher_client, annotator_client):
    link = f'href="{reverse("study:list")}"'
    assert link in researcher_client.get(reverse("home")).content.decode()
    assert link not in annotator_client.get(reverse("home")).content.decode()


# --- List --------------------------------------------------------------------------------------


def test_it_lists_studies_with_valid_completions_per_group_against_the_quota(researcher_client):
    study = make_study(package_dict(slug="listed"))
    participant(study, "p1", "american")
    participant(study, "p2", "american")
    participant(study, "p3", "american", status=ParticipantStatus.EXCLUDED_QC)
    participant(study, "p4", "chinese", status=ParticipantStatus.IN_PROGRESS)
    participant(study, "p5", "chinese", is_test=True)
    participant(study, "p6", "chinese", is_preview=True)
    Participant.objects.create(study=study, prolific_pid="p7", group="chinese")  # entered, never consented

    rows = {row["group"]: row for row in study_list()[0].progress}
    assert rows == {
        "american": {"group": "american", "started": 3, "completed": 2, "quota": 10},
        "chinese": {"group": "chinese", "started": 1, "completed": 0, "quota": 10},
    }

    html = researcher_client.get(reverse("study:list")).content.decode()
    assert "Artwork descriptions study" in html and 'data-study="listed"' in html
    american = re.search(r'data-group="american">(.*?)</div>', html, re.S).group(1)
    assert "2 / 10" in american and "3 started" in american
    assert "0 / 10" in re.search(r'data-group="chinese">(.*?)</div>', html, re.S).group(1)
    assert reverse("study:results", args=["listed"]) in html and reverse("study:terms", args=["listed"]) in html


def test_it_says_so_when_there_is_no_study(researcher_client):
    assert "No study yet" in researcher_client.get(reverse("study:list")).content.decode()


# --- Import page -------------------------------------------------------------------------------


def test_it_imports_an_uploaded_package_and_opens_its_page(tmp_path, researcher, researcher_client):
    upload = SimpleUploadedFile("study.zip", package_zip(tmp_path, package_dict(slug="uploaded")))
    response = researcher_client.post(reverse("study:import"), {"package": upload})
    assert response.status_code == 302 and response["Location"] == reverse("study:detail", args=["uploaded"])
    study = Study.objects.get(slug="uploaded")
    assert study.created_by == researcher and study.status == StudyStatus.DRAFT
    assert "imported as a draft" in researcher_client.get(response["Location"]).content.decode()


def test_it_imports_once_when_the_form_is_sent_twice(tmp_path, researcher_client, django_capture_on_commit_callbacks):
    data = package_zip(tmp_path, package_dict(slug="twice"))
    form = {"idempotency_key": "import-form-0001"}

    with django_capture_on_commit_callbacks() as queued:
        first = researcher_client.post(reverse("study:import"), {**form, "package": SimpleUploadedFile("s.zip", data)})
        again = researcher_client.post(reverse("study:import"), {**form, "package": SimpleUploadedFile("s.zip", data)})

    assert first.status_code == again.status_code == 302
    assert again["Location"] == first["Location"] == reverse("study:detail", args=["twice"])
    assert Study.objects.filter(slug="twice").count() == 1
    assert len(queued) == 1, "the repeat queues no second preparation"


def test_it_lists_every_import_error_on_its_own_line(tmp_path, researcher_client):
    package = package_dict(slug="bad-upload")
    package["artworks"][2]["questions"][1]["distractors"] = ["a", "b"]
    package["artworks"][3]["culture"] = "french"
    upload = SimpleUploadedFile("study.zip", package_zip(tmp_path, package))
    response = researcher_client.post(reverse("study:import"), {"package": upload})
    assert response.status_code == 400
    html = response.content.decode()
    errors = re.search(r'data-testid="import-errors">(.*?)</ul>', html, re.S).group(1)
    items = re.findall(r"<li>(.*?)</li>", errors)
    assert len(items) == 2
    assert items[0] == "artwork &quot;am3&quot;, questions[1].distractors: expected 5 distinct strings, got 2"
    assert items[1].startswith("artwork &quot;am4&quot;, culture:")
    assert not Study.objects.exists()


def test_it_refuses_an_upload_that_is_not_a_zip(researcher_client):
    upload = SimpleUploadedFile("study.json", b"{}")
    response = researcher_client.post(reverse("study:import"), {"package": upload})
    assert response.status_code == 400 and "Upload a .zip file." in response.content.decode()
    assert researcher_client.get(reverse("study:import")).status_code == 200


# --- Detail page -------------------------------------------------------------------------------


def test_it_shows_the_prolific_urls_checklist_artworks_and_preview(researcher_client):
    study = draft(slug="shown")
    Participant.objects.create(study=study, prolific_pid="x", group="american", is_preview=True)
    real = participant(study, "r1", "american", status=ParticipantStatus.IN_PROGRESS)
    Assignment.objects.create(participant=real, artwork=study.artworks.get(key="am2"), order=0)

    html = researcher_client.get(reverse("study:detail", args=["shown"])).content.decode()

    assert (
        "http://testserver/s/shown/?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}"
        "&amp;SESSION_ID={{%SESSION_ID%}}</code>" in html
    )
    assert "SESSION_ID={{%SESSION_ID%}}&amp;group=chinese" in html
    assert "https://app.prolific.com/submissions/complete?cc=C0MPL3TE" in html
    assert "SCR33N" in html and "N0C0NSENT" in html
    row = re.search(r'<tr data-artwork="am2">(.*?)</tr>', html, re.S).group(1)
    cells = re.findall(r'<td class="numeric">(\d+)</td>', row)
    assert cells == ["2", "4", "1"]  # questions, descriptions, times assigned
    assert "QC" in re.search(r'<tr data-artwork="qc1">(.*?)</tr>', html, re.S).group(1)
    preview = re.search(r'data-testid="preview-form">(.*?)</form>', html, re.S).group(1)
    assert f'action="{reverse("study:preview", args=["shown"])}"' in html
    assert '<option value="american">' in preview and '<option value="chinese">' in preview
    assert 'data-item="preview" data-done="yes"' in html
    assert 'data-item="pairs" data-done="yes"' in html and "Launch</button>" in html
    assert "hx-get" not in html


def test_it_polls_the_status_while_preparing_and_answers_htmx_with_the_fragment(researcher_client):
    study = draft(slug="preparing", highlight_status=PrepStatus.RUNNING, terms_status=PrepStatus.PENDING)
    DescriptionPair.objects.filter(artwork__study=study).update(computed_at=None, matches=[])
    url = reverse("study:detail", args=["preparing"])

    html = researcher_client.get(url).content.decode()
    assert f'hx-get="{url}" hx-trigger="every 2s"' in html
    assert "Sentence pairs computed: 0 / 24" in html
    assert re.search(r"<button type=\"submit\" disabled[^>]*>Launch</button>", html)

    fragment = researcher_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<section id="study-status"') and "<html" not in fragment

    Study.objects.filter(pk=study.pk).update(
        highlight_status=PrepStatus.FAILED, highlight_error="model not found", terms_status=PrepStatus.READY
    )
    fragment = researcher_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "hx-get" not in fragment and "model not found" in fragment
    assert f'action="{reverse("study:prepare", args=["preparing"])}"' in fragment


def test_it_answers_404_for_an_unknown_study(researcher_client):
    assert researcher_client.get(reverse("study:detail", args=["nope"])).status_code == 404
    assert researcher_client.post(reverse("study:transition", args=["nope"]), {"action": "pause"}).status_code == 404


# --- Transitions -------------------------------------------------------------------------------


def test_it_launches_pauses_resumes_and_closes_through_the_page(researcher_client):
    study = draft(slug="moving")
    url = reverse("study:transition", args=["moving"])
    for action, status in [("launch", "live"), ("pause", "paused"), ("resume", "live"), ("close", "closed")]:
        response = researcher_client.post(url, {"action": action})
        assert response.status_code == 302
        study.refresh_from_db()
        assert study.status == status, action
    assert study.launched_at and study.closed_at


def test_it_explains_a_refused_transition_on_the_page(researcher_client):
    draft(slug="refused")
    url = reverse("study:transition", args=["refused"])
    response = researcher_client.post(url, {"action": "resume"}, follow=True)
    assert "The study is draft and cannot be resumed" in response.content.decode()
    response = researcher_client.post(url, {"action": "explode"}, follow=True)
    assert "Unknown action." in response.content.decode()
    assert Study.objects.get(slug="refused").status == StudyStatus.DRAFT


def test_it_refuses_to_launch_before_the_highlights_are_ready():
    study = draft(highlight_status=PrepStatus.RUNNING)
    with pytest.raises(StudyTransitionError, match="sentence pairs are not computed"):
        study_launch(study=study)
    Study.objects.filter(pk=study.pk).update(highlight_status=PrepStatus.FAILED)
    with pytest.raises(StudyTransitionError, match="highlighting is failed"):
        study_launch(study=study)
    assert Study.objects.get(pk=study.pk).status == StudyStatus.DRAFT


@pytest.mark.parametrize("status", [TermStatus.PENDING, TermStatus.FOUND, TermStatus.NOT_FOUND])
def test_it_refuses_to_launch_while_a_term_is_not_confirmed_or_rejected(status):
    study = draft()
    Term.objects.filter(artwork__study=study, artwork__key="cn2").update(status=status)
    with pytest.raises(StudyTransitionError, match="1 of 6 terms are not yet confirmed or rejected"):
        study_launch(study=study)
    Term.objects.filter(artwork__study=study, artwork__key="cn2").update(status=TermStatus.REJECTED)
    assert study_launch(study=study).status == StudyStatus.LIVE


def test_it_refuses_to_launch_while_the_terms_are_being_searched():
    study = draft(terms_status=PrepStatus.RUNNING)
    with pytest.raises(StudyTransitionError, match="search for culture-specific terms has not finished"):
        study_launch(study=study)


def test_it_allows_each_transition_only_from_its_status():
    study = draft()
    for service in (study_pause, study_resume, study_close):
        with pytest.raises(StudyTransitionError, match="the study is draft"):
            service(study=study)
    study_launch(study=study)
    with pytest.raises(StudyTransitionError, match="the study is live and cannot be launched"):
        study_launch(study=study)
    with pytest.raises(StudyTransitionError, match="cannot be resumed"):
        study_resume(study=study)
    study_pause(study=study)
    with pytest.raises(StudyTransitionError, match="cannot be paused"):
        study_pause(study=study)
    study_close(study=study)
    for service in (study_launch, study_pause, study_resume, study_close):
        with pytest.raises(StudyTransitionError, match="the study is closed"):
            service(study=study)


def test_a_stale_copy_cannot_move_a_study_twice():
    study = make_study(package_dict(slug="stale"))
    stale = Study.objects.get(pk=study.pk)
    study_pause(study=study)
    stale.status = StudyStatus.LIVE  # what the other tab still believes
    with pytest.raises(StudyTransitionError, match="paused and cannot be paused"):
        study_pause(study=stale)


def test_it_deletes_a_draft_with_its_images_and_previews_only(
    researcher_client, settings, django_capture_on_commit_callbacks
):
    study = draft(slug="doomed")
    preview = Participant.objects.create(study=study, prolific_pid="pv", group="american", is_preview=True)
    Assignment.objects.create(participant=preview, artwork=study.artworks.first(), order=0)
    image = study.artworks.first().image.path
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(reverse("study:transition", args=["doomed"]), {"action": "delete"})
    assert response.status_code == 302 and response["Location"] == reverse("study:list")
    assert not Study.objects.filter(slug="doomed").exists() and not Artwork.objects.exists()
    import os

    assert not os.path.exists(image)


def test_it_refuses_to_delete_a_study_with_participants_or_not_a_draft():
    study = draft(slug="kept")
    participant(study, "p1", "american")
    with pytest.raises(StudyTransitionError, match="participants have taken part"):
        study_delete(study=study)
    live = make_study(package_dict(slug="live-kept"))
    with pytest.raises(StudyTransitionError, match="only a draft"):
        study_delete(study=live)
    assert Study.objects.count() == 2


def test_the_checklist_counts_pairs_and_reviewed_terms():
    study = draft(highlight_status=PrepStatus.PENDING)
    DescriptionPair.objects.filter(artwork__study=study, artwork__key__startswith="cn").update(
        computed_at=timezone.now()
    )
    Term.objects.filter(artwork__study=study, artwork__key__in=["cn1", "cn2"]).update(status=TermStatus.FOUND)
    items = {item["key"]: item for item in study_checklist(study)}
    assert items["package"]["done"] and items["package"]["detail"]["artworks"] == 14
    assert not items["pairs"]["done"] and items["pairs"]["detail"]["computed"] == 12
    assert items["pairs"]["detail"]["total"] == 24
    assert not items["terms"]["done"] and (items["terms"]["detail"]["reviewed"], items["terms"]["detail"]["total"]) == (
        4,
        6,
    )
    assert not items["preview"]["done"]


# --- API ---------------------------------------------------------------------------------------


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


API_ROUTES = [
    ("get", "study_api:study-list", False),
    ("get", "study_api:study-detail", True),
    ("post", "study_api:study-import", False),
    ("post", "study_api:study-transition", True),
]


@pytest.mark.parametrize("method,name,with_slug", API_ROUTES)
def test_the_api_refuses_anyone_but_researchers(method, name, with_slug, outsider, annotator_a):
    study = draft()
    url = reverse(name, args=[study.slug] if with_slug else [])
    assert getattr(APIClient(), method)(url).status_code == 401
    for user in (outsider, annotator_a):
        client = APIClient()
        client.force_authenticate(user)
        assert getattr(client, method)(url, {"action": "launch"}).status_code == 403


def test_the_api_lists_and_shows_studies(api):
    study = draft(slug="api-study")
    participant(study, "p1", "chinese")
    listed = api.get(reverse("study_api:study-list")).json()
    assert [s["slug"] for s in listed] == ["api-study"]
    assert listed[0]["progress"][1] == {"group": "chinese", "started": 1, "completed": 1, "quota": 10}

    detail = api.get(reverse("study_api:study-detail", args=["api-study"])).json()
    assert detail["status"] == "draft" and detail["launch_blockers"] == []
    assert [item["key"] for item in detail["checklist"]] == [
        "package",
        "pairs",
        "terms",
        "glosses",
        "preview",
        "consent",
        "alt_text",
        "translations",
    ]
    assert len(detail["artworks"]) == 14
    assert detail["artworks"][0] == {
        "id": "am1",
        "title": "Artwork am1",
        "culture": "american",
        "qc": False,
        "questions": 2,
        "descriptions": 4,
        "assigned": 0,
    }
    assert api.get(reverse("study_api:study-detail", args=["missing"])).status_code == 404


def test_the_api_answers_an_unknown_study_the_same_way_everywhere(api):
    # One look-up (study_or_404) behind every route: no route names the model or says less.
    answers = [
        api.get(reverse("study_api:study-detail", args=["missing"])),
        api.post(reverse("study_api:study-transition", args=["missing"]), {"action": "pause"}, format="json"),
        api.get(reverse("study_api:results", args=["missing"])),
        api.get(reverse("study_api:responses", args=["missing"])),
    ]
    assert [(response.status_code, response.json()) for response in answers] == [
        (404, {"detail": "No such study."})
    ] * 4


def test_the_api_imports_a_zip_or_lists_its_errors(tmp_path, api):
    url = reverse("study_api:study-import")
    data = package_zip(tmp_path, package_dict(slug="api-import"))
    response = api.post(url, {"package": SimpleUploadedFile("p.zip", data)}, format="multipart")
    assert response.status_code == 201 and response.json() == {"slug": "api-import"}

    response = api.post(url, {"package": SimpleUploadedFile("p.zip", data)}, format="multipart")
    assert response.status_code == 400
    assert response.json() == {"errors": ["slug: a study “api-import” already exists"]}

    response = api.post(url, {}, format="multipart")
    assert response.status_code == 400 and response.json()["errors"][0].startswith("package: ")


def test_the_api_answers_a_repeated_import_key_with_the_first_study(tmp_path, api):
    url = reverse("study_api:study-import")
    data = package_zip(tmp_path, package_dict(slug="api-retry"))
    headers = {"HTTP_IDEMPOTENCY_KEY": "retry-key-0001"}

    first = api.post(url, {"package": SimpleUploadedFile("p.zip", data)}, format="multipart", **headers)
    again = api.post(url, {"package": SimpleUploadedFile("p.zip", data)}, format="multipart", **headers)
    malformed = api.post(
        url, {"package": SimpleUploadedFile("p.zip", data)}, format="multipart", HTTP_IDEMPOTENCY_KEY="bad key"
    )

    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json() == again.json() == {"slug": "api-retry"}
    assert malformed.status_code == 400 and "idempotency key" in malformed.json()["errors"][0]
    assert Study.objects.filter(slug="api-retry").count() == 1


def test_the_api_changes_the_status_or_says_why_not(api):
    draft(slug="api-move", highlight_status=PrepStatus.RUNNING)
    url = reverse("study_api:study-transition", args=["api-move"])
    response = api.post(url, {"action": "launch"}, format="json")
    assert response.status_code == 409 and "sentence pairs are not computed" in response.json()["detail"]
    assert api.post(url, {"action": "fly"}, format="json").status_code == 400
    Study.objects.filter(slug="api-move").update(highlight_status=PrepStatus.READY)
    response = api.post(url, {"action": "launch"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "live"


@pytest.mark.parametrize("body", [{"action": {}}, {"action": ["launch"]}, {"action": None}, ["launch"], {}])
def test_it_refuses_an_action_of_the_wrong_type_with_a_400(api, body):
    draft(slug="api-typed")
    url = reverse("study_api:study-transition", args=["api-typed"])
    response = api.post(url, body, format="json")
    assert response.status_code == 400
    assert Study.objects.get(slug="api-typed").status == StudyStatus.DRAFT


# --- Admin -------------------------------------------------------------------------------------


def test_the_admin_lists_every_study_model_and_shows_prolific_ids_to_superusers_only(client):
    from django.contrib import admin

    from tests.conftest import make_user

    study = make_study(package_dict(slug="admin-study"))
    participant(study, "PID-SECRET-1", "american")
    superuser = make_user("boss", is_staff=True, is_superuser=True)
    client.force_login(superuser)
    study_models = [model for model in admin.site._registry if model._meta.app_label == "study"]
    assert len(study_models) == 12
    for model in study_models:
        url = reverse(f"admin:study_{model._meta.model_name}_changelist")
        assert client.get(url).status_code == 200, url
    url = reverse("admin:study_participant_changelist")
    assert "PID-SECRET-1" in client.get(url).content.decode()
    assert client.get(url, {"q": "PID-SECRET"}).content.decode().count("PID-SECRET-1") >= 1
    assert client.get(reverse("admin:study_study_add")).status_code == 403

    from django.contrib.auth.models import Permission

    staff = make_user("staffer", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_participant"))
    client.force_login(staff)
    html = client.get(url).content.decode()
    assert client.get(url).status_code == 200 and "PID-SECRET-1" not in html
    detail = reverse("admin:study_participant_change", args=[study.participants.get().pk])
    assert "PID-SECRET-1" not in client.get(detail).content.decode()
