"""The study's long-format CSV (the results page's download, the API, `study_results --format csv`)
neutralises what a spreadsheet would run as a formula: Prolific ids arrive in a URL anyone can type,
and artwork and question ids come from the package."""

import pytest
from django.urls import reverse

from study.models import Artwork, Participant, Question
from tests.csv_checks import PAYLOADS, assert_no_formula, export_texts

from .factories import make_study, package_dict
from .test_results import _media, build_scenario  # noqa: F401  (_media: by name)

pytestmark = pytest.mark.django_db


@pytest.fixture
def planted(_media):  # noqa: F811
    study = make_study(package_dict(slug="planted"))
    build_scenario(study)
    for pid, payload in zip(("P1", "P2", "P3", "P4"), PAYLOADS, strict=False):
        Participant.objects.filter(study=study, prolific_pid=pid).update(prolific_pid=payload)
    Artwork.objects.filter(study=study, key="am1").update(key=PAYLOADS[4])
    question = Question.objects.filter(artwork__study=study, artwork__key="cn1").order_by("id").first()
    Question.objects.filter(pk=question.pk).update(key=PAYLOADS[5])
    return study


def test_it_neutralises_the_responses_on_the_page_the_api_and_the_command(planted, researcher_client):
    urls = [
        reverse("study:export", args=[planted.slug]) + "?raw_pid=1",
        reverse("study_api:responses", args=[planted.slug]) + "?format=csv&raw_pid=true",
    ]
    texts = export_texts(researcher_client, urls, ("study_results", planted.slug, "--format", "csv", "--raw-pid"), {})
    for text in texts:
        assert_no_formula(text)
    assert texts[0] == texts[1] == texts[2]
