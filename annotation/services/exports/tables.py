"""The app's text exports: dataset and version exports (CSV, JSONL), agreement statistics.

Dataset and version exports share one serialiser so both read back the same way (into
``expression_import``, or pandas without options). A version exports in the dataset's
columns plus ``provenance``. CSV goes through core.csv_writer: a text cell a spreadsheet would
run as a formula starts with an apostrophe, which ``expression_import`` takes off again.
"""

import json

from core.csv_writer import csv_records_text

from ...models import Dataset, DatasetVersion
from ...selectors.corpus import dataset_export_rows
from ...selectors.rounds import version_items

EXPORT_FORMATS = ("csv", "jsonl")
STATS_FORMATS = ("json", "csv")
VERSION_COLUMNS = ["id", "expression", "explanation", "kind", "source", "traits", "theme", "provenance"]


class ExportError(Exception):
    pass


def dataset_export(*, dataset: Dataset, fmt: str, gold: bool = True) -> str:
    """Serialise a dataset, one row per expression.

    CSV: traits as a comma-separated list of codes, metadata flattened into
    extra columns so a re-import keeps them. JSONL: traits as a list.
    Without ``gold`` the traits and theme columns are left out (the blindness
    rule for annotators); empty columns would read back as "no trait".
    """
    rows = dataset_export_rows(dataset=dataset)
    columns = ["id", "expression", "explanation", "kind", "source", "traits", "theme"]
    if not gold:
        columns = columns[:5]
    return rows_serialise(rows=rows, columns=columns, fmt=fmt)


def rows_serialise(*, rows: list[dict], columns: list[str], fmt: str) -> str:
    """Export rows (each with ``traits`` as a list and a ``metadata`` dict) as CSV or JSONL.

    Shared by dataset and version exports so both read back the same way.
    """
    if fmt not in EXPORT_FORMATS:
        raise ExportError(f"format must be one of {', '.join(EXPORT_FORMATS)}, not '{fmt}'")
    if fmt == "jsonl":
        lines = []
        for row in rows:
            metadata = row.pop("metadata")
            # Sorted: PostgreSQL's jsonb does not keep key order, and an export must
            # not depend on the database behind it.
            record = {**{k: row[k] for k in columns}, **{k: metadata[k] for k in sorted(metadata) if k not in row}}
            lines.append(json.dumps(record, ensure_ascii=False))
        return "\n".join(lines) + ("\n" if lines else "")
    extra_columns: list[str] = []
    for row in rows:
        for key in sorted(row["metadata"]):
            if key not in columns and key not in extra_columns:
                extra_columns.append(key)
    flat = []
    for row in rows:
        metadata = row.pop("metadata")
        row["traits"] = ",".join(row["traits"])
        for key in extra_columns:
            value = metadata.get(key, "")
            row[key] = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
        flat.append(row)
    return csv_records_text(columns + extra_columns, flat)


def version_rows(*, version: DatasetVersion) -> list[dict]:
    """A version's items as export rows (traits as a list of codes, ``metadata`` a dict), in item order."""
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
        for item in version_items(version=version)
    ]


def version_export(*, version: DatasetVersion, fmt: str, gold: bool = True) -> str:
    """Serialise a version from its copied values (later corpus edits never show).

    CSV: traits comma-separated, metadata flattened into extra columns after
    ``provenance``. JSONL: traits as a list, metadata keys at the top level.
    Without ``gold`` the traits and theme columns are left out: a version's
    labels are the gold labels of the next round over the same expressions.
    """
    columns = VERSION_COLUMNS if gold else [c for c in VERSION_COLUMNS if c not in ("traits", "theme")]
    return rows_serialise(rows=version_rows(version=version), columns=columns, fmt=fmt)


def round_stats_export(*, stats: dict, fmt: str) -> str:
    """A round's agreement statistics (``round_agreement_stats``) as JSON or as the CSV table."""
    if fmt not in STATS_FORMATS:
        raise ExportError(f"format must be one of {', '.join(STATS_FORMATS)}, not '{fmt}'")
    if fmt == "json":
        return json.dumps(stats, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    return stats_csv(stats)


# The numbers of one label, in CSV column order (confidence intervals as _low/_high pairs).
CSV_COLUMNS = [
    "label",
    "n",
    "percent_agreement",
    "observed_agreement",
    "cohen_kappa",
    "cohen_kappa_ci_low",
    "cohen_kappa_ci_high",
    "krippendorff_alpha",
    "krippendorff_alpha_ci_low",
    "krippendorff_alpha_ci_high",
    "fleiss_kappa",
    "fleiss_kappa_ci_low",
    "fleiss_kappa_ci_high",
    "pabak",
    "prevalence",
    "prevalence_index",
    "bias_index",
    "n_pairable",
]


def stats_csv(stats: dict) -> str:
    """One row per label (the theme, then each trait) with the numbers of the JSON."""
    rows = []
    labels = [("theme", stats["theme"]), *stats["traits"].items()]
    for name, values in labels:
        row = {"label": name}
        for key, value in values.items():
            if key.endswith("_ci"):
                row[f"{key}_low"] = None if value is None else value["low"]
                row[f"{key}_high"] = None if value is None else value["high"]
            elif not isinstance(value, (dict, list)):
                row[key] = value
        rows.append(row)
    return csv_records_text(CSV_COLUMNS, rows)
