"""One date format per language, always with the time zone; machine-readable outputs keep ISO 8601."""

import datetime as dt
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import formats, timezone, translation

from tests.annotation.test_agreement import build_round

MOMENT = dt.datetime(2026, 12, 1, 13, 5, tzinfo=dt.UTC)
TEMPLATES = Path(settings.BASE_DIR) / "templates"


@pytest.mark.parametrize(
    ("language", "expected_datetime", "expected_date"),
    [
        ("en", "2026-12-01 13:05 UTC", "2026-12-01"),
        ("vi", "01/12/2026 13:05 UTC", "01/12/2026"),
        ("zh-hans", "2026-12-01 13:05 UTC", "2026-12-01"),
    ],
)
def test_it_formats_dates_one_way_per_language_with_the_zone(language, expected_datetime, expected_date):
    with translation.override(language), timezone.override("UTC"):
        moment = timezone.localtime(MOMENT)
        assert formats.date_format(moment, "DATETIME_FORMAT") == expected_datetime
        assert formats.date_format(moment, "SHORT_DATETIME_FORMAT") == expected_datetime
        assert formats.date_format(moment.date(), "DATE_FORMAT") == expected_date


def test_it_shows_datetimes_in_templates_only_through_the_named_formats():
    """A literal format ("Y-m-d H:i") would bring back a second style; 'c' feeds <time datetime> (ISO 8601)."""
    allowed = {"c", "DATETIME_FORMAT", "DATE_FORMAT"}
    found = {
        (path.relative_to(TEMPLATES).as_posix(), fmt)
        for path in TEMPLATES.rglob("*.html")
        for fmt in re.findall(r"\|date:[\"']([^\"']*)[\"']", path.read_text())
    }
    assert found, "the scan found no |date filter at all"
    assert {entry for entry in found if entry[1] not in allowed} == set()


@pytest.mark.django_db
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_it_shows_the_round_page_dates_in_the_readers_language(researcher_client, annotator_a, annotator_b):
    round_, _labels = build_round(annotators=[annotator_a, annotator_b], name="Vòng ngày", n_items=2)
    type(round_).objects.filter(pk=round_.pk).update(created_at=MOMENT)
    url = reverse("annotation:round_detail", args=[round_.pk])
    for language, shown in (("en", "2026-12-01 13:05 UTC"), ("vi", "01/12/2026 13:05 UTC")):
        researcher_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
        html = researcher_client.get(url).content.decode()
        assert f'<time datetime="2026-12-01T13:05:00+00:00">{shown}</time>' in html, language


def test_it_reads_iso_text_kept_in_a_report_as_a_moment_for_the_date_filter():
    from core.templatetags.vivid import as_datetime

    assert as_datetime("2026-12-01T13:05:00.710295+00:00") == MOMENT.replace(microsecond=710295)
    assert as_datetime("2026-12-01T13:05:00") == MOMENT  # stored without a zone: UTC
    assert as_datetime(MOMENT) is MOMENT
    assert as_datetime("not a date") is None and as_datetime("2026-13-45T99:00") is None and as_datetime(None) is None


@pytest.mark.django_db
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_it_shows_the_quality_tabs_fast_answers_in_the_readers_format(researcher_client, annotator_a, annotator_b):
    """The Quality tab's report keeps each answer's moment as ISO text: the page reads it back as a date."""
    from annotation.models import Assignment

    round_, _labels = build_round(annotators=[annotator_a, annotator_b], name="Vòng nhanh", n_items=4)
    Assignment.objects.filter(item__round=round_).update(seconds=0.5, submitted_at=MOMENT)
    url = reverse("annotation:round_quality", args=[round_.pk])
    for language, shown in (("en", "2026-12-01 13:05 UTC"), ("vi", "01/12/2026 13:05 UTC")):
        researcher_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
        html = researcher_client.get(url).content.decode()
        fast = html[html.index('data-testid="fast-items"') :]
        assert f'<time datetime="2026-12-01T13:05:00+00:00">{shown}</time>' in fast, language
        assert "2026-12-01T13:05:00" not in fast.replace('datetime="2026-12-01T13:05:00+00:00"', ""), language


@pytest.mark.django_db
def test_it_says_when_the_study_results_were_computed_in_the_readers_format(researcher_client, settings, tmp_path):
    from tests.site.demo_world import visible_text
    from tests.study.factories import make_study
    from tests.study.test_flow import take

    settings.MEDIA_ROOT = tmp_path / "media"
    study = make_study()
    take(study, "PIDDATE1")
    url = reverse("study:results", args=[study.slug])
    for language, pattern in (("en", r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"), ("vi", r"\d\d/\d\d/\d{4} \d\d:\d\d UTC")):
        researcher_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
        html = researcher_client.get(url).content.decode()
        text = " ".join(visible_text(html))
        assert re.search(rf"{pattern}\.", text), language
        assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text), language
