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
