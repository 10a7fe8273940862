"""The artwork app's CSVs: the Table 1 report (page, API, command) keeps its negative t statistics as
numbers and holds no formula; the demo's artworks.csv goes through the same writer; an artworks.csv
the app wrote imports back with the titles as they were."""

import pytest
from django.urls import reverse

from artworks.demo import demo_csv
from artworks.services.imports import artworks_import
from core.csv_writer import csv_text
from tests.artworks.report_factories import make_pipeline_run
from tests.csv_checks import PAYLOADS, assert_no_formula, csv_cells, export_texts

from .test_import import make_folder, media  # noqa: F401  (media: by name)
from .test_report import WORSE

pytestmark = pytest.mark.django_db


def test_it_keeps_the_reports_negative_t_as_a_number_and_writes_no_formula(researcher_client, media):  # noqa: F811
    run = make_pipeline_run(correct=WORSE)
    urls = [reverse("artworks:report", args=[run.pk]), reverse("artworks-api:report", args=[run.pk])]
    texts = export_texts(researcher_client, urls, ("artwork_report", str(run.pk), "--format", "csv"))
    for text in texts:
        cells = assert_no_formula(text, planted=())
        negative = [cell for cell in cells if cell.startswith("-")]
        assert negative and all(float(cell) < 0 for cell in negative)
    assert texts[0] == texts[1] == texts[2]


def test_it_writes_the_demo_collection_through_the_neutralising_writer():
    assert_no_formula(demo_csv().decode(), planted=())


def test_it_imports_an_artworks_csv_it_wrote_with_the_titles_as_they_were(tmp_path, media):  # noqa: F811
    titles = [payload for payload in PAYLOADS if payload.strip() == payload]
    rows = [[f"a-{n}", title, "", "", "chinese", "", "images/a.png"] for n, title in enumerate(titles)]
    text = csv_text(["id", "title", "artist", "date", "culture", "comment", "image"], rows)
    assert_no_formula(text, planted=titles)
    assert "'-2+3" in csv_cells(text)
    collection = artworks_import(name="Planted", source=make_folder(tmp_path / "src", text))
    assert [artwork.title for artwork in collection.artworks.order_by("position")] == titles
