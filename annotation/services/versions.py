"""Frozen dataset versions: freezing from a page or the API, and exporting.

A version exports in the foundation's format (the columns of
``dataset_export``) plus ``provenance``, so a frozen version can be imported
again as a corpus and read by pandas without options.
"""

import json

import pandas as pd

from ..models import DatasetVersion
from .imports import EXPORT_FORMATS, ExportError

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
    if fmt not in EXPORT_FORMATS:
        raise ExportError(f"format must be one of {', '.join(EXPORT_FORMATS)}, not '{fmt}'")
    rows = _rows(version)
    if fmt == "jsonl":
        lines = []
        for row in rows:
            metadata = row.pop("metadata")
            record = {**{k: row[k] for k in BASE_COLUMNS}, **{k: v for k, v in metadata.items() if k not in row}}
            lines.append(json.dumps(record, ensure_ascii=False))
        return "\n".join(lines) + ("\n" if lines else "")
    extra_columns: list[str] = []
    for row in rows:
        for key in row["metadata"]:
            if key not in BASE_COLUMNS and key not in extra_columns:
                extra_columns.append(key)
    flat = []
    for row in rows:
        metadata = row.pop("metadata")
        row["traits"] = ",".join(row["traits"])
        for key in extra_columns:
            value = metadata.get(key, "")
            row[key] = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
        flat.append(row)
    frame = pd.DataFrame(flat, columns=BASE_COLUMNS + extra_columns)
    return frame.to_csv(index=False, lineterminator="\n")
