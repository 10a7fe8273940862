"""A model's trait suggestions for a dataset, from a file (``expression``, ``traits``, optional ``raw_output``)."""

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from core.services.idempotency import idempotent_create
from core.tables import ImportReport, ImportValidationError, RowError, TableError, cell, read_table

from ...models import Dataset, Expression, SuggestionSet, normalize_key
from ..rounds import suggestion_set_create
from .taxonomy import parse_traits, trait_tokens, unknown_trait_params

SUGGESTION_SET_IDEMPOTENCY_SCOPE = "annotation.suggestion_set"


def suggestion_set_import(
    *,
    dataset: Dataset,
    name: str,
    model_name: str,
    filename: str,
    content: bytes,
    prompt_version: str = "",
    user=None,
    idempotency_key: str | None = None,
) -> SuggestionSet:
    """Attach LLM trait suggestions from a file, all or nothing, like the corpus import.

    An unknown expression or trait code aborts with every error named by row and column.
    A second request with the same ``idempotency_key`` (a double submit, a retried API call)
    returns the set the first one stored, with ``suggestion_set.idempotent_repeat`` set,
    instead of refusing the name as taken.
    """
    suggestion_set = idempotent_create(
        scope=SUGGESTION_SET_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=SuggestionSet,
        create=lambda: _suggestion_set_import(
            dataset=dataset,
            name=name,
            model_name=model_name,
            filename=filename,
            content=content,
            prompt_version=prompt_version,
            user=user,
        ),
    )
    return suggestion_set


def _suggestion_set_import(*, dataset, name, model_name, filename, content, prompt_version, user) -> SuggestionSet:
    report = ImportReport(dataset_name=dataset.name, filename=filename, dry_run=False)
    try:
        columns, records, first_row = read_table(filename, content)
    except TableError as exc:
        report.errors.append(exc.error)
        raise ImportValidationError(report) from None
    by_lower = {c.strip().lower(): c for c in columns}
    for required in ("expression", "traits"):
        if required not in by_lower:
            report.errors.append(RowError(None, required, "required_column_missing", {"columns": ", ".join(columns)}))
    if report.errors:
        raise ImportValidationError(report)
    if SuggestionSet.objects.filter(dataset=dataset, name=name).exists():
        raise ValidationError({"name": _("the dataset already has a suggestion set named '%(name)s'") % {"name": name}})

    traits, traits_by_token = trait_tokens()
    expressions = dict(Expression.objects.filter(dataset=dataset).values_list("normalized_key", "id"))
    seen: dict[int, int] = {}
    rows = []
    for offset, record in enumerate(records):
        row = first_row + offset
        if record is None:
            continue
        text = cell(record.get(by_lower["expression"]))
        expression_id = expressions.get(normalize_key(text))
        if expression_id is None:
            report.errors.append(RowError(row, by_lower["expression"], "unknown_expression", {"value": text}))
            continue
        if expression_id in seen:
            report.errors.append(
                RowError(row, by_lower["expression"], "duplicate_item", {"first_row": seen[expression_id]})
            )
            continue
        seen[expression_id] = row
        found, unknown = parse_traits(record.get(by_lower["traits"]), traits_by_token)
        if unknown:
            report.errors.append(
                RowError(
                    row,
                    by_lower["traits"],
                    "unknown_trait",
                    unknown_trait_params(unknown, traits),
                )
            )
            continue
        raw = cell(record.get(by_lower["raw_output"])) if "raw_output" in by_lower else ""
        rows.append((expression_id, found, raw))
    if report.errors:
        raise ImportValidationError(report)
    return suggestion_set_create(
        dataset=dataset,
        name=name,
        model_name=model_name,
        prompt_version=prompt_version,
        source=filename,
        predictions=[(eid, [t.code for t in found], raw) for eid, found, raw in rows],
        user=user,
    )
