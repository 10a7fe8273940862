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


def version_export(*, version: DatasetVersion, fmt: str, gold: bool = True) -> str:
    """Serialise a version from its copied values (later corpus edits never show).

    CSV: traits comma-separated, metadata flattened into extra columns after
    ``provenance``. JSONL: traits as a list, metadata keys at the top level.
    Without ``gold`` the traits and theme columns are left out: a version's
    labels are the gold labels of the next round over the same expressions.
    """
    columns = BASE_COLUMNS if gold else [c for c in BASE_COLUMNS if c not in ("traits", "theme")]
    return rows_serialise(rows=_rows(version), columns=columns, fmt=fmt)
