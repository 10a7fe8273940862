"""Reading the tables people import (CSV, TSV, JSON, JSONL, XLSX) and reporting what went wrong.

Every importer of every app reads its file here, so a file is read the same way and an
error names its row and column in the same words everywhere.
"""

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import PurePath

from celery.exceptions import SoftTimeLimitExceeded
from django.utils.translation import gettext_lazy as _

from core.csv_writer import csv_cell_read
from core.files import ArchiveError, zip_verify

SUPPORTED_EXTENSIONS = (".csv", ".tsv", ".json", ".jsonl", ".xlsx")

# Errors are stored as a code and parameters so that a page can show them in
# the reader's language long after a worker wrote the report.
MESSAGES = {
    "dataset_required": _("a dataset name is required"),
    "too_large": _("'%(filename)s' is %(size)s bytes; the limit is %(limit)s bytes"),
    "bad_extension": _("'%(filename)s' has the extension '%(extension)s'; supported are %(supported)s."),
    "not_utf8": _("'%(filename)s' is not UTF-8 (byte %(byte)s is invalid)."),
    "empty_file": _("'%(filename)s' is empty."),
    "bad_table": _("'%(filename)s' is not valid %(format)s: %(detail)s"),
    "field_count": _("the row has %(found)s fields but the header has %(expected)s (an unquoted comma or tab?)"),
    "bad_xlsx": _("'%(filename)s' is not a readable XLSX workbook: %(detail)s"),
    "bad_archive": _("%(detail)s"),
    "bad_json": _("'%(filename)s' is not valid JSON: %(detail)s"),
    "json_not_list": _("'%(filename)s' must hold a JSON list of objects."),
    "bad_json_line": _("not valid JSON: %(detail)s"),
    "not_object": _("not a JSON object"),
    "mapped_column_missing": _("column mapped to '%(field)s' is not in the file"),
    "required_column_missing": _("required column is missing (the file has: %(columns)s)"),
    "expression_empty": _("the expression is empty"),
    "explanation_empty": _("the explanation is empty"),
    "unknown_kind": _("unknown kind '%(value)s' (use idiom or proverb)"),
    "unknown_trait": _("unknown trait %(values)s (use codes %(codes)s or numbers 1-%(count)s)"),
    "unknown_theme": _("unknown theme '%(value)s' (use codes %(codes)s or numbers 1-%(count)s)"),
    "concurrent_change": _("the dataset changed during the import; nothing was written, try again"),
    "duplicate_in_file": _("same as row %(first_row)s of this file"),
    "duplicate_in_dataset": _("already in the dataset"),
    "unknown_expression": _("'%(value)s' is not in the dataset"),
    "duplicate_item": _("the same expression as row %(first_row)s"),
    "unknown_annotator_item": _("annotator '%(annotator)s' already labelled this expression in row %(first_row)s"),
    "annotator_missing": _("the annotator is empty"),
    "bad_score": _("%(detail)s"),
}


def render_message(code: str, params: dict | None = None) -> str:
    """A stored error or duplicate reason, in the active language."""
    return str(MESSAGES[code]) % (params or {})


@dataclass
class RowError:
    row: int | None
    column: str | None
    code: str
    params: dict = field(default_factory=dict)

    @property
    def message(self) -> str:
        return render_message(self.code, self.params)

    def __str__(self):
        where = []
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column:
            where.append(f"column '{self.column}'")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class TableError(Exception):
    """The file cannot be read as a table; ``error`` says where and why."""

    def __init__(self, code: str, row: int | None = None, **params):
        self.error = RowError(row, None, code, params)


@dataclass
class ImportReport:
    dataset_name: str
    filename: str
    dry_run: bool
    rows: int = 0
    created: int = 0
    skipped_duplicates: int = 0
    columns: list[str] = field(default_factory=list)
    metadata_columns: list[str] = field(default_factory=list)
    duplicates: list[dict] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    preview: list[dict] = field(default_factory=list)
    # No dataset has exactly this name, so the import creates one; near_matches
    # are existing names that differ only by case, accents, spacing or a typo.
    new_dataset: bool = False
    near_matches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def summary(self) -> str:
        return f"created {self.created}, skipped_duplicates {self.skipped_duplicates}"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["errors"] = [{**asdict(error), "message": error.message, "text": str(error)} for error in self.errors]
        data["ok"] = self.ok
        data["summary"] = self.summary
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "ImportReport":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["errors"] = [
            RowError(row=e.get("row"), column=e.get("column"), code=e["code"], params=e.get("params", {}))
            for e in data.get("errors", [])
        ]
        return cls(**known)


class ImportValidationError(Exception):
    """The file cannot be imported; nothing was written. Carries the full report."""

    def __init__(self, report: ImportReport):
        self.report = report
        super().__init__("; ".join(str(e) for e in report.errors[:5]))


def read_table(filename: str, content: bytes) -> tuple[list[str], list[dict], int]:
    """Read a file into (columns, records, first row number).

    Every cell comes back as a string (or a list from JSON), never a float:
    pandas would otherwise turn "1,3" or "007" into numbers.
    The first row number is what a person sees in the file: row 2 is the first
    data row under a header, line 1 in JSONL, item 1 in a JSON list.
    """
    extension = PurePath(filename).suffix.lower()
    if extension not in SUPPORTED_EXTENSIONS:
        raise TableError(
            "bad_extension",
            filename=filename,
            extension=extension or "(none)",
            supported=", ".join(SUPPORTED_EXTENSIONS),
        )
    if extension in (".csv", ".tsv", ".json", ".jsonl"):
        try:
            text = content.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TableError("not_utf8", filename=filename, byte=exc.start) from None
    if extension in (".csv", ".tsv"):
        return read_delimited(filename, text, "\t" if extension == ".tsv" else ",")
    if extension == ".xlsx":
        try:
            # A workbook is a zip: bombs are refused on its directory and sizes before openpyxl sees it.
            zip_verify(content, name=filename)
        except ArchiveError as exc:
            raise TableError("bad_archive", detail=str(exc)) from None
        import pandas as pd  # where used: core/warmup.py says why

        try:
            frame = pd.read_excel(io.BytesIO(content), dtype=str, keep_default_na=False, engine="openpyxl")
        except SoftTimeLimitExceeded:
            raise  # the import task's time is up: not a broken workbook
        except Exception as exc:  # openpyxl raises many unrelated types for a broken workbook
            raise TableError("bad_xlsx", filename=filename, detail=str(exc)) from None
        return [str(c) for c in frame.columns], frame.to_dict("records"), 2
    if extension == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TableError("bad_json", filename=filename, detail=str(exc)) from None
        if not isinstance(data, list):
            raise TableError("json_not_list", filename=filename)
        start = 1
    else:
        data = []
        start = 1
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                data.append(None)
                continue
            try:
                data.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise TableError("bad_json_line", row=number, detail=str(exc)) from None
    columns: list[str] = []
    records = []
    for number, item in enumerate(data, start=start):
        if item is None:
            records.append(None)
            continue
        if not isinstance(item, dict):
            raise TableError("not_object", row=number)
        for key in item:
            if key not in columns:
                columns.append(str(key))
        records.append(item)
    return columns, records, start


def read_delimited(filename: str, text: str, delimiter: str) -> tuple[list[str], list[dict | None], int]:
    """CSV and TSV through the csv module, checking every row's field count.

    pandas would silently shift a row with one field too many (an unquoted
    comma in an explanation) into the index, moving every value one column over.
    """
    if not text.strip():
        raise TableError("empty_file", filename=filename)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
    except csv.Error as exc:
        raise TableError(
            "bad_table", filename=filename, format=delimiter == "," and "CSV" or "TSV", detail=str(exc)
        ) from None
    # csv_cell_read: a cell the app's own CSV export neutralised ("'=x") reads back as written ("=x").
    header = [csv_cell_read(h.strip()) for h in rows[0]]
    records: list[dict | None] = []
    for offset, fields in enumerate(rows[1:]):
        if not any(f.strip() for f in fields):
            records.append(None)
            continue
        if len(fields) != len(header):
            raise TableError("field_count", row=offset + 2, found=len(fields), expected=len(header))
        records.append(dict(zip(header, map(csv_cell_read, fields), strict=True)))
    return header, records, 2


def cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()
