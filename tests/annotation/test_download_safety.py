"""Exports of user data are served as sandboxed attachments: their text is people's, not the app's."""

import pytest
from django.urls import reverse

from study.models import StudyStatus
from tests.study.factories import make_study, package_dict

from .factories import api_client_for, make_dataset

pytestmark = pytest.mark.django_db

POLICY = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"
# A cell a browser would run as a page if the export were sniffed as HTML.
HOSTILE = "<script>alert(document.domain)</script>"


def assert_sandboxed_attachment(response, content_type: str):
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert response["Content-Disposition"].startswith("attachment; ")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == POLICY


@pytest.fixture
def hostile_dataset(db):
    """One expression a browser would run as a script if an export were sniffed as HTML."""
    return make_dataset(name="Hostile", csv=f"expression,explanation\n{HOSTILE},x\n")


@pytest.mark.parametrize(
    "fmt, content_type", [("csv", "text/csv; charset=utf-8"), ("jsonl", "application/x-ndjson; charset=utf-8")]
)
def test_it_serves_a_dataset_export_as_a_sandboxed_attachment(
    researcher_client, researcher, hostile_dataset, fmt, content_type
):
    page = researcher_client.get(reverse("annotation:dataset_export", args=[hostile_dataset.pk]), {"format": fmt})
    answer = api_client_for(researcher, session=False).get(
        reverse("api:dataset-export", args=[hostile_dataset.pk]), {"format": fmt}
    )

    for response in (page, answer):
        assert_sandboxed_attachment(response, content_type)
        assert HOSTILE in response.content.decode()


def test_it_serves_the_study_responses_export_as_a_sandboxed_attachment(researcher_client):
    study = make_study(package_dict(slug="exported"), status=StudyStatus.LIVE)

    response = researcher_client.get(reverse("study:export", args=[study.slug]))

    assert_sandboxed_attachment(response, "text/csv; charset=utf-8")
