"""Hypothesis strategies and checks shared by the importers' property tests.

Every importer must either import a file completely or refuse it with its own
error type, naming the row, column or part of the file; and a refused file
leaves every table exactly as it was.
"""

import csv
import io
import json
import os
import zipfile
from collections import Counter

from django.apps import apps
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# CI runs a bounded, repeatable number of examples; `make fuzz` raises it.
PROPERTY_SETTINGS = settings(
    max_examples=int(os.environ.get("VIVID_FUZZ_IMPORT_EXAMPLES", 30)),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

# What became of every file tried, per property test: `make fuzz` prints it (tests/fuzz_report.py).
OUTCOMES: Counter = Counter()

ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1258"]
EXTENSIONS = [".csv", ".tsv", ".json", ".jsonl", ".xlsx", ".txt", ""]

# Text with the awkward parts: NUL, surrogate-free astral characters, NFD accents, quotes, newlines.
cell_text = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", " ", "\x00", "Chưa đủ lông đủ cánh", "a\u0301", '"', "\n", ",", "\t", "🐉", "=1+1"]),
    st.integers(-(2**70), 2**70).map(str),
)


@st.composite
def table_files(draw, columns: list[str], valid: dict | None = None) -> tuple[str, bytes]:
    """A filename and bytes: a plausible table in some format and encoding, or arbitrary bytes.

    ``valid`` maps columns to strategies of acceptable values: rows drawn from it, mixed with
    arbitrary ones, make files that import, and files that fail after some good rows.
    """
    kind = draw(st.sampled_from(["csv", "json", "jsonl", "bytes", "zip"]))
    header = draw(st.lists(st.sampled_from(columns) | st.text(max_size=8), min_size=0, max_size=len(columns) + 2))
    # Hypothesis leans to the smallest choice (0, False): with ``valid``, that is the well-formed one.
    if (valid and draw(st.integers(0, 3)) < 3) or draw(st.booleans()):
        header = list(columns)
    rows = []
    for _ in range(draw(st.integers(0, 6))):
        if valid and draw(st.integers(0, 3)) < 3:
            rows.append([draw(valid.get(column, cell_text)) for column in header])
        else:
            rows.append(draw(st.lists(cell_text, min_size=0, max_size=len(header) + 1)))
    if kind == "csv":
        buffer = io.StringIO()
        extension = draw(st.sampled_from([".csv", ".tsv", ".txt"]))
        delimiter = draw(st.sampled_from([",", "\t", ";"]))
        encoding = draw(st.sampled_from(ENCODINGS))
        if valid and not draw(st.booleans()):
            # A well-formed file half the time, so the valid rows get as far as the database.
            extension, delimiter, encoding = draw(
                st.sampled_from([(".csv", ",", "utf-8"), (".tsv", "\t", "utf-8-sig")])
            )
        writer = csv.writer(buffer, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
        content = buffer.getvalue().encode(encoding, errors="replace")
        return "f" + extension, content
    if kind in ("json", "jsonl"):
        records = [dict(zip(header, row, strict=False)) for row in rows]
        shape = draw(st.sampled_from(["records", "scalar", "nested"]))
        if shape == "scalar":
            records = draw(
                st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3))
            )
        elif shape == "nested":
            records = {"rows": records}
        if kind == "json":
            return "f.json", json.dumps(records).encode()
        lines = records if isinstance(records, list) else [records]
        return "f.jsonl", "\n".join(json.dumps(line) for line in lines).encode()
    if kind == "zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("sheet.xml", draw(st.binary(max_size=50)))
        return "f.xlsx", buffer.getvalue()
    return "f" + draw(st.sampled_from(EXTENSIONS)), draw(st.binary(max_size=300))


def row_counts() -> dict[str, int]:
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()}


def assert_all_or_nothing(import_call, error_types: tuple[type[Exception], ...], describe) -> str:
    """Run one import in a savepoint that is rolled back afterwards, so examples stay independent.

    Returns "imported" or "refused". Any exception other than ``error_types``
    fails the test; so does a refusal that changed any table, or one whose
    message (from ``describe``) is empty.
    """
    with transaction.atomic():
        before = row_counts()
        try:
            import_call()
        except error_types as exc:
            after = row_counts()
            changed = {label: (before[label], after[label]) for label in before if before[label] != after[label]}
            OUTCOMES[_current_test(), "partial write" if changed else "refused"] += 1
            assert not changed, f"refused import left rows behind: {changed}"
            message = describe(exc)
            assert message.strip(), "refused without saying why"
            outcome = "refused"
        else:
            outcome = "imported"
            OUTCOMES[_current_test(), outcome] += 1
        transaction.set_rollback(True)
    return outcome


def _current_test() -> str:
    return os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0].rsplit("::", 1)[-1]
