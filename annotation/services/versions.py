"""Frozen dataset versions: freezing from a page or the API, and exporting.

A version exports in the foundation's format (the columns of
``dataset_export``) plus ``provenance``, so a frozen version can be imported
again as a corpus and read by pandas without options.
"""

from ..models import DatasetVersion
from .imports import rows_serialise

BASE_COLUMNS = ["id", "expression", "explanation", "kind", "source", "traits", "theme", "provenance"]


def _rows(version: DatasetVersion) -> list[dict]:
    return [
        {
            "id": item.external_id,
            "expression": item.text,
            "explanation": item.explanation,
            "kind": item.kind,
            "source": item.source,
            "traits": list(item.traits),
            "theme": item.theme,
            "provenance": item.provenance,
            "metadata": item.metadata or {},
        }
        for item in version.items.order_by("id")
    ]


def version_export(*, version: DatasetVersion, fmt: str) -> str:
    """Serialise a version from its copied values (later corpus edits never show).

    CSV: traits comma-separated, metadata flattened into extra columns after
    ``provenance``. JSONL: traits as a list, metadata keys at the top level.
    """
    return rows_serialise(rows=_rows(version), columns=BASE_COLUMNS, fmt=fmt)
