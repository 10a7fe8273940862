"""core.csv_writer: cells a spreadsheet would run as formulas get an apostrophe, numbers stay numbers,
and no module of the app writes CSV any other way."""

import ast
import csv
import io
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.csv_writer import CsvWriter, csv_cell, csv_cell_read, csv_frame_text, csv_records_text, csv_text
from prolific.services.bonuses import bonus_csv
from tests.csv_checks import PAYLOADS, assert_no_formula

ROOT = Path(__file__).resolve().parents[2]
# The one module allowed to call csv.writer.
WRITER = ROOT / "core" / "csv_writer.py"
SKIPPED = {".venv", "var", "tests", "node_modules", ".git", "static", "locale"}


@pytest.mark.parametrize("payload", PAYLOADS)
def test_it_puts_an_apostrophe_before_a_formula_and_reads_it_back(payload):
    written = csv_cell(payload)
    assert written == f"'{payload}"
    assert csv_cell_read(written) == payload


@pytest.mark.parametrize(
    "text", ["'=already", "''+twice", "'plain", "plain", "", "a=b", "-", "--x", "'-0.5", "-0.5 ", "ｰ1"]
)
def test_it_reads_back_exactly_what_it_was_given(text):
    assert csv_cell_read(csv_cell(text)) == text


@pytest.mark.parametrize(
    "value", [-0.12, -3, Decimal("-1.50"), np.float64(-0.25), np.int64(-7), True, 0, 1e-05, "-0.12", "-3", "-1e-05"]
)
def test_it_keeps_numbers_and_negative_numbers_as_they_are(value):
    # A kappa of -0.12 must stay a number for pandas and R; "-0.12" as text is the same number to a spreadsheet.
    assert csv_cell(value) == value


def test_it_writes_nothing_for_none_and_nan_and_text_for_anything_else():
    assert csv_cell(None) == "" and csv_cell(float("nan")) == "" and csv_cell(np.nan) == ""
    assert csv_cell(Path("=x")) == "'=x"


def test_it_quotes_a_carriage_return_so_the_row_stays_whole():
    text = csv_text(["a", "b"], [["x\ry", "\r=1"], ["p", "q"]])
    assert list(csv.reader(io.StringIO(text, newline=""))) == [["a", "b"], ["x\ry", "'\r=1"], ["p", "q"]]
    assert text.endswith("p,q\n") and "\r\n" not in text


def test_it_writes_rows_dicts_frames_and_streams_alike():
    rows = [['=HYPERLINK("http://x","y")', -0.12, None], ["ok", 3.5, "@SUM(A1)"]]
    expected = csv_text(["=a", "b", "c"], rows)
    assert expected.splitlines()[0] == "'=a,b,c"
    records = [dict(zip(["=a", "b", "c"], row, strict=True)) for row in rows]
    assert csv_records_text(["=a", "b", "c"], records) == expected
    assert csv_frame_text(pd.DataFrame(rows, columns=["=a", "b", "c"])) == expected
    writer = CsvWriter()
    writer.writerow(["=a", "b", "c"])
    first = writer.take()
    writer.writerows(rows)
    assert first + writer.take() == expected and writer.take() == ""


def test_it_sends_prolific_bonus_lines_without_a_header_or_a_formula():
    text = bonus_csv(
        [{"participant_id": PAYLOADS[0], "amount": "4.25"}, {"participant_id": "5f0a1b", "amount": "0.50"}]
    )
    assert_no_formula(text, planted=PAYLOADS[:1])
    assert text.endswith("\n5f0a1b,0.50\n")


# --- No module writes CSV but through core.csv_writer -----------------------------------------


def csv_writes(source: str) -> list[str]:
    """Where ``source`` writes CSV by itself: csv.writer or csv.DictWriter (under any alias), a
    ``from csv import`` of them, or pandas' ``to_csv``."""
    tree = ast.parse(source)
    aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "csv"
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "csv":
            found += [f"line {node.lineno}: from csv import {a.name}" for a in node.names if a.name != "reader"]
        elif isinstance(node, ast.Attribute) and node.attr == "to_csv":
            found.append(f"line {node.lineno}: .to_csv")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("writer", "DictWriter")
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def project_modules() -> list[Path]:
    return [
        path
        for path in ROOT.rglob("*.py")
        if not SKIPPED & set(path.relative_to(ROOT).parts[:-1]) and path != WRITER and "migrations" not in path.parts
    ]


def test_it_flags_a_module_that_writes_csv_by_itself():
    assert csv_writes("import csv\ncsv.writer(out)") == ["line 2: csv.writer"]
    assert csv_writes("import csv as c\nc.DictWriter(out, [])") == ["line 2: c.DictWriter"]
    assert csv_writes("from csv import writer, reader") == ["line 1: from csv import writer"]
    assert csv_writes("frame.to_csv(out)") == ["line 1: .to_csv"]
    assert csv_writes("import csv\ncsv.reader(text)") == []


def test_it_writes_every_csv_of_the_app_through_core_csv_writer():
    modules = project_modules()
    assert ROOT / "annotation" / "services" / "exports" / "tables.py" in modules and len(modules) > 100
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in modules
        if (found := csv_writes(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "write CSV with core.csv_writer (it neutralises formulas): " + repr(offenders)
