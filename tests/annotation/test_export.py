import io
import json

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Dataset
from annotation.services import ExportError, dataset_create, dataset_export, expression_import

from .factories import make_dataset

pytestmark = pytest.mark.django_db

SOURCE = (
    "id,expression,explanation,kind,traits,theme,english_gloss\n"
    'v1,Chưa đủ lông đủ cánh,"Còn non nớt, chưa tự lập",idiom,"pragmatic,literal",criticism,not fully fledged\n'
    "v2,Nước chảy đá mòn,Kiên trì thì việc khó cũng xong,proverb,,life_lessons,\n"
)


@pytest.fixture
def glossed_dataset(db):
    """Two labelled expressions with an ``english_gloss`` column kept as metadata."""
    return make_dataset(name="Xuất", csv=SOURCE, filename="s.csv")


def test_it_exports_csv_that_pandas_reads_without_options(glossed_dataset, tmp_path):
    out = tmp_path / "out.csv"
    call_command("export_dataset", "Xuất", "--format", "csv", "--out", str(out), stderr=io.StringIO())
    frame = pd.read_csv(out)
    assert list(frame.columns) == [
        "id",
        "expression",
        "explanation",
        "kind",
        "source",
        "traits",
        "theme",
        "english_gloss",
    ]
    first = frame.iloc[0]
    assert first["expression"] == "Chưa đủ lông đủ cánh"
    assert first["explanation"] == "Còn non nớt, chưa tự lập"
    assert first["traits"] == "literal,pragmatic"  # ascending trait number, as the paper's prompt expects
    assert first["theme"] == "criticism" and first["english_gloss"] == "not fully fledged"


def test_it_exports_jsonl_that_pandas_reads_with_lines(glossed_dataset):
    out = io.StringIO()
    call_command("export_dataset", "Xuất", "--format", "jsonl", stdout=out)
    frame = pd.read_json(io.StringIO(out.getvalue()), lines=True)
    assert len(frame) == 2
    assert frame.iloc[0]["traits"] == ["literal", "pragmatic"]
    assert frame.iloc[1]["traits"] == [] and frame.iloc[1]["theme"] == "life_lessons"
    assert json.loads(out.getvalue().splitlines()[0])["expression"] == "Chưa đủ lông đủ cánh"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_it_round_trips_an_export_through_the_import(glossed_dataset, fmt):
    text = dataset_export(dataset=glossed_dataset, fmt=fmt)
    report = expression_import(dataset_name="Copy", filename=f"copy.{fmt}", content=text.encode())
    assert report.created == 2 and not report.errors
    assert dataset_export(dataset=report_dataset("Copy"), fmt=fmt) == text


def report_dataset(name):
    return Dataset.objects.get(name=name)


def test_it_exports_an_empty_dataset_as_a_header_only_csv():
    empty = dataset_create(name="Empty")
    assert dataset_export(dataset=empty, fmt="csv").strip() == "id,expression,explanation,kind,source,traits,theme"
    assert dataset_export(dataset=empty, fmt="jsonl") == ""


def test_it_refuses_unknown_formats_and_datasets(glossed_dataset):
    with pytest.raises(ExportError):
        dataset_export(dataset=glossed_dataset, fmt="xml")
    with pytest.raises(CommandError, match="no dataset named 'Nope'"):
        call_command("export_dataset", "Nope", stdout=io.StringIO())
