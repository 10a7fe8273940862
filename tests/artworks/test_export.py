"""The study package export of an artwork pipeline run: the exact study.json format, images, QC items, warnings."""

import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image

from artworks.models import ArtworkQuestion, SpeakerCandidate
from artworks.services.export import ArtworkExportError, artwork_study_package
from tests.artworks.report_factories import BASE_SCORE, make_pipeline_run

pytestmark = pytest.mark.django_db

TOP_KEYS = {
    "slug",
    "title",
    "groups",
    "artworks_per_participant",
    "qc_per_participant",
    "qc_threshold",
    "quota_per_group",
    "completion_code",
    "screenout_code",
    "no_consent_code",
    "similarity_threshold",
    "artworks",
}
ARTWORK_KEYS = {"id", "title", "artist", "date", "culture", "image", "qc", "elements", "questions", "descriptions"}


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_it_writes_a_folder_in_the_study_package_format(tmp_path):
    run = make_pipeline_run(per_culture=2)
    path = artwork_study_package(run=run, out=tmp_path / "package")
    assert path == tmp_path / "package" and path.warnings == []
    data = json.loads((path / "study.json").read_text(encoding="utf-8"))
    assert set(data) == TOP_KEYS
    assert data["slug"] == f"demo-artworks-run-{run.pk}"
    assert data["groups"] == ["american", "chinese"]
    assert data["artworks_per_participant"] == 6  # 4 artworks + 2 QC, under the cap of 12
    assert (data["qc_per_participant"], data["qc_threshold"], data["quota_per_group"]) == (2, 0.75, 10)
    assert data["similarity_threshold"] == 0.8
    codes = [data["completion_code"], data["screenout_code"], data["no_consent_code"]]
    assert len(set(codes)) == 3 and all(code.isupper() and code.isalnum() for code in codes)

    regular = [a for a in data["artworks"] if not a["qc"]]
    assert [a["id"] for a in regular] == ["am1", "am2", "cn1", "cn2"]
    am1 = regular[0]
    assert set(am1) == ARTWORK_KEYS
    assert (am1["title"], am1["artist"], am1["date"], am1["culture"]) == (
        "Artwork am1",
        "A painter",
        "1900",
        "american",
    )
    assert am1["image"] == "images/am1.png"
    with Image.open(path / am1["image"]) as image:
        assert image.format == "PNG"
    assert am1["elements"] == [
        {"name": "am1 symbol", "is_symbol": True},
        {"name": "am1 tree", "is_symbol": False},
        {"name": "am1 river", "is_symbol": False},
    ]
    assert am1["questions"][0] == {
        "id": "am1-q1",
        "symbol": "am1 symbol",
        "type": "attuned",
        "question": "What does the am1 symbol mean?",
        "answer": "Luck",
        "distractors": ["Grief", "War", "Harvest", "Winter", "Silence"],
    }
    assert [q["type"] for q in am1["questions"]] == ["attuned", "agnostic", "agnostic"]
    descriptions = {d["id"]: d for d in am1["descriptions"]}
    assert set(descriptions) == {
        "am1-american-base",
        "am1-american-pragmatic",
        "am1-chinese-base",
        "am1-chinese-pragmatic",
    }
    pragmatic = descriptions["am1-chinese-pragmatic"]
    assert pragmatic == {
        "id": "am1-chinese-pragmatic",
        "speaker": "pragmatic",
        "listener": "chinese",
        "model": "speaker-vlm",
        "text": "Pragmatic sample 1 of am1 for the chinese listener. The am1 symbol means luck.",
        "self_eval_score": 0.9,
    }
    assert descriptions["am1-american-base"]["self_eval_score"] == BASE_SCORE


def test_it_appends_two_instructed_response_qc_artworks(tmp_path):
    path = artwork_study_package(run=make_pipeline_run(per_culture=1), out=tmp_path / "package")
    data = json.loads((path / "study.json").read_text(encoding="utf-8"))
    qc = [a for a in data["artworks"] if a["qc"]]
    assert len(qc) == 2 and {a["culture"] for a in qc} == {"american", "chinese"}
    for artwork in qc:
        assert artwork["descriptions"] == [] and artwork["elements"]
        (question,) = artwork["questions"]
        assert question["type"] == "agnostic" and len(set(question["distractors"])) == 5
        assert f"choose '{question['answer']}'" in question["question"]
        assert question["answer"] not in question["distractors"]
        with Image.open(path / artwork["image"]) as image:
            assert image.format == "PNG"


def test_it_writes_a_zip_when_the_name_ends_with_zip(tmp_path):
    run = make_pipeline_run(per_culture=1)
    path = artwork_study_package(run=run, out=tmp_path / "out" / "package.zip")
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        data = json.loads(archive.read("study.json"))
    assert {"study.json", "images/am1.png", "images/cn1.png", "images/qc-1.png", "images/qc-2.png"} <= names
    assert data["artworks_per_participant"] == 4


def test_it_uses_self_eval_score_null_for_a_base_description_without_a_score(tmp_path):
    run = make_pipeline_run(per_culture=1)
    SpeakerCandidate.objects.filter(run=run, speaker="base").update(listener_score=None)
    data = json.loads((artwork_study_package(run=run, out=tmp_path / "p") / "study.json").read_text())
    scores = {d["id"]: d["self_eval_score"] for a in data["artworks"] for d in a["descriptions"]}
    assert scores["am1-american-base"] is None and scores["am1-american-pragmatic"] == 0.9


def test_it_leaves_out_artworks_missing_a_description_or_questions_with_warnings(tmp_path):
    run = make_pipeline_run(per_culture=2)
    SpeakerCandidate.objects.filter(run=run, artwork__key="am2", group="chinese", speaker="pragmatic").update(
        chosen=False
    )
    ArtworkQuestion.objects.filter(artwork__key="cn2").delete()
    path = artwork_study_package(run=run, out=tmp_path / "package")
    data = json.loads((path / "study.json").read_text())
    assert [a["id"] for a in data["artworks"] if not a["qc"]] == ["am1", "cn1"]
    assert data["artworks_per_participant"] == 4
    assert len(path.warnings) == 2
    assert "am2" in path.warnings[0] and "pragmatic" in path.warnings[0] and "chinese" in path.warnings[0]
    assert "cn2" in path.warnings[1] and "questions" in path.warnings[1]


def test_it_leaves_out_an_artwork_whose_question_lacks_five_distractors(tmp_path):
    run = make_pipeline_run(per_culture=1)
    ArtworkQuestion.objects.filter(artwork__key="am1", type="attuned").update(distractors=["Grief", "War"])
    path = artwork_study_package(run=run, out=tmp_path / "package")
    assert len(path.warnings) == 1 and "distractors" in path.warnings[0]


def test_it_refuses_when_no_artwork_remains(tmp_path):
    run = make_pipeline_run(per_culture=1)
    SpeakerCandidate.objects.filter(run=run, speaker="base").delete()
    with pytest.raises(ArtworkExportError) as caught:
        artwork_study_package(run=run, out=tmp_path / "package")
    assert "no base description" in " ".join(caught.value.messages)
    assert not (tmp_path / "package").exists()


def test_it_refuses_a_non_empty_folder(tmp_path):
    run = make_pipeline_run(per_culture=1)
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "other.txt").write_text("x")
    with pytest.raises(ArtworkExportError):
        artwork_study_package(run=run, out=tmp_path / "package")


def test_it_refuses_groups_the_study_app_does_not_know(tmp_path):
    run = make_pipeline_run(per_culture=1)
    run.groups = ["american", "martian"]
    run.save()
    with pytest.raises(ArtworkExportError, match="martian"):
        artwork_study_package(run=run, out=tmp_path / "package")


def test_it_prefixes_question_ids_when_two_artworks_share_one(tmp_path):
    run = make_pipeline_run(per_culture=1, unique_question_keys=False)
    data = json.loads((artwork_study_package(run=run, out=tmp_path / "p") / "study.json").read_text())
    ids = [q["id"] for a in data["artworks"] for q in a["questions"]]
    assert len(ids) == len(set(ids))
    assert "am1-q1" in ids and "cn1-q1" in ids


def test_it_exports_from_the_command_line(tmp_path):
    run = make_pipeline_run(per_culture=1)
    out, err = io.StringIO(), io.StringIO()
    call_command("export_study_package", str(run.pk), "--out", str(tmp_path / "pkg.zip"), stdout=out, stderr=err)
    assert out.getvalue().strip().splitlines()[-1] == str(tmp_path / "pkg.zip")
    assert zipfile.is_zipfile(tmp_path / "pkg.zip")
    with pytest.raises(CommandError):
        call_command("export_study_package", str(run.pk + 999), "--out", str(tmp_path / "x.zip"))


def test_it_downloads_the_package_as_a_zip_from_the_report_page(researcher_client):
    run = make_pipeline_run(per_culture=1)
    response = researcher_client.post(reverse("artworks:export", args=[run.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert f"demo-artworks-run-{run.pk}.zip" in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert json.loads(archive.read("study.json"))["slug"] == f"demo-artworks-run-{run.pk}"
    assert researcher_client.get(reverse("artworks:export", args=[run.pk])).status_code == 405


def test_it_shows_the_reason_when_the_package_cannot_be_exported(researcher_client):
    run = make_pipeline_run(per_culture=1)
    SpeakerCandidate.objects.filter(run=run).delete()
    response = researcher_client.post(reverse("artworks:export", args=[run.pk]), follow=True)
    assert response.status_code == 200
    assert "no base description" in response.content.decode()
