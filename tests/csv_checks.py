"""What every CSV export test checks: no cell a spreadsheet would run as a formula (core.csv_writer)."""

import csv
import io

from django.core.management import call_command

from core.csv_writer import FORMULA_TRIGGERS

# OWASP's examples, one per trigger: planted in the data each export writes.
PAYLOADS = ('=HYPERLINK("http://x","y")', "+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1")


def csv_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def assert_no_formula(text: str, planted=PAYLOADS) -> list[str]:
    """Every cell that starts like a formula is a number; each planted text is there, behind an apostrophe."""
    cells = csv_cells(text)
    formulas = [cell for cell in cells if cell.startswith(FORMULA_TRIGGERS) and not _number(cell)]
    assert not formulas, f"cells a spreadsheet would run: {formulas}"
    missing = [payload for payload in planted if f"'{payload}" not in cells]
    assert not missing, f"planted text not in the file (neutralised): {missing}"
    return cells


def export_texts(client, urls: list[str], command: tuple = (), query: dict | None = None) -> list[str]:
    """One export as each page or API URL of ``urls`` serves it (GET ``query``, CSV by default), then
    as the management ``command`` prints it."""
    texts = [streamed(client.get(url, {"format": "csv"} if query is None else query)) for url in urls]
    if command:
        out = io.StringIO()
        call_command(*command, stdout=out, stderr=io.StringIO())
        texts.append(out.getvalue())
    return texts


def streamed(response) -> str:
    """A download's text, whether built in memory or sent as it is written."""
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()
