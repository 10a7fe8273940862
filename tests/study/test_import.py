"""Importing a study package: folders and zips, every validation error, all or nothing, the command."""

import copy
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from study.models import (
    Artwork,
    Description,
    DescriptionPair,
    Question,
    Study,
    StudyStatus,
    Term,
    TermSource,
    TermStatus,
)
from study.services.imports import StudyImportError, study_import
from study.text import split_sentences

from .factories import package_dict, png_bytes, write_package

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def media_files(settings) -> list[Path]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def zip_bytes(folder: Path, *, top: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{top}{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def assert_nothing_written(settings):
    assert Study.objects.count() == 0
    assert Artwork.objects.count() == Question.objects.count() == Description.objects.count() == 0
    assert DescriptionPair.objects.count() == Term.objects.count() == 0
    assert media_files(settings) == []


# --- A valid package ---------------------------------------------------------------------------


def test_it_imports_a_folder_with_every_row_and_image(tmp_path, researcher, settings):
    package = package_dict(slug="folder-study")
    folder = write_package(tmp_path / "pkg", package)

    study = study_import(source=folder, user=researcher)

    assert study.slug == "folder-study" and study.status == StudyStatus.DRAFT
    assert study.created_by == researcher
    assert study.package == package
    assert len(study.package_sha256) == 64
    assert study.groups == ["american", "chinese"] and study.quota_per_group == 10
    assert study.artworks.count() == 14 and study.artworks.filter(is_qc=True).count() == 2
    assert list(study.artworks.values_list("key", flat=True)) == [a["id"] for a in package["artworks"]]
    cn1 = study.artworks.get(key="cn1")
    assert cn1.culture == "chinese" and cn1.elements[0] == {"name": "cn1 symbol", "is_symbol": True}
    assert cn1.image.name == "study/folder-study/cn1.png"
    assert cn1.image.read() == (folder / "images/cn1.png").read_bytes()
    question = cn1.questions.get(key="cn1-q1")
    assert question.symbol == "cn1 symbol" and question.type == "attuned" and len(question.distractors) == 5
    assert Question.objects.filter(artwork__study=study).count() == 28
    # Two descriptions for each of two groups on the 12 regular artworks.
    assert Description.objects.filter(artwork__study=study).count() == 48
    description = cn1.descriptions.get(key="cn1-chinese-pragmatic")
    assert description.sentences == split_sentences(description.text) and len(description.sentences) == 3
    assert description.self_eval_score == 0.7
    pairs = DescriptionPair.objects.filter(artwork__study=study)
    assert pairs.count() == 24
    pair = pairs.get(artwork=cn1, listener="american")
    assert pair.base.key == "cn1-american-base" and pair.pragmatic.key == "cn1-american-pragmatic"
    assert pair.matches == [] and pair.computed_at is None
    terms = Term.objects.filter(artwork__study=study)
    assert terms.count() == 6
    assert set(terms.values_list("source", "status", "zh")) == {(TermSource.PACKAGE, TermStatus.CONFIRMED, "长寿")}
    assert len(media_files(settings)) == 14


def test_it_imports_a_zip_whose_files_sit_in_one_top_level_folder(tmp_path, settings):
    folder = write_package(tmp_path / "pkg", package_dict(slug="zipped"))
    path = tmp_path / "zipped.zip"
    path.write_bytes(zip_bytes(folder, top="zipped-study/"))

    study = study_import(source=path)

    assert study.slug == "zipped" and study.artworks.count() == 14
    assert study.artworks.get(key="am1").image.read() == png_bytes("am1")


@pytest.mark.parametrize("kind", ["bytes", "upload"])
def test_it_imports_zip_bytes_and_uploads_with_files_at_the_root(tmp_path, kind):
    folder = write_package(tmp_path / "pkg", package_dict(slug=f"root-{kind}"))
    data = zip_bytes(folder)
    source = data if kind == "bytes" else SimpleUploadedFile("study.zip", data, content_type="application/zip")

    study = study_import(source=source, filename="study.zip")

    assert study.slug == f"root-{kind}" and Artwork.objects.filter(study=study).count() == 14


def test_it_accepts_jpeg_webp_gif_and_svg_images_and_names_files_by_format(tmp_path):
    # An SVG is stored as the PNG drawn from it (tests/study/test_upload_safety.py).
    from PIL import Image

    package = package_dict(slug="formats")
    folder = write_package(tmp_path / "pkg", package)
    formats = {"am1": ("JPEG", "jpg"), "am2": ("WEBP", "webp"), "am3": ("GIF", "gif")}
    for artwork in package["artworks"]:
        if artwork["id"] in formats:
            image_format, extension = formats[artwork["id"]]
            artwork["image"] = f"images/{artwork['id']}.{extension}"
            Image.new("RGB", (8, 8), (200, 10, 10)).save(folder / artwork["image"], format=image_format)
        if artwork["id"] == "am4":
            artwork["image"] = "images/am4.svg"
            (folder / artwork["image"]).write_text(
                '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>'
            )
    (folder / "study.json").write_text(json.dumps(package))

    study = study_import(source=folder)

    names = dict(study.artworks.values_list("key", "image"))
    assert names["am1"].endswith("am1.jpg") and names["am2"].endswith("am2.webp")
    assert names["am3"].endswith("am3.gif") and names["am4"].endswith("am4.png")


def test_it_queues_the_preparation_once_the_study_is_committed(
    tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    from study.services import prep

    started = []
    monkeypatch.setattr(prep, "study_prepare_start", lambda *, study: started.append(study.slug))
    folder = write_package(tmp_path / "pkg", package_dict(slug="queued"))

    with django_capture_on_commit_callbacks(execute=True):
        study_import(source=folder)
        assert started == []
    assert started == ["queued"]

    started.clear()
    with django_capture_on_commit_callbacks(execute=True):
        study_import(source=write_package(tmp_path / "pkg2", package_dict(slug="not-queued")), start_prepare=False)
    assert started == []


def test_it_keeps_a_term_without_chinese_label_pending_for_the_lookup(tmp_path):
    package = package_dict(slug="pending-terms")
    package["artworks"][6]["terms"] = [{"term": "plum blossom", "zh": "", "wikidata": ""}]
    study = study_import(source=write_package(tmp_path / "pkg", package))
    term = Term.objects.get(artwork__study=study, term="plum blossom")
    assert term.status == TermStatus.PENDING and term.source == TermSource.PACKAGE


# --- Validation: every error names artwork and field, and nothing is written --------------------


def _artwork(package, key):
    return next(a for a in package["artworks"] if a["id"] == key)


def _set(path, value):
    """A mutation setting ``package[...path] = value``; an int step indexes a list, a str step an artwork id
    when it names one."""

    def mutate(package):
        target = package
        for step in path[:-1]:
            if isinstance(target, list) and isinstance(step, str):
                target = _artwork({"artworks": target}, step)
            else:
                target = target[step]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return mutate


_DELETE = object()

INVALID = [
    ("bad slug", _set(["slug"], "not a slug!"), "slug: “not a slug!” is not a valid slug"),
    ("reserved slug", _set(["slug"], "import"), "slug: “import” is reserved"),
    ("empty title", _set(["title"], " "), "title: must not be empty"),
    ("no groups", _set(["groups"], []), "groups: expected a non-empty list"),
    ("unknown group", _set(["groups"], ["american", "french"]), 'groups[1]: unknown group "french"'),
    (
        "zero per participant",
        _set(["artworks_per_participant"], 0),
        "artworks_per_participant: expected a positive integer, got 0",
    ),
    ("float quota", _set(["quota_per_group"], 2.5), "quota_per_group: expected a positive integer, got 2.5"),
    ("bool qc", _set(["qc_per_participant"], True), "qc_per_participant: expected a positive integer, got true"),
    ("qc threshold", _set(["qc_threshold"], 1.5), "qc_threshold: expected a number from 0 to 1, got 1.5"),
    (
        "similarity zero",
        _set(["similarity_threshold"], 0),
        "similarity_threshold: expected a number above 0 and at most 1, got 0",
    ),
    ("empty code", _set(["completion_code"], ""), "completion_code: must not be empty"),
    ("missing code", _set(["screenout_code"], _DELETE), "screenout_code: expected a string, got null"),
    ("same codes", _set(["no_consent_code"], "C0MPL3TE"), "completion_code, no_consent_code: the codes must differ"),
    ("no artworks", _set(["artworks"], []), "artworks: expected a non-empty list of artworks"),
    ("bad artwork id", _set(["artworks", 0, "id"], "a/b"), "artworks[0].id: expected a short id"),
    ("duplicate artwork", _set(["artworks", 1, "id"], "am1"), 'artwork "am1": the id is used by another artwork'),
    (
        "culture outside groups",
        _set(["artworks", "am1", "culture"], "french"),
        'artwork "am1", culture: expected one of the study\'s groups (american, chinese), got "french"',
    ),
    ("qc not bool", _set(["artworks", "am1", "qc"], "no"), 'artwork "am1", qc: expected true or false'),
    (
        "missing image",
        _set(["artworks", "cn3", "image"], "images/nope.png"),
        'artwork "cn3", image: “images/nope.png” is not in the package',
    ),
    (
        "image extension",
        _set(["artworks", "cn3", "image"], "study.json"),
        'artwork "cn3", image: “study.json” is not a PNG, JPEG, WebP, GIF or SVG file',
    ),
    (
        "absolute image",
        _set(["artworks", "cn3", "image"], "/etc/passwd.png"),
        'artwork "cn3", image: “/etc/passwd.png” is absolute',
    ),
    ("windows image", _set(["artworks", "cn3", "image"], "C:\\x.png"), 'artwork "cn3", image: “C:\\x.png” is absolute'),
    (
        "traversal image",
        _set(["artworks", "cn3", "image"], "images/../../outside.png"),
        'artwork "cn3", image: “images/../../outside.png” leaves the package folder',
    ),
    ("no elements", _set(["artworks", "cn3", "elements"], []), 'artwork "cn3", elements: expected a non-empty list'),
    (
        "duplicate element",
        _set(["artworks", "cn3", "elements", 2, "name"], "cn3 tree"),
        'artwork "cn3", elements[2].name: “cn3 tree” is listed twice',
    ),
    (
        "element is_symbol",
        _set(["artworks", "cn3", "elements", 1, "is_symbol"], "yes"),
        'artwork "cn3", elements[1].is_symbol: expected true or false',
    ),
    ("no questions", _set(["artworks", "cn3", "questions"], []), 'artwork "cn3", questions: expected a non-empty list'),
    (
        "four distractors",
        _set(["artworks", "cn3", "questions", 1, "distractors"], ["a", "b", "c", "d"]),
        'artwork "cn3", questions[1].distractors: expected 5 distinct strings, got 4',
    ),
    (
        "repeated distractor",
        _set(["artworks", "cn3", "questions", 1, "distractors"], ["a", "b", "c", "d", "a"]),
        'artwork "cn3", questions[1].distractors: expected 5 distinct strings, got 4',
    ),
    (
        "distractor is answer",
        _set(["artworks", "cn3", "questions", 1, "distractors"], ["a", "b", "c", "d", "cn3 blue"]),
        'artwork "cn3", questions[1].distractors: a distractor equals the answer',
    ),
    (
        "question type",
        _set(["artworks", "cn3", "questions", 0, "type"], "cultural"),
        'artwork "cn3", questions[0].type: expected attuned or agnostic, got "cultural"',
    ),
    (
        "symbol not an element",
        _set(["artworks", "cn3", "questions", 0, "symbol"], "dragon"),
        'artwork "cn3", questions[0].symbol: “dragon” is not one of the artwork\'s elements marked is_symbol',
    ),
    (
        "symbol not a symbol",
        _set(["artworks", "cn3", "questions", 0, "symbol"], "cn3 tree"),
        'artwork "cn3", questions[0].symbol: “cn3 tree” is not one of',
    ),
    (
        "duplicate question id",
        _set(["artworks", "cn3", "questions", 0, "id"], "cn2-q1"),
        'artwork "cn3", questions[0].id: “cn2-q1” is also used in artwork "cn2"',
    ),
    (
        "empty answer",
        _set(["artworks", "cn3", "questions", 0, "answer"], ""),
        'artwork "cn3", questions[0].answer: must not be empty',
    ),
    (
        "duplicate description id",
        _set(["artworks", "cn3", "descriptions", 0, "id"], "cn2-american-base"),
        'artwork "cn3", descriptions[0].id: “cn2-american-base” is also used in artwork "cn2"',
    ),
    (
        "speaker",
        _set(["artworks", "cn3", "descriptions", 0, "speaker"], "literal"),
        'artwork "cn3", descriptions[0].speaker: expected base or pragmatic, got "literal"',
    ),
    (
        "listener",
        _set(["artworks", "cn3", "descriptions", 0, "listener"], "french"),
        'artwork "cn3", descriptions[0].listener: expected one of the study\'s groups',
    ),
    (
        "empty text",
        _set(["artworks", "cn3", "descriptions", 0, "text"], ""),
        'artwork "cn3", descriptions[0].text: must not be empty',
    ),
    (
        "score",
        _set(["artworks", "cn3", "descriptions", 0, "self_eval_score"], "high"),
        'artwork "cn3", descriptions[0].self_eval_score: expected a number or null, got "high"',
    ),
    (
        "missing pragmatic",
        _set(["artworks", "cn3", "descriptions", 3, "speaker"], "base"),
        'artwork "cn3", descriptions: expected exactly one pragmatic description for the chinese group, got 0',
    ),
    (
        "no descriptions",
        _set(["artworks", "cn3", "descriptions"], []),
        'artwork "cn3", descriptions: expected exactly one base description for the american group, got 0',
    ),
    ("terms not a list", _set(["artworks", "cn3", "terms"], "lotus"), 'artwork "cn3", terms: expected a list'),
    (
        "term qid",
        _set(["artworks", "cn3", "terms", 0, "wikidata"], "lotus"),
        'artwork "cn3", terms[0].wikidata: expected a Wikidata id like Q1234',
    ),
    (
        "empty term",
        _set(["artworks", "cn3", "terms", 0, "term"], ""),
        'artwork "cn3", terms[0].term: must not be empty',
    ),
    (
        "too few qc",
        _set(["qc_per_participant"], 3),
        "artworks: qc_per_participant is 3 but the package has 2 QC artworks",
    ),
    (
        "too few regular",
        _set(["artworks_per_participant"], 20),
        "artworks: each participant sees 18 artworks that are not QC but the package has 12",
    ),
    (
        "qc as many as all",
        _set(["qc_per_participant"], 12),
        "qc_per_participant: must be smaller than artworks_per_participant (12)",
    ),
]


@pytest.mark.parametrize("mutate,expected", [case[1:] for case in INVALID], ids=[case[0] for case in INVALID])
def test_it_refuses_an_invalid_package_naming_artwork_and_field_and_writes_nothing(
    tmp_path, settings, mutate, expected
):
    package = package_dict(slug="broken")
    folder = write_package(tmp_path / "pkg", package)
    (tmp_path / "outside.png").write_bytes(png_bytes("outside"))
    broken = copy.deepcopy(package)
    mutate(broken)
    (folder / "study.json").write_text(json.dumps(broken, ensure_ascii=False), encoding="utf-8")

    with pytest.raises(StudyImportError) as caught:
        study_import(source=folder)

    assert any(expected in error for error in caught.value.errors), caught.value.errors
    assert isinstance(caught.value, ValueError)
    assert_nothing_written(settings)


def test_it_reports_every_error_at_once(tmp_path):
    package = package_dict(slug="many-errors")
    _artwork(package, "am2")["culture"] = "french"
    _artwork(package, "cn4")["questions"][1]["distractors"] = ["x"]
    package["qc_threshold"] = -1
    folder = write_package(tmp_path / "pkg", package)

    with pytest.raises(StudyImportError) as caught:
        study_import(source=folder)

    errors = caught.value.errors
    assert len(errors) == 3, errors
    assert errors[0].startswith("qc_threshold:")
    assert any(e.startswith('artwork "am2", culture:') for e in errors)
    assert any(
        e.startswith('artwork "cn4", questions[1].distractors: expected 5 distinct strings, got 1') for e in errors
    )


def test_it_lets_qc_artworks_go_without_descriptions_but_not_with_half_of_them(tmp_path, settings):
    package = package_dict(slug="qc-half")
    _artwork(package, "qc1")["descriptions"] = [copy.deepcopy(_artwork(package, "am1")["descriptions"][0])]
    _artwork(package, "qc1")["descriptions"][0]["id"] = "qc1-desc"
    with pytest.raises(StudyImportError) as caught:
        study_import(source=write_package(tmp_path / "pkg", package))
    assert 'artwork "qc1", descriptions: expected exactly one pragmatic description for the american group, got 0' in (
        caught.value.errors
    )
    assert_nothing_written(settings)


def test_it_refuses_a_slug_already_used(tmp_path, settings):
    study_import(source=write_package(tmp_path / "one", package_dict(slug="twice")))
    files_before = media_files(settings)

    with pytest.raises(StudyImportError) as caught:
        study_import(source=write_package(tmp_path / "two", package_dict(slug="twice")))

    assert caught.value.errors == ["slug: a study “twice” already exists"]
    assert Study.objects.count() == 1 and media_files(settings) == files_before


def test_it_refuses_a_file_that_is_not_an_image(tmp_path, settings):
    folder = write_package(tmp_path / "pkg", package_dict(slug="fake-image"))
    (folder / "images/am2.png").write_text("<html>not an image</html>")
    with pytest.raises(StudyImportError) as caught:
        study_import(source=folder)
    assert caught.value.errors == [
        'artwork "am2", image: “images/am2.png” is not a readable PNG, JPEG, WebP, GIF or SVG image'
    ]
    assert_nothing_written(settings)


def test_it_does_not_follow_a_symlink_out_of_the_package(tmp_path, settings):
    folder = write_package(tmp_path / "pkg", package_dict(slug="symlinked"))
    (tmp_path / "secret.png").write_bytes(png_bytes("secret"))
    (folder / "images/am1.png").unlink()
    (folder / "images/am1.png").symlink_to(tmp_path / "secret.png")
    with pytest.raises(StudyImportError) as caught:
        study_import(source=folder)
    assert caught.value.errors == ['artwork "am1", image: “images/am1.png” is not in the package']
    assert_nothing_written(settings)


def test_it_does_not_read_a_zip_entry_outside_the_package_folder(tmp_path, settings):
    package = package_dict(slug="zip-traversal")
    _artwork(package, "am1")["image"] = "../evil.png"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("pkg/study.json", json.dumps(package))
        archive.writestr("evil.png", png_bytes("evil"))
        for artwork in package["artworks"]:
            if artwork["id"] != "am1":
                archive.writestr(f"pkg/{artwork['image']}", png_bytes(artwork["id"]))
    with pytest.raises(StudyImportError) as caught:
        study_import(source=buffer.getvalue())
    assert caught.value.errors == ['artwork "am1", image: “../evil.png” leaves the package folder']
    assert_nothing_written(settings)


@pytest.mark.parametrize(
    "content,expected",
    [
        (b"not a zip", "upload.zip: not a zip file"),
        ("zip without json", "study.json: not found at the root of the zip or in its single top-level folder"),
        ("bad json", "study.json: not valid JSON"),
        ("list json", "study.json: must hold one JSON object"),
    ],
)
def test_it_refuses_a_broken_archive(settings, content, expected):
    if isinstance(content, str):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("a/readme.txt", "hello")
            if content == "bad json":
                archive.writestr("study.json", "{nope")
            elif content == "list json":
                archive.writestr("study.json", "[]")
        content = buffer.getvalue()
    with pytest.raises(StudyImportError) as caught:
        study_import(source=content, filename="upload.zip")
    assert any(expected in error for error in caught.value.errors), caught.value.errors
    assert_nothing_written(settings)


def test_it_refuses_a_zip_larger_than_the_limit_before_reading_it(tmp_path, settings):
    settings.VIVID_IMPORT_MAX_BYTES = 2048
    data = zip_bytes(write_package(tmp_path / "pkg", package_dict(slug="big")))
    upload = SimpleUploadedFile("big.zip", data)
    with pytest.raises(StudyImportError) as caught:
        study_import(source=upload, filename="big.zip")
    assert caught.value.errors[0].startswith("big.zip: ") and "the limit is 2,048 bytes" in caught.value.errors[0]
    assert_nothing_written(settings)


def test_it_deletes_the_images_written_when_the_transaction_fails(tmp_path, settings, monkeypatch):
    folder = write_package(tmp_path / "pkg", package_dict(slug="rolled-back"))

    def explode(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(Term.objects, "bulk_create", explode)
    with pytest.raises(RuntimeError):
        study_import(source=folder)
    assert_nothing_written(settings)


def test_it_turns_a_concurrent_import_of_the_same_slug_into_an_import_error(tmp_path, settings, monkeypatch):
    folder = write_package(tmp_path / "pkg", package_dict(slug="raced"))
    from django.db import IntegrityError

    real_write = Term.objects.bulk_create

    # The last write of the import: everything is written when the other import's commit wins.
    def write_then_collide(*args, **kwargs):
        real_write(*args, **kwargs)
        raise IntegrityError("UNIQUE constraint failed: study_study.slug")

    monkeypatch.setattr(Term.objects, "bulk_create", write_then_collide)
    with pytest.raises(StudyImportError) as caught:
        study_import(source=folder)
    assert caught.value.errors == ["slug: a study “raced” already exists"]
    assert_nothing_written(settings)


# --- The command ---------------------------------------------------------------------------------


def test_the_command_prints_a_summary_and_the_slug_last(tmp_path, capsys):
    folder = write_package(tmp_path / "pkg", package_dict(slug="from-cli"))
    out = io.StringIO()
    call_command("import_study", str(folder), stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert lines[-1] == "from-cli"
    text = out.getvalue()
    assert "artworks: 14 (2 quality checks)" in text
    assert "questions: 28" in text and "descriptions: 48" in text and "terms: 6" in text
    assert Study.objects.filter(slug="from-cli").exists()


def test_the_command_imports_a_zip(tmp_path):
    path = tmp_path / "pkg.zip"
    path.write_bytes(zip_bytes(write_package(tmp_path / "pkg", package_dict(slug="cli-zip")), top="pkg/"))
    out = io.StringIO()
    call_command("import_study", str(path), stdout=out)
    assert out.getvalue().strip().splitlines()[-1] == "cli-zip"


def test_the_command_prints_every_error_and_fails(tmp_path, settings):
    package = package_dict(slug="cli-broken")
    _artwork(package, "cn3")["questions"][1]["distractors"] = ["a", "b", "c", "d"]
    _artwork(package, "am1")["culture"] = "french"
    folder = write_package(tmp_path / "pkg", package)
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_study", str(folder), stdout=out, stderr=err)
    assert 'artwork "cn3", questions[1].distractors: expected 5 distinct strings, got 4' in err.getvalue()
    assert 'artwork "am1", culture:' in err.getvalue()
    assert out.getvalue() == ""
    assert_nothing_written(settings)


def test_the_command_exits_with_status_1(tmp_path):
    """Run as a process, as scripts do: the exit status is 1 and the errors are on stderr."""
    import os
    import subprocess
    import sys

    folder = write_package(tmp_path / "pkg", package_dict(slug="Bad Slug"))
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "DJANGO_ENV": "test"}
    # Validation fails before any write or read, so the process needs no tables: an empty database
    # file (a migrate here would cost more than the rest of the test).
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    env.pop("VIVID_TEST_SQLITE", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "import_study", str(folder)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "slug: “Bad Slug” is not a valid slug" in result.stderr
    assert result.stdout == ""
