"""Dataset exports over the REST API: CSV and JSON Lines that pandas and the import read back."""

import io
import json

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Dataset
from annotation.services import dataset_create

from .api_helpers import NFC

pytestmark = pytest.mark.django_db


# --- Exports -----------------------------------------------------------------------


def test_it_exports_csv_that_pandas_reads(api_as, corpus):
    response = api_as("adjudicator").get(reverse("api:dataset-export", args=[corpus.pk]), {"format": "csv"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="ca-dao.csv"'
    frame = pd.read_csv(io.BytesIO(response.content), dtype=str, keep_default_na=False)
    assert list(frame.columns) == ["id", "expression", "explanation", "kind", "source", "traits", "theme", "note"]
    assert frame["expression"].tolist() == [NFC, "Nước chảy đá mòn", "Ăn quả nhớ kẻ trồng cây"]
    assert frame["traits"].tolist() == ["literal,pragmatic", "", "folk_knowledge"]
    assert frame.iloc[0]["explanation"] == "Còn non nớt, chưa tự lập" and frame.iloc[0]["note"] == "chim non"
    default = api_as("adjudicator").get(reverse("api:dataset-export", args=[corpus.pk]))
    assert default.status_code == 200 and default.content == response.content  # csv unless told otherwise


def test_it_exports_jsonl_that_pandas_reads(api_as, corpus):
    response = api_as("adjudicator").get(reverse("api:dataset-export", args=[corpus.pk]) + "?format=jsonl")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="ca-dao.jsonl"'
    frame = pd.read_json(io.BytesIO(response.content), lines=True, dtype=False)
    assert frame["id"].tolist() == ["v1", "v2", "v3"]
    assert frame["traits"].tolist() == [["literal", "pragmatic"], [], ["folk_knowledge"]]
    assert json.loads(response.content.decode().splitlines()[0])["expression"] == NFC


def test_it_names_an_export_file_after_a_vietnamese_dataset_name(api, researcher):
    dataset = dataset_create(name="Tục ngữ / Đạo đức", user=researcher)
    response = api.get(reverse("api:dataset-export", args=[dataset.pk]), {"format": "csv"})
    assert response.status_code == 200 and response.content.decode().startswith("id,expression,explanation")
    assert (
        response["Content-Disposition"]
        == "attachment; filename*=utf-8''t%E1%BB%A5c-ng%E1%BB%AF-%C4%91%E1%BA%A1o-%C4%91%E1%BB%A9c.csv"
    )


def test_it_answers_400_to_an_unknown_export_format_and_404_to_a_missing_dataset(api, corpus):
    response = api.get(reverse("api:dataset-export", args=[corpus.pk]), {"format": "xml"})
    assert response.status_code == 400
    assert response.json() == {"format": ["“xml” is not an export format; use one of csv, jsonl."]}
    missing = api.get(reverse("api:dataset-export", args=[999999]), {"format": "csv"})
    assert missing.status_code == 404 and missing.json() == {"detail": "No Dataset matches the given query."}


def test_it_round_trips_an_export_through_the_import_api(api, corpus):
    exported = api.get(reverse("api:dataset-export", args=[corpus.pk]), {"format": "csv"}).content
    upload = SimpleUploadedFile("ca-dao.csv", exported, content_type="text/csv")
    response = api.post(reverse("api:import"), {"dataset": "Bản sao", "file": upload}, format="multipart")
    assert response.status_code == 201 and response.json()["created"] == 3

    def shape(dataset):
        return [
            (
                e.text,
                e.explanation,
                e.kind,
                e.external_id,
                e.theme.code,
                sorted(t.code for t in e.traits.all()),
                e.metadata,
            )
            for e in dataset.expressions.order_by("id")
        ]

    assert shape(Dataset.objects.get(name="Bản sao")) == shape(corpus)
