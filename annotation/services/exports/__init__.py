"""Every file the annotation app writes: tables (dataset and version exports as CSV or JSONL, agreement
statistics) and hf (a frozen version as a Hugging Face dataset folder with a card and Croissant metadata).
"""

from .hf import HF_FORMAT, VERSION_EXPORT_FORMATS, HfExport, size_category, version_hf_write, version_hf_zip
from .tables import (
    CSV_COLUMNS,
    EXPORT_FORMATS,
    STATS_FORMATS,
    VERSION_COLUMNS,
    ExportError,
    dataset_export,
    round_stats_export,
    rows_serialise,
    stats_csv,
    version_export,
    version_rows,
)

__all__ = [
    "CSV_COLUMNS",
    "EXPORT_FORMATS",
    "ExportError",
    "HF_FORMAT",
    "HfExport",
    "STATS_FORMATS",
    "VERSION_COLUMNS",
    "VERSION_EXPORT_FORMATS",
    "dataset_export",
    "round_stats_export",
    "rows_serialise",
    "size_category",
    "stats_csv",
    "version_export",
    "version_hf_write",
    "version_hf_zip",
    "version_rows",
]
