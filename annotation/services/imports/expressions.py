"""The corpus import: expressions from a file into a dataset, all or nothing.

Views (through import jobs), the API, the CLI and Celery tasks all call ``expression_import``.
"""

import math
import unicodedata

from django.conf import settings
from django.db import IntegrityError, transaction

from core.tables import (
    ImportReport,
    ImportValidationError,
    RowError,
    TableError,
    cell,
    read_table,
    render_message,
)

from ...models import Dataset, Expression, ExpressionKind, Trait, normalize_key
from ...selectors.corpus import dataset_near_matches
from ..changes import dataset_changed
from .taxonomy import parse_traits, theme_tokens, trait_tokens, unknown_trait_params

REQUIRED_FIELDS = ("expression", "explanation")
OPTIONAL_FIELDS = ("kind", "source", "id", "traits", "theme")
KNOWN_FIELDS = REQUIRED_FIELDS + OPTIONAL_FIELDS
PREVIEW_ROWS = 20


def parse_column_map(spec: str | None) -> dict[str, str]:
    """Parse ``expression=Idiom,explanation=Meaning`` into {field: source column}."""
    if not spec:
        return {}
    mapping = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError(f"--map entry '{part.strip()}' must look like field=Column.")
        target, source = (s.strip() for s in part.split("=", 1))
        if target.lower() not in KNOWN_FIELDS:
            raise ValueError(f"--map field '{target}' is not one of {', '.join(KNOWN_FIELDS)}.")
        if not source:
            raise ValueError(f"--map field '{target}' names no source column.")
        mapping[target.lower()] = source
    return mapping


def _resolve_columns(columns: list[str], column_map: dict[str, str]) -> tuple[dict[str, str], list[RowError]]:
    """Map canonical fields to the file's column names (case-insensitive)."""
    by_lower = {}
    for column in columns:
        by_lower.setdefault(column.strip().lower(), column)
    resolved, errors = {}, []
    for fieldname in KNOWN_FIELDS:
        wanted = column_map.get(fieldname)
        if wanted is not None:
            actual = by_lower.get(wanted.strip().lower())
            if actual is None:
                errors.append(RowError(None, wanted, "mapped_column_missing", {"field": fieldname}))
                continue
            resolved[fieldname] = actual
        elif fieldname in by_lower:
            resolved[fieldname] = by_lower[fieldname]
    for fieldname in REQUIRED_FIELDS:
        if fieldname not in resolved and fieldname not in column_map:
            errors.append(RowError(None, fieldname, "required_column_missing", {"columns": ", ".join(columns) or "-"}))
    return resolved, errors


def expression_import(
    *,
    dataset_name: str,
    filename: str,
    content: bytes,
    column_map: dict[str, str] | None = None,
    user=None,
    dry_run: bool = False,
) -> ImportReport:
    """Import expressions from a file into a dataset, all or nothing.

    The dataset is created if missing. Duplicates (within the file or against
    the dataset, on the normalised key) are skipped and reported; any invalid
    row raises ImportValidationError and nothing is written.
    """
    dataset_name = (dataset_name or "").strip()
    report = ImportReport(dataset_name=dataset_name, filename=filename, dry_run=dry_run)
    column_map = column_map or {}

    def fail(row, column, code, **params):
        report.errors.append(RowError(row, column, code, params))

    if not dataset_name:
        fail(None, "dataset", "dataset_required")
        raise ImportValidationError(report)
    limit = settings.VIVID_IMPORT_MAX_BYTES
    if len(content) > limit:
        fail(None, None, "too_large", filename=filename, size=f"{len(content):,}", limit=f"{limit:,}")
        raise ImportValidationError(report)
    try:
        columns, records, first_row = read_table(filename, content)
    except TableError as exc:
        report.errors.append(exc.error)
        raise ImportValidationError(report) from None

    report.columns = columns
    resolved, column_errors = _resolve_columns(columns, column_map)
    report.errors.extend(column_errors)
    if report.errors:
        raise ImportValidationError(report)
    mapped_sources = set(resolved.values())
    report.metadata_columns = [c for c in columns if c not in mapped_sources]

    traits, traits_by_token = trait_tokens()
    themes, themes_by_token = theme_tokens()
    kinds = {k.value: k.value for k in ExpressionKind} | {k.label.lower(): k.value for k in ExpressionKind}

    dataset = Dataset.objects.filter(name=dataset_name).first()
    report.new_dataset = dataset is None
    if report.new_dataset:
        report.near_matches = [d.name for d in dataset_near_matches(name=dataset_name)]
    existing_keys = (
        set(Expression.objects.filter(dataset=dataset).values_list("normalized_key", flat=True)) if dataset else set()
    )
    seen_in_file: dict[str, int] = {}
    pending: list[tuple[Expression, list[Trait]]] = []

    for offset, record in enumerate(records):
        row = first_row + offset
        if record is None:
            continue
        report.rows += 1
        values = {f: record.get(col) for f, col in resolved.items()}
        # Stored precomposed so that display, search and exports agree whatever the source used.
        text = unicodedata.normalize("NFC", " ".join(cell(values.get("expression")).split()))
        explanation = unicodedata.normalize("NFC", cell(values.get("explanation")))
        row_ok = True
        if not text:
            fail(row, resolved["expression"], "expression_empty")
            row_ok = False
        if not explanation:
            fail(row, resolved["explanation"], "explanation_empty")
            row_ok = False
        kind_raw = cell(values.get("kind")).lower()
        kind = kinds.get(kind_raw, None) if kind_raw else ""
        if kind is None:
            fail(row, resolved["kind"], "unknown_kind", value=kind_raw)
            row_ok = False
        row_traits, unknown = parse_traits(values.get("traits"), traits_by_token)
        if unknown:
            fail(
                row,
                resolved["traits"],
                "unknown_trait",
                **unknown_trait_params(unknown, traits),
            )
            row_ok = False
        theme_raw = cell(values.get("theme")).lower()
        theme = themes_by_token.get(theme_raw) if theme_raw else None
        if theme_raw and theme is None:
            fail(
                row,
                resolved["theme"],
                "unknown_theme",
                value=theme_raw,
                codes=", ".join(t.code for t in themes),
                count=len(themes),
            )
            row_ok = False
        if not row_ok:
            continue

        key = normalize_key(text)
        if key in seen_in_file:
            report.skipped_duplicates += 1
            report.duplicates.append(_duplicate(row, text, "duplicate_in_file", first_row=seen_in_file[key]))
            continue
        seen_in_file[key] = row
        if key in existing_keys:
            report.skipped_duplicates += 1
            report.duplicates.append(_duplicate(row, text, "duplicate_in_dataset"))
            continue

        metadata = {c: _json_safe(record.get(c)) for c in report.metadata_columns if cell(record.get(c)) != ""}
        expression = Expression(
            text=text,
            normalized_key=key,
            explanation=explanation,
            kind=kind,
            source=cell(values.get("source")),
            external_id=cell(values.get("id")),
            theme=theme,
            metadata=metadata,
        )
        pending.append((expression, row_traits))
        if len(report.preview) < PREVIEW_ROWS:
            report.preview.append(
                {
                    "row": row,
                    "expression": expression.text,
                    "explanation": explanation,
                    "kind": kind,
                    "source": expression.source,
                    "id": expression.external_id,
                    "traits": [t.code for t in row_traits],
                    "theme": theme.code if theme else "",
                    "metadata": metadata,
                }
            )

    if report.errors:
        raise ImportValidationError(report)
    report.created = len(pending)
    if dry_run:
        return report

    try:
        with transaction.atomic():
            dataset, _ = Dataset.objects.get_or_create(name=dataset_name, defaults={"created_by": user})
            for expression, _traits in pending:
                expression.dataset = dataset
            created = Expression.objects.bulk_create([e for e, _ in pending], batch_size=500)
            links = [
                Expression.traits.through(expression_id=e.pk, trait_id=t.pk)
                for e, (_, row_traits) in zip(created, pending, strict=True)
                for t in row_traits
            ]
            Expression.traits.through.objects.bulk_create(links, batch_size=2000)
            dataset_changed(dataset_id=dataset.pk)
    except IntegrityError:
        # Another import added one of these expressions between our check and
        # our insert; the transaction rolled back, so the caller may retry.
        report.created = 0
        report.errors.append(RowError(None, None, "concurrent_change"))
        raise ImportValidationError(report) from None
    return report


def _duplicate(row: int, text: str, code: str, **params) -> dict:
    return {"row": row, "expression": text, "code": code, "params": params, "reason": render_message(code, params)}


def _json_safe(value):
    if isinstance(value, (str, int, bool, list, dict)) or value is None:
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    return str(value)
