"""Importing artwork collections: folder, zip, CSV and JSONL; all or nothing; the commands and the demo."""

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from PIL import Image

from artworks.demo import COLLECTION_NAME, LABEL, demo_collection_ensure, write_demo_folder
from artworks.models import ArtworkCollection, CollectionArtwork
from artworks.services.imports import ArtworkImportError, artworks_import

pytestmark = pytest.mark.django_db

HEADER = "id,title,artist,date,culture,comment,image\n"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.VAR_DIR = tmp_path / "var"
    return Path(settings.MEDIA_ROOT)


def image_bytes(fmt="PNG", colour=(200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), colour).save(buffer, format=fmt)
    return buffer.getvalue()


def make_folder(root: Path, csv_text: str | None = None, jsonl: list | None = None, images=None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "images").mkdir(exist_ok=True)
    images = images if images is not None else {"images/a.png": image_bytes(), "images/b.jpg": image_bytes("JPEG")}
    for name, content in images.items():
        (root / name).write_bytes(content)
    if jsonl is not None:
        (root / "artworks.jsonl").write_text("\n".join(json.dumps(row) for row in jsonl) + "\n", encoding="utf-8")
    else:
        if csv_text is None:
            csv_text = (
                HEADER
                + 'cn-1,Lotus,"Wu, Anon",1850,chinese,"A pond, with lotus.",images/a.png\n'
                + "am-1,Eagle,,007,American,,images/b.jpg\n"
            )
        (root / "artworks.csv").write_text(csv_text, encoding="utf-8")
    return root


def files_under(media: Path) -> list[Path]:
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def assert_nothing_written(media: Path):
    assert ArtworkCollection.objects.count() == 0
    assert CollectionArtwork.objects.count() == 0
    assert files_under(media) == []


def test_it_imports_a_folder_with_a_csv(tmp_path, media):
    collection = artworks_import(name="Museum", source=make_folder(tmp_path / "src"))

    artworks = list(collection.artworks.order_by("position"))
    assert [a.key for a in artworks] == ["cn-1", "am-1"]
    lotus, eagle = artworks
    assert (lotus.title, lotus.artist, lotus.date, lotus.culture, lotus.comment) == (
        "Lotus",
        "Wu, Anon",
        "1850",
        "chinese",
        "A pond, with lotus.",
    )
    # Text stays text ("007"), and the culture is lowercased.
    assert (eagle.date, eagle.culture, eagle.artist) == ("007", "american", "")
    assert lotus.image.name == f"collections/{collection.pk}/cn-1.png"
    assert eagle.image.name == f"collections/{collection.pk}/am-1.jpg"
    assert lotus.image_sha256 == hashlib.sha256((tmp_path / "src/images/a.png").read_bytes()).hexdigest()
    assert (media / lotus.image.name).read_bytes() == (tmp_path / "src/images/a.png").read_bytes()


def test_it_imports_the_csv_file_itself_with_images_beside_it(tmp_path):
    folder = make_folder(tmp_path / "src")
    collection = artworks_import(name="Direct", source=folder / "artworks.csv")
    assert collection.artworks.count() == 2


def test_it_imports_a_jsonl_file(tmp_path):
    rows = [
        {
            "id": "cn-1",
            "title": "Lotus",
            "artist": None,
            "date": 1850,
            "culture": "chinese",
            "comment": "c",
            "image": "images/a.png",
        },
        {"id": "am-1", "title": "Eagle", "culture": "american", "image": "images/b.jpg"},
    ]
    collection = artworks_import(name="Lines", source=make_folder(tmp_path / "src", jsonl=rows))
    lotus = collection.artworks.get(key="cn-1")
    assert (lotus.date, lotus.artist) == ("1850", "")


@pytest.mark.parametrize("nested", [False, True])
def test_it_imports_a_zip_with_or_without_a_top_folder(tmp_path, nested):
    folder = make_folder(tmp_path / "src")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in folder.rglob("*"):
            if path.is_file():
                name = path.relative_to(folder).as_posix()
                archive.write(path, f"museum/{name}" if nested else name)
    (tmp_path / "c.zip").write_bytes(buffer.getvalue())

    from_path = artworks_import(name="Zip path", source=tmp_path / "c.zip")
    from_bytes = artworks_import(name="Zip bytes", source=buffer.getvalue(), filename="c.zip")
    assert from_path.artworks.count() == from_bytes.artworks.count() == 2


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (",Untitled,,,chinese,,images/a.png", "row 3, column 'id': required"),
        ("bad/id,Untitled,,,chinese,,images/a.png", "row 3, column 'id': “bad/id”"),
        ("CN-1,Twice,,,chinese,,images/a.png", "row 3, column 'id': “CN-1” is also the id of row 2"),
        ("x-1,,,,chinese,,images/a.png", "row 3, column 'title': required"),
        ("x-1,T,,,,,images/a.png", "row 3, column 'culture': required"),
        ("x-1,T,,,han chinese,,images/a.png", "row 3, column 'culture': “han chinese”"),
        ("x-1,T,,,chinese,,", "row 3, column 'image': required"),
        ("x-1,T,,,chinese,,images/missing.png", "row 3, column 'image': “images/missing.png” is not in the package"),
        ("x-1,T,,,chinese,,../outside.png", "row 3, column 'image': “../outside.png” leaves the package folder"),
        ("x-1,T,,,chinese,,/etc/passwd", "row 3, column 'image': “/etc/passwd” is absolute"),
        ("x-1,T,,,chinese,,images/fake.png", "row 3, column 'image': “images/fake.png” is not a readable"),
    ],
)
def test_it_names_the_row_and_column_of_each_error_and_writes_nothing(tmp_path, media, row, expected):
    (tmp_path / "outside.png").write_bytes(image_bytes())
    csv_text = HEADER + "cn-1,Lotus,,,chinese,,images/a.png\n" + row + "\n"
    folder = make_folder(
        tmp_path / "src", csv_text, images={"images/a.png": image_bytes(), "images/fake.png": b"not an image"}
    )

    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Broken", source=folder)

    assert any(error.startswith(expected) for error in caught.value.errors), caught.value.errors
    assert_nothing_written(media)


def test_it_collects_every_error_at_once(tmp_path, media):
    csv_text = HEADER + ",,,,,,\n" + "ok,T,,,chinese,,images/nope.png\n"
    folder = make_folder(tmp_path / "src", csv_text)
    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Many", source=folder)
    errors = caught.value.errors
    for expected in (
        "row 2, column 'id'",
        "row 2, column 'title'",
        "row 2, column 'culture'",
        "row 2, column 'image'",
        "row 3, column 'image'",
    ):
        assert any(error.startswith(expected) for error in errors), (expected, errors)
    assert_nothing_written(media)


def test_it_reports_missing_columns_and_bad_jsonl_lines(tmp_path, media):
    folder = make_folder(tmp_path / "cols", "id,title\nx,T\n")
    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Cols", source=folder)
    assert "artworks.csv: column 'culture' is missing" in caught.value.errors
    assert "artworks.csv: column 'image' is missing" in caught.value.errors

    folder = make_folder(
        tmp_path / "lines", jsonl=[{"id": "a", "title": "T", "culture": "chinese", "image": "images/a.png"}]
    )
    with (folder / "artworks.jsonl").open("a") as handle:
        handle.write("{not json\n")
        handle.write(json.dumps({"id": "b", "title": ["list"], "culture": "chinese", "image": "images/a.png"}) + "\n")
    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Lines", source=folder)
    assert any(error.startswith("row 2: not valid JSON") for error in caught.value.errors)
    assert any(error.startswith("row 3, column 'title': expected text") for error in caught.value.errors)
    assert_nothing_written(media)


def test_it_refuses_a_folder_without_a_data_file_and_a_broken_zip(tmp_path, media):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArtworkImportError, match="no artworks.csv or artworks.jsonl"):
        artworks_import(name="E", source=tmp_path / "empty")
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    with pytest.raises(ArtworkImportError, match="not a zip file"):
        artworks_import(name="E", source=tmp_path / "x.zip")
    assert_nothing_written(media)


def test_it_refuses_a_name_already_taken_and_keeps_the_first(tmp_path, media):
    folder = make_folder(tmp_path / "src")
    first = artworks_import(name="Taken", source=folder)
    before = sorted(files_under(media))

    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Taken", source=folder)

    assert caught.value.errors == ["collection: a collection “Taken” already exists; choose a new name"]
    assert list(ArtworkCollection.objects.values_list("pk", flat=True)) == [first.pk]
    assert sorted(files_under(media)) == before


def test_it_removes_written_images_when_the_transaction_fails(tmp_path, media, monkeypatch):
    folder = make_folder(tmp_path / "src")
    original = CollectionArtwork.save

    def fail_on_second(self, *args, **kwargs):
        if self.key == "am-1":
            raise RuntimeError("database went away")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CollectionArtwork, "save", fail_on_second)
    with pytest.raises(RuntimeError):
        artworks_import(name="Half", source=folder)
    assert_nothing_written(media)


def test_the_command_prints_a_summary_and_the_collection_last(tmp_path, capsys):
    call_command("import_artworks", str(make_folder(tmp_path / "src")), "--collection", "CLI")

    lines = capsys.readouterr().out.strip().splitlines()
    collection = ArtworkCollection.objects.get(name="CLI")
    assert lines[0] == "imported 2 artworks (1 american, 1 chinese)"
    assert lines[-1] == f"collection {collection.pk}: CLI"


def test_the_command_writes_errors_to_stderr_and_exits_1(tmp_path, media):
    folder = make_folder(tmp_path / "src", HEADER + "x,,,,chinese,,images/a.png\n")
    stderr = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("import_artworks", str(folder), "--collection", "Bad", stderr=stderr)
    assert caught.value.returncode == 1
    assert "row 2, column 'title': required" in stderr.getvalue()
    assert_nothing_written(media)


def test_the_demo_collection_imports_cleanly_and_seeding_is_idempotent(settings, capsys):
    call_command("seed_demo_artworks")
    collection = ArtworkCollection.objects.get(name=COLLECTION_NAME)
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"collection {collection.pk}: {COLLECTION_NAME}"
    artworks = collection.artworks.all()
    assert artworks.filter(culture="american").count() == 3 and artworks.filter(culture="chinese").count() == 3
    assert all(a.comment and a.image_sha256 for a in artworks)
    for artwork in artworks:
        with artwork.image.open("rb") as handle, Image.open(handle) as image:
            assert image.format == "PNG"

    call_command("seed_demo_artworks")
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"collection {collection.pk}: {COLLECTION_NAME}"
    assert ArtworkCollection.objects.count() == 1 and collection.artworks.count() == 6
    assert (Path(settings.VAR_DIR) / "demo-artworks" / "artworks.csv").is_file()


def test_the_demo_folder_is_deterministic_and_labelled(tmp_path):
    first = write_demo_folder(tmp_path / "one")
    second = write_demo_folder(tmp_path / "two")
    for path in first.rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (second / path.relative_to(first)).read_bytes()
    assert LABEL == "DEMO ARTWORK – drawn by code"
    collection, created = demo_collection_ensure(folder=first)
    assert created and collection.artworks.count() == 6
    assert demo_collection_ensure(folder=first) == (collection, False)


def test_it_ships_reviewed_elements_and_questions_with_the_demo_collection(settings, tmp_path):
    from artworks.demo import demo_collection_ensure
    from artworks.models import ArtworkQuestion

    settings.MEDIA_ROOT = tmp_path / "media"
    collection, created = demo_collection_ensure(folder=tmp_path / "demo")
    assert created
    for artwork in collection.artworks.all():
        symbols = set(artwork.elements.filter(is_symbol=True).values_list("name", flat=True))
        assert symbols and artwork.elements.filter(is_symbol=False).exists()
        questions = list(artwork.questions.all())
        assert {q.type for q in questions} == {"attuned", "agnostic"}
        for question in questions:
            assert len(set(question.distractors)) == 5 and question.answer not in question.distractors
            if question.type == "attuned":
                assert question.symbol in symbols
    assert ArtworkQuestion.objects.filter(artwork__collection=collection).count() >= 12
