"""`POST /api/imports/`: a file of expressions imported all or nothing, dry runs, duplicates and refusals."""

import pytest
from django.urls import reverse

from annotation.models import Dataset, Expression

from .api_helpers import NFC, NFD, csv_upload, snapshot

pytestmark = pytest.mark.django_db


# --- Imports ---------------------------------------------------------------------


def test_it_imports_a_csv_with_a_bom_and_a_column_map(api, researcher):
    upload = csv_upload(
        f"Idiom,Meaning,Vùng\n{NFD},Non nớt,Bắc Bộ\nĂn cháo đá bát,Vô ơn,\n", name="thanh-ngu.csv", bom=True
    )
    response = api.post(
        reverse("api:import"),
        {"dataset": "Thành ngữ", "file": upload, "map": "expression=Idiom,explanation=Meaning"},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    report = response.json()
    assert report["ok"] is True and report["dry_run"] is False and report["errors"] == []
    assert (report["rows"], report["created"], report["skipped_duplicates"]) == (2, 2, 0)
    assert report["columns"] == ["Idiom", "Meaning", "Vùng"] and report["metadata_columns"] == ["Vùng"]
    assert report["summary"] == "created 2, skipped_duplicates 0" and report["filename"] == "thanh-ngu.csv"
    dataset = Dataset.objects.get(name="Thành ngữ")
    assert dataset.created_by == researcher
    texts = list(dataset.expressions.order_by("id").values_list("text", "metadata"))
    assert texts == [(NFC, {"Vùng": "Bắc Bộ"}), ("Ăn cháo đá bát", {})]


def test_it_reports_duplicates_of_an_import_and_adds_to_an_existing_dataset(api, corpus):
    upload = csv_upload(f"expression,explanation\n{NFD},Lặp\nMột mới,Mới\n")
    response = api.post(reverse("api:import"), {"dataset": "Ca dao", "file": upload}, format="multipart")
    assert response.status_code == 201
    report = response.json()
    assert (report["created"], report["skipped_duplicates"]) == (1, 1)
    assert report["duplicates"] == [{"row": 2, "expression": NFC, "reason": "already in the dataset"}]
    assert corpus.expressions.count() == 4


@pytest.mark.parametrize("dataset_name", ["Ca dao", "Chưa có"])
def test_it_refuses_an_invalid_file_naming_row_and_column_and_writes_nothing(api, corpus, dataset_name):
    upload = csv_upload("expression,explanation,traits\nHợp lệ,Tốt,\nThiếu giải thích,,\nSai nét,Có,nope\n")
    datasets, expressions = Dataset.objects.count(), Expression.objects.count()
    before = snapshot()
    response = api.post(reverse("api:import"), {"dataset": dataset_name, "file": upload}, format="multipart")
    assert response.status_code == 400
    report = response.json()
    assert report["ok"] is False and report["created"] == 0
    located = [(e["row"], e["column"]) for e in report["errors"]]
    assert located == [(3, "explanation"), (4, "traits")]
    assert report["errors"][0]["text"] == "row 3, column 'explanation': the explanation is empty"
    assert "unknown trait 'nope'" in report["errors"][1]["message"]
    assert (Dataset.objects.count(), Expression.objects.count()) == (datasets, expressions)
    assert snapshot() == before


def test_it_writes_nothing_on_a_dry_run(api, corpus):
    before = snapshot()
    upload = csv_upload("expression,explanation,theme\nMột,Giải thích một,love\nHai,Giải thích hai,\n")
    response = api.post(
        reverse("api:import"), {"dataset": "Thử", "file": upload, "dry_run": "true"}, format="multipart"
    )
    assert response.status_code == 200
    report = response.json()
    assert report["dry_run"] is True and report["created"] == 2 and report["ok"] is True
    assert [(p["row"], p["expression"], p["theme"]) for p in report["preview"]] == [(2, "Một", "love"), (3, "Hai", "")]
    assert snapshot() == before and not Dataset.objects.filter(name="Thử").exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"map": "expression"}, "map"),
        ({"map": "colour=Màu"}, "map"),
        ({"file": None}, "file"),
        ({"dataset": ""}, "dataset"),
        ({"dry_run": "maybe"}, "dry_run"),
    ],
)
def test_it_answers_400_to_a_malformed_import_request(api, data, field):
    payload = {"dataset": "Nhập", "file": csv_upload("expression,explanation\nA,B\n"), **data}
    payload = {k: v for k, v in payload.items() if v is not None}
    response = api.post(reverse("api:import"), payload, format="multipart")
    assert response.status_code == 400 and list(response.json()) == [field]
    assert not Dataset.objects.exists() and not Expression.objects.exists()


def test_it_reports_an_unsupported_file_as_an_import_error(api):
    response = api.post(
        reverse("api:import"), {"dataset": "Nhập", "file": csv_upload("a,b\n", name="notes.txt")}, format="multipart"
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["row"] is None and "supported are .csv, .tsv, .json, .jsonl, .xlsx" in error["message"]
    assert not Dataset.objects.exists()


def test_it_refuses_an_import_over_the_size_limit_before_reading_it(api, settings):
    settings.VIVID_IMPORT_MAX_BYTES = 1024
    upload = csv_upload("expression,explanation\n" + "Dài,Rất dài\n" * 200)
    response = api.post(reverse("api:import"), {"dataset": "Nhập", "file": upload}, format="multipart")
    assert response.status_code == 400 and "the limit is 1,024 bytes" in response.json()["file"][0]
    assert not Dataset.objects.exists()
