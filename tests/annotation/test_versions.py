"""Frozen versions: pages, export (CSV, JSONL, CLI) with provenance, pandas readability and immutability."""

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import DatasetVersion, DatasetVersionItem, Expression, ItemStatus
from annotation.services import (
    adjudication_remove,
    adjudication_resolve,
    assignment_submit,
    expression_update,
    round_lock,
    suggested_codes,
    version_freeze,
)
from annotation.services.exports import VERSION_COLUMNS as BASE_COLUMNS
from annotation.services.exports import version_export

from .factories import client_for, make_dataset, make_round

pytestmark = pytest.mark.django_db

CORPUS = (
    "id,expression,explanation,kind,source,english_gloss,note\n"
    'v1,Ăn cháo đá bát,"Vô ơn, bạc nghĩa",idiom,Thành ngữ,"Eat the porridge, kick the bowl",\n'
    "v2,Ếch ngồi đáy giếng,Hiểu biết hẹp,idiom,Thành ngữ,A frog in a well,chú thích\n"
    "v3,Tấc đất tấc vàng,Đất quý,proverb,Tục ngữ,An inch of land,\n"
    "v4,Xa mặt cách lòng,Xa nhau thì phai,idiom,,Far from the face,\n"
)
COLUMNS = [
    "id",
    "expression",
    "explanation",
    "kind",
    "source",
    "traits",
    "theme",
    "provenance",
    "english_gloss",
    "note",
]


@pytest.fixture
def version(annotator_a, annotator_b, adjudicator, researcher):
    # Metadata columns and sources the version must carry through; no gold labels, no suggestions.
    glossed = make_dataset(csv=CORPUS)
    round_ = make_round(glossed, [annotator_a, annotator_b], name="R", seed=3)
    plan = {  # external id: (theme of A, theme of B, traits)
        "v1": ("criticism", "criticism", ["pragmatic"]),
        "v2": ("criticism", "criticism", ["pragmatic", "literal"]),
        "v3": ("work_nature", "love", ["uncommon_vocabulary"]),
        "v4": ("love", "other", []),
    }
    for item in round_.items.select_related("expression"):
        theme_a, theme_b, traits = plan[item.expression.external_id]
        for assignment in item.assignments.select_related("annotator"):
            assert suggested_codes(item) == []
            theme = theme_a if assignment.annotator == annotator_a else theme_b
            assignment_submit(assignment=assignment, user=assignment.annotator, theme=theme, added_traits=traits)
    round_lock(round=round_)
    v3 = round_.items.get(expression__external_id="v3")
    adjudication_resolve(
        item=v3,
        user=adjudicator,
        traits=["uncommon_vocabulary", "folk_knowledge"],
        theme="work_nature",
        revision=v3.revision,
    )
    v4 = round_.items.get(expression__external_id="v4")
    adjudication_remove(item=v4, user=adjudicator, reason="inaccurate", revision=v4.revision)
    return version_freeze(round=round_, name="VIVID v1", user=researcher)


def test_it_exports_csv_with_the_foundation_columns_and_provenance_readable_by_pandas(version):
    frame = pd.read_csv(io.StringIO(version_export(version=version, fmt="csv")), dtype=str, keep_default_na=False)
    assert list(frame.columns) == COLUMNS
    rows = {row["id"]: row for row in frame.to_dict("records")}
    assert set(rows) == {"v1", "v2", "v3"}
    assert (
        rows["v1"]["explanation"] == "Vô ơn, bạc nghĩa"
        and rows["v1"]["english_gloss"] == "Eat the porridge, kick the bowl"
    )
    assert (rows["v1"]["traits"], rows["v1"]["theme"], rows["v1"]["provenance"]) == (
        "pragmatic",
        "criticism",
        "unanimous",
    )
    assert (rows["v2"]["traits"], rows["v2"]["note"]) == ("literal,pragmatic", "chú thích")
    assert (rows["v3"]["traits"], rows["v3"]["theme"], rows["v3"]["provenance"]) == (
        "uncommon_vocabulary,folk_knowledge",
        "work_nature",
        "adjudicated",
    )
    # Without any option pandas reads the same table.
    assert list(pd.read_csv(io.StringIO(version_export(version=version, fmt="csv"))).columns) == COLUMNS


def test_it_exports_jsonl_with_lists_of_traits_and_provenance(version):
    text = version_export(version=version, fmt="jsonl")
    records = [json.loads(line) for line in text.splitlines()]
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)
    by_id = {r["id"]: r for r in records}
    assert list(by_id["v2"]) == [
        "id",
        "expression",
        "explanation",
        "kind",
        "source",
        "traits",
        "theme",
        "provenance",
        "english_gloss",
        "note",
    ]
    assert by_id["v2"]["traits"] == ["literal", "pragmatic"] and by_id["v3"]["provenance"] == "adjudicated"
    frame = pd.read_json(io.StringIO(text), lines=True)
    assert len(frame) == 3 and set(frame["provenance"]) == {"unanimous", "adjudicated"}


def test_it_refuses_an_unknown_format(version):
    from annotation.services import ExportError

    with pytest.raises(ExportError):
        version_export(version=version, fmt="xlsx")


def test_it_keeps_the_export_unchanged_when_the_corpus_is_edited_later(version):
    before_csv, before_jsonl = version_export(version=version, fmt="csv"), version_export(version=version, fmt="jsonl")
    expression = Expression.objects.get(external_id="v1")
    expression_update(
        expression=expression,
        data={"text": "Đã sửa", "explanation": "Khác hẳn", "metadata": {"english_gloss": "changed"}},
    )
    Expression.objects.get(external_id="v2").traits.clear()
    assert version_export(version=version, fmt="csv") == before_csv
    assert version_export(version=version, fmt="jsonl") == before_jsonl


def test_it_serves_the_export_as_a_download_to_every_role(version, annotator_a, adjudicator, researcher):
    url = reverse("annotation:version_export", args=[version.pk])
    for user in (annotator_a, adjudicator, researcher):
        response = client_for(user).get(url + "?format=csv")
        assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
        assert "attachment" in response["Content-Disposition"] and "vivid-v1.csv" in response["Content-Disposition"]
        # Annotators get it without the labels (tests/annotation/test_blindness.py).
        assert response.content.decode() == version_export(version=version, fmt="csv", gold=user != annotator_a)
    response = client_for(researcher).get(url + "?format=jsonl")
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert client_for(researcher).get(url + "?format=xml").status_code == 400


def test_it_refuses_versions_to_anonymous_visitors_and_people_without_a_role(version, outsider):
    urls = [
        reverse("annotation:version_list"),
        reverse("annotation:version_detail", args=[version.pk]),
        reverse("annotation:version_export", args=[version.pk]) + "?format=csv",
    ]
    for url in urls:
        response = client_for().get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login"))
        assert client_for(outsider).get(url).status_code == 403


def test_it_lists_versions_and_shows_funnel_provenance_and_items(version, researcher, annotator_a):
    page = client_for(annotator_a).get(reverse("annotation:version_list"))
    assert page.status_code == 200 and "VIVID v1" in page.content.decode()
    response = client_for(researcher).get(reverse("annotation:version_detail", args=[version.pk]))
    html = response.content.decode()
    assert 'data-testid="provenance-unanimous">2 unanimous items' in html
    assert 'data-testid="provenance-adjudicated">1 adjudicated item<' in html
    assert 'data-stage="removed"' in html and 'data-stage="final"' in html
    assert "Ăn cháo đá bát" in html and "Xa mặt cách lòng" not in html
    assert "Uncommon vocabulary" in html or "uncommon" in html.lower()
    # Versions cannot be changed: nothing on the page posts.
    assert 'method="post"' not in html.split("<main", 1)[1]
    fragment = client_for(researcher).get(
        reverse("annotation:version_detail", args=[version.pk]), HTTP_HX_REQUEST="true"
    )
    assert "<html" not in fragment.content.decode() and "Ăn cháo đá bát" in fragment.content.decode()
    assert client_for(researcher).get(reverse("annotation:version_detail", args=[999])).status_code == 404


def test_it_offers_no_way_to_edit_or_delete_a_version(version, researcher):
    client = client_for(researcher)
    for url in (
        reverse("annotation:version_detail", args=[version.pk]),
        reverse("annotation:version_export", args=[version.pk]),
    ):
        assert client.post(url).status_code == 405
        assert client.delete(url).status_code == 405
    assert DatasetVersion.objects.count() == 1 and DatasetVersionItem.objects.count() == 3


def test_it_exports_a_version_from_the_command_line(version, tmp_path):
    out = io.StringIO()
    call_command("export_version", "VIVID v1", "--format", "jsonl", stdout=out)
    assert out.getvalue() == version_export(version=version, fmt="jsonl")
    target = tmp_path / "v1.csv"
    err = io.StringIO()
    call_command("export_version", "VIVID v1", "--format", "csv", "--out", str(target), stderr=err)
    assert "wrote 3 items" in err.getvalue()
    frame = pd.read_csv(target)
    assert list(frame.columns) == COLUMNS and len(frame) == 3
    with pytest.raises(CommandError, match="no version named 'nope'"):
        call_command("export_version", "nope")


def test_it_records_the_funnel_as_it_was_when_frozen(version):
    assert version.funnel == {
        "imported": 4,
        "in_round": 4,
        "reviewed_by_all": 4,
        "unanimous": 2,
        "needs_adjudication": 0,
        "adjudicated": 1,
        "removed": 1,
        "pending": 0,
        "undecided": 0,
        "final": 3,
    }
    assert set(BASE_COLUMNS) >= {"provenance"}
    assert version.round.items.filter(status=ItemStatus.REMOVED).count() == 1
