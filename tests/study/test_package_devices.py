"""The devices a study package allows: validated, stored, shown on the study page, sent to Prolific."""

import pytest
from django.urls import reverse

from prolific.models import ProlificStudy
from prolific.selectors import prolific_study_bodies
from prolific.services import prolific_study_create
from study.models import Study
from study.services.imports import StudyImportError, study_import
from tests.prolific.conftest import SITE, light_study
from tests.prolific.fake_prolific import fake_prolific  # noqa: F401 - a fixture

from .factories import package_dict, write_package
from .test_import import _media  # noqa: F401 - the isolated media folder fixture

pytestmark = pytest.mark.django_db


def imported(tmp_path, **fields) -> Study:
    return study_import(source=write_package(tmp_path / "pkg", package_dict(**fields)), start_prepare=False)


def import_errors(tmp_path, **fields) -> list[str]:
    with pytest.raises(StudyImportError) as caught:
        imported(tmp_path, **fields)
    assert not Study.objects.exists()
    return caught.value.errors


def test_it_stores_the_devices_the_package_allows(tmp_path):
    study = imported(tmp_path, devices=["mobile", "desktop", "tablet"])

    assert study.devices == ["mobile", "desktop", "tablet"]


def test_it_allows_desktop_and_tablet_when_the_package_says_nothing(tmp_path):
    # What every Prolific draft said before a package could choose.
    assert imported(tmp_path).devices == ["desktop", "tablet"]


@pytest.mark.parametrize(
    ("devices", "error"),
    [
        (["desktop", "phone"], 'devices[1]: unknown device "phone" (use desktop, tablet, mobile)'),
        (["Mobile"], 'devices[0]: unknown device "Mobile" (use desktop, tablet, mobile)'),
        (["mobile", "mobile"], "devices[1]: mobile is listed twice"),
        ([["mobile"]], 'devices[0]: unknown device ["mobile"] (use desktop, tablet, mobile)'),
        ([], "devices: expected a non-empty list of desktop / tablet / mobile, got []"),
        ("mobile", 'devices: expected a non-empty list of desktop / tablet / mobile, got "mobile"'),
        (None, "devices: expected a non-empty list of desktop / tablet / mobile, got null"),
    ],
)
def test_it_refuses_devices_prolific_does_not_know_naming_the_field(tmp_path, devices, error):
    assert import_errors(tmp_path, devices=devices) == [error]


def test_it_shows_the_devices_on_the_study_page(tmp_path, researcher_client):
    imported(tmp_path, slug="on-phones", devices=["desktop", "mobile"])

    html = researcher_client.get(reverse("study:detail", args=["on-phones"])).content.decode()

    assert "Desktop, Mobile phone</p>" in html


@pytest.fixture
def prolific_site(settings):
    settings.PROLIFIC_SITE_URL = SITE


@pytest.mark.parametrize(
    ("devices", "sent"),
    [
        (["mobile", "desktop"], ["desktop", "mobile"]),
        (["mobile"], ["mobile"]),
        (["desktop", "tablet"], ["desktop", "tablet"]),
    ],
)
def test_it_passes_the_devices_to_prolific_as_device_compatibility(prolific_site, devices, sent):
    study = light_study(devices=devices)

    bodies = prolific_study_bodies(study=study, group="each")

    assert [body["device_compatibility"] for body in bodies] == [sent, sent]


def test_a_study_stored_before_devices_sends_desktop_and_tablet(prolific_site):
    (body,) = prolific_study_bodies(study=light_study(), group=None)

    assert body["device_compatibility"] == ["desktop", "tablet"]


def test_prolific_publish_sends_the_packages_devices_to_prolific(prolific_site, fake_prolific, tmp_path):  # noqa: F811
    from io import StringIO

    from django.core.management import call_command

    study = imported(tmp_path, slug="phones-welcome", devices=["mobile", "tablet", "desktop"], estimated_minutes=15)
    study.package["reward"] = "£2.00"
    Study.objects.filter(pk=study.pk).update(status="live", package=study.package)

    call_command("prolific_publish", "phones-welcome", "--group", "american", "--publish", stdout=StringIO())

    sent = fake_prolific.calls("POST", "/studies/")[0]["body"]
    assert sent["device_compatibility"] == ["desktop", "tablet", "mobile"]
    assert (
        fake_prolific.studies[ProlificStudy.objects.get().prolific_id]["device_compatibility"]
        == sent["device_compatibility"]
    )


def test_a_device_prolific_does_not_know_never_reaches_it(prolific_site, fake_prolific):  # noqa: F811
    # Set in the database by hand, past the package's check; the fake answers 400 to such a value, as Prolific would.
    study = light_study(devices=["phone", "mobile"])

    (row,) = prolific_study_create(study=study, group="american", filters=[], user=None)

    assert row.request_body["device_compatibility"] == ["mobile"]
    assert fake_prolific.studies[row.prolific_id]["device_compatibility"] == ["mobile"]


def test_the_api_gives_the_studys_devices(tmp_path, researcher):
    from rest_framework.test import APIClient

    imported(tmp_path, slug="api-phones", devices=["mobile"])
    client = APIClient()
    client.force_authenticate(researcher)

    detail = client.get(reverse("study_api:study-detail", args=["api-phones"])).json()
    listed = client.get(reverse("study_api:study-list")).json()

    assert detail["devices"] == ["mobile"]
    assert [study["devices"] for study in listed] == [["mobile"]]
