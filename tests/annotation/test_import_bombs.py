"""Zip and spreadsheet bombs: refused on the archive's directory, or as soon as an entry inflates past its size.

The bombs are real (tests/bombs.py builds a zip that inflates to 1 GiB in a few milliseconds);
memory is measured with tracemalloc, so a refusal that inflated anything would show.
"""

import io
import os
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Dataset, Expression
from annotation.services import expression_import
from core.files import ArchiveError, zip_open, zip_read, zip_verify
from core.tables import ImportValidationError
from tests.bombs import MIB, gigabyte_entry, lying_entry, stored, xlsx_bomb, zip_entries

from .factories import api_client_for

ROOT = Path(__file__).resolve().parents[2]
# Far above what the checks need (a few MB), far below what inflating a bomb would take.
MEMORY_BOUND = 64 * MIB

pytestmark = pytest.mark.django_db


def workbook(rows=(("expression", "explanation"), ("Nước chảy đá mòn", "Kiên trì thì thành công"))) -> bytes:
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(list(row))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def peak_memory(function) -> tuple[Exception | None, int]:
    tracemalloc.start()
    try:
        function()
    except Exception as exc:  # the refusal under test, returned for its message
        error = exc
    else:
        error = None
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return error, peak


def snapshot():
    return Dataset.objects.count(), Expression.objects.count()


# --- The archive checks --------------------------------------------------------------------------


def test_it_refuses_a_zip_that_inflates_to_a_gigabyte_on_its_directory_alone():
    bomb = zip_entries([stored("study.json", b"{}"), gigabyte_entry("images/zeros.png")])
    assert zipfile.ZipFile(io.BytesIO(bomb)).infolist()[1].file_size == 1 << 30

    error, peak = peak_memory(lambda: zip_open(bomb, name="bomb.zip"))

    assert isinstance(error, ArchiveError)
    assert str(error) == (
        "bomb.zip: the files in the zip add up to 1,073,741,826 bytes uncompressed; the limit is 20,971,520 bytes"
    )
    assert peak < MEMORY_BOUND


def test_it_applies_the_size_limit_to_the_total_not_to_each_entry(settings):
    settings.VIVID_IMPORT_MAX_BYTES = 20_000
    entries = [stored(f"part-{n}.bin", os.urandom(8_000)) for n in range(3)]

    with pytest.raises(ArchiveError) as caught:
        zip_open(zip_entries(entries), name="parts.zip")

    assert str(caught.value) == (
        "parts.zip: the files in the zip add up to 24,000 bytes uncompressed; the limit is 20,000 bytes"
    )
    assert zip_open(zip_entries(entries[:2]), name="parts.zip")


def test_it_refuses_more_entries_than_the_setting_allows(settings):
    settings.VIVID_IMPORT_MAX_ENTRIES = 5
    entries = [stored(f"{n}.txt", b"x") for n in range(6)]

    with pytest.raises(ArchiveError) as caught:
        zip_open(zip_entries(entries), name="many.zip")

    assert str(caught.value) == "many.zip: the zip holds 6 files; the limit is 5"
    assert zip_open(zip_entries(entries[:5]), name="many.zip")


def test_it_counts_the_entries_from_the_end_record_before_zipfile_lists_them():
    honest = zip_entries([stored("a.txt", b"x")])
    # The end record's two entry counts (this disk, total) raised to 65,000.
    end = honest.rindex(b"PK\x05\x06")
    claimed = honest[: end + 8] + (65_000).to_bytes(2, "little") * 2 + honest[end + 12 :]

    with pytest.raises(ArchiveError) as caught:
        zip_open(claimed, name="listed.zip")

    assert str(caught.value) == "listed.zip: the zip holds 65,000 files; the limit is 2,000"


def test_it_refuses_an_entry_compressed_beyond_the_ratio(settings):
    settings.VIVID_IMPORT_MAX_RATIO = 200
    dense = zip_entries([("zeros.bin", *lying_entry("zeros.bin", declared=4 * MIB, mebibytes=4)[1:])])

    with pytest.raises(ArchiveError) as caught:
        zip_open(dense, name="dense.zip")

    assert str(caught.value).startswith("dense.zip: “zeros.bin” is compressed ")
    assert str(caught.value).endswith(" to 1; the limit is 200 to 1")


def test_it_stops_inflating_an_entry_that_holds_more_than_its_header_declares():
    liar = zip_entries([lying_entry("small.txt", declared=1000, mebibytes=10)])
    archive = zip_open(liar, name="liar.zip")

    error, peak = peak_memory(lambda: zip_read(archive, archive.infolist()[0], name="liar.zip"))

    assert str(error) == "liar.zip: “small.txt” is damaged or holds more than the size its header declares"
    assert peak < MEMORY_BOUND
    with pytest.raises(ArchiveError):
        zip_verify(liar, name="liar.zip")


def test_it_reads_an_honest_entry_whole():
    content = b"honest bytes " * 1000
    archive = zip_open(zip_entries([stored("honest.txt", content)]), name="ok.zip")
    assert zip_read(archive, archive.infolist()[0], name="ok.zip") == content


# --- The .xlsx importers -------------------------------------------------------------------------


def test_it_refuses_an_xlsx_bomb_with_a_clear_error_and_writes_nothing():
    bomb = xlsx_bomb(workbook())
    before = snapshot()

    error, peak = peak_memory(lambda: expression_import(dataset_name="Bomb", filename="idioms.xlsx", content=bomb))

    assert isinstance(error, ImportValidationError)
    [message] = [e.message for e in error.report.errors]
    assert message.startswith("idioms.xlsx: the files in the zip add up to ")
    assert message.endswith(" bytes uncompressed; the limit is 20,971,520 bytes")
    assert peak < MEMORY_BOUND
    assert snapshot() == before


def test_it_refuses_an_xlsx_whose_sheet_holds_more_than_it_declares():
    source = zipfile.ZipFile(io.BytesIO(workbook()))
    entries = [
        lying_entry(info.filename)
        if info.filename == "xl/worksheets/sheet1.xml"
        else stored(info.filename, source.read(info))
        for info in source.infolist()
    ]

    with pytest.raises(ImportValidationError) as caught:
        expression_import(dataset_name="Liar", filename="idioms.xlsx", content=zip_entries(entries))

    assert [e.message for e in caught.value.report.errors] == [
        "idioms.xlsx: “xl/worksheets/sheet1.xml” is damaged or holds more than the size its header declares"
    ]
    assert not Dataset.objects.filter(name="Liar").exists()


def test_it_still_imports_an_ordinary_workbook():
    rows = [("expression", "explanation")] + [(f"Thành ngữ {n}", f"Giải thích {n} " * 5) for n in range(2000)]

    report = expression_import(dataset_name="Ordinary", filename="idioms.xlsx", content=workbook(rows))

    assert report.created == 2000


def test_it_shows_the_xlsx_bomb_error_on_the_api_like_other_import_errors(researcher):
    api = api_client_for(researcher, session=False)
    upload = SimpleUploadedFile("idioms.xlsx", xlsx_bomb(workbook()))

    response = api.post(reverse("api:import"), {"dataset": "Bomb", "file": upload}, format="multipart")

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["message"].startswith("idioms.xlsx: the files in the zip add up to ")
    assert not Dataset.objects.filter(name="Bomb").exists()


def test_it_prints_the_xlsx_bomb_error_from_the_command_and_exits_1(tmp_path):
    path = tmp_path / "idioms.xlsx"
    path.write_bytes(xlsx_bomb(workbook()))
    env = {**os.environ, "DJANGO_ENV": "test", "VIVID_VAR_DIR": str(tmp_path / "var")}
    env.pop("DATABASE_URL", None)

    result = subprocess.run(
        [sys.executable, "manage.py", "import_expressions", str(path), "--dataset", "Bomb"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert "idioms.xlsx: the files in the zip add up to " in result.stderr
    assert "Traceback" not in result.stderr
