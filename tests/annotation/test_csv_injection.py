"""Every CSV the annotation app writes (dataset and version exports, agreement statistics, annotator
quality) neutralises text a spreadsheet would run as a formula, keeps numbers as numbers, and the
dataset import reads its own export back as it was."""

import pytest
from django.urls import reverse

from annotation.models import Dataset
from annotation.services import dataset_export, expression_import
from tests.csv_checks import PAYLOADS, assert_no_formula, csv_cells, export_texts

from .factories import make_annotator, make_dataset, make_round, make_version, numbered_csv

pytestmark = pytest.mark.django_db

# The annotators' usernames: what the quality CSV's a and b columns hold.
ANNOTATOR_NAMES = (PAYLOADS[0], PAYLOADS[3])


@pytest.fixture
def planted():
    """A dataset whose expressions, explanations and metadata (a key too) are formulas, with a negative
    number beside them; a round on it annotated by two users named like formulas, and its version."""
    dataset = make_dataset(name="Planted", csv=numbered_csv(len(PAYLOADS)))
    for expression, payload in zip(dataset.expressions.order_by("id"), PAYLOADS, strict=True):
        expression.text = payload
        expression.explanation = payload
        expression.metadata = {"=cmd": payload, "weight": -0.12}
        expression.save()
    a, b = (make_annotator(name) for name in ANNOTATOR_NAMES)
    round_ = make_round(dataset, [a, b], name="Planted round")
    version = make_version(round_, a, b)
    return dataset, round_, version


@pytest.mark.parametrize(
    ("which", "page", "api", "command"),
    [
        (0, "annotation:dataset_export", "api:dataset-export", "export_dataset"),
        (2, "annotation:version_export", "api:version_export", "export_version"),
    ],
)
def test_it_neutralises_the_dataset_and_version_exports_everywhere(
    planted, researcher_client, which, page, api, command
):
    exported = planted[which]
    urls = [reverse(page, args=[exported.pk]), reverse(api, args=[exported.pk])]
    texts = export_texts(researcher_client, urls, (command, exported.name, "--format", "csv"))
    for text in texts:
        cells = assert_no_formula(text, planted=(*PAYLOADS, "=cmd"))
        # A number stays a number: pandas and R read -0.12, not the text "'-0.12".
        assert "-0.12" in cells and "'-0.12" not in cells
    assert texts[0] == texts[1] == texts[2]


def test_it_neutralises_the_agreement_statistics_and_the_annotator_quality(planted, researcher_client):
    _dataset, round_, _version = planted
    stats = export_texts(
        researcher_client,
        [reverse("annotation:round_stats", args=[round_.pk])],
        ("agreement_stats", "--round", round_.name, "--format", "csv", "--resamples", "20"),
    )
    for text in stats:
        assert_no_formula(text, planted=())
    (quality,) = export_texts(researcher_client, [], ("annotator_quality", "--round", round_.name, "--format", "csv"))
    assert_no_formula(quality, planted=ANNOTATOR_NAMES)


def test_it_reads_its_own_neutralised_export_back_as_it_was(planted):
    dataset, _round, _version = planted
    # What the importer strips (whitespace) aside: formulas, and a text already starting with an apostrophe.
    texts = ['=HYPERLINK("http://x","y")', "+1", "-2+3", "@SUM(A1)", "'=already quoted", "''+twice"]
    for expression, text in zip(dataset.expressions.order_by("id"), texts, strict=True):
        expression.text = text
        # A carriage return inside a cell: the csv module left it bare, and the import split the row there.
        expression.explanation = f"{text}\rsecond line"
        expression.save(update_fields=["text", "explanation"])
    exported = dataset_export(dataset=dataset, fmt="csv")
    assert "'''+twice" in csv_cells(exported)
    report = expression_import(dataset_name="Copy", filename="copy.csv", content=exported.encode())
    assert report.created == len(texts) and not report.errors
    copy = Dataset.objects.get(name="Copy")
    assert [e.text for e in copy.expressions.order_by("id")] == texts
    assert [e.explanation for e in copy.expressions.order_by("id")] == [f"{text}\rsecond line" for text in texts]
    # The metadata too, header included; the import keeps every cell as text, and a negative number
    # as text goes out as the number it was.
    assert [e.metadata for e in copy.expressions.order_by("id")] == [
        {"=cmd": payload, "weight": "-0.12"} for payload in PAYLOADS
    ]
    assert dataset_export(dataset=copy, fmt="csv") == exported
