"""Every CSV the app writes goes out through here, so no export can forget what a spreadsheet does with it.

Excel, LibreOffice and Google Sheets read a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab
or a carriage return as a formula: an expression, a model's reply, a package's title or a username
of ``=HYPERLINK("http://x","y")`` would run in the researcher's spreadsheet (CSV injection). Such a
text cell is written with a leading apostrophe, OWASP's rule; the csv module quotes the cell when
it holds a quote, a comma or a line break, so the apostrophe cannot be split from it.

Numbers (int, float, Decimal, numpy's) are written as numbers: a kappa of -0.12 stays -0.12 for
pandas and R, and a number carries no formula. So is a text that is exactly a negative decimal
number ("-0.12", "-3", "-1e-05": a score a CSV import kept as text): a spreadsheet reads the same
number either way and runs nothing. Any other text starting with a trigger is a person's or a
model's and gets the apostrophe: "+1", "-2+3", "-1+cmd|' /C calc'!A0".

The importers of the app's own files (``core.tables.read_delimited``, the artwork importer) take
the apostrophe off again with ``csv_cell_read``. A text that already starts with apostrophes and
then a trigger gets one more on the way out, so a file read back gives exactly the text written.
"""

import csv
import io
import math
import numbers
import re
from collections.abc import Iterable

# OWASP's list: what a spreadsheet takes for the start of a formula.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_TRIGGER = "[" + re.escape("".join(FORMULA_TRIGGERS)) + "]"
_NEEDS_APOSTROPHE = re.compile("'*" + _TRIGGER)
_HAS_APOSTROPHE = re.compile("'+" + _TRIGGER)
# The first characters worth a regex: most cells start with none of them (the study export is large).
_FIRST = frozenset(("'", *FORMULA_TRIGGERS))
# Nothing but a negative number: digits, one point, an exponent. "-2+3" is not one.
_NEGATIVE_NUMBER = re.compile(r"-[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def csv_cell(value):
    """One cell as written: empty for None and NaN, numbers as they are, text neutralised."""
    if isinstance(value, str):
        if value[:1] in _FIRST and _NEEDS_APOSTROPHE.match(value) and not _NEGATIVE_NUMBER.fullmatch(value):
            return f"'{value}"
        return value
    if value is None:
        return ""
    if isinstance(value, numbers.Number):
        if isinstance(value, float) and math.isnan(value):
            return ""  # what pandas writes for a missing figure
        return value
    return csv_cell(str(value))


def csv_cell_read(text: str) -> str:
    """A cell of a CSV this module wrote, as it was before: the apostrophe ``csv_cell`` added goes."""
    return text[1:] if _HAS_APOSTROPHE.match(text) else text


class CsvWriter:
    """csv.writer with every cell through ``csv_cell`` and "\\n" line ends, into a buffer read with ``take``."""

    def __init__(self):
        self._out = io.StringIO()
        self._writer = csv.writer(self._out, lineterminator="\n")
        self._row = io.StringIO()
        # The csv module quotes a cell holding a character of the line terminator, so with "\n" a
        # lone "\r" went out bare and a reader split the row there: such a row is written with "\r\n".
        self._quoting_cr = csv.writer(self._row, lineterminator="\r\n")

    def writerow(self, row: Iterable) -> None:
        cells = [csv_cell(value) for value in row]
        if not any(isinstance(cell, str) and "\r" in cell for cell in cells):
            self._writer.writerow(cells)
            return
        self._row.seek(0)
        self._row.truncate()
        self._quoting_cr.writerow(cells)
        self._out.write(self._row.getvalue()[:-2] + "\n")

    def writerows(self, rows: Iterable[Iterable]) -> None:
        for row in rows:
            self.writerow(row)

    def take(self) -> str:
        """What was written since the last ``take`` (a streamed export sends it and forgets it)."""
        text = self._out.getvalue()
        self._out.seek(0)
        self._out.truncate()
        return text


def csv_text(header: list | None, rows: Iterable[Iterable]) -> str:
    """A whole CSV: the header (None for a file without one), then the rows."""
    writer = CsvWriter()
    if header is not None:
        writer.writerow(header)
    writer.writerows(rows)
    return writer.take()


def csv_records_text(columns: list[str], records: Iterable[dict]) -> str:
    """Dict rows in ``columns`` order; a key a row lacks is an empty cell, a key not in ``columns`` is left out."""
    return csv_text(columns, ([record.get(column) for column in columns] for record in records))


def csv_frame_text(frame) -> str:
    """A pandas DataFrame without its index, as ``to_csv(index=False)`` wrote it, but neutralised."""
    return csv_text([str(column) for column in frame.columns], frame.itertuples(index=False, name=None))
