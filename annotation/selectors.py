"""Reads of the corpus."""

from django.db.models import Count, Q, QuerySet

from .models import Dataset, Expression, ImportJob


def dataset_list() -> QuerySet[Dataset]:
    return Dataset.objects.annotate(n_expressions=Count("expressions")).select_related("created_by").order_by("name")


def dataset_get(*, name: str) -> Dataset | None:
    return Dataset.objects.filter(name=name).first()


def expression_list(
    *, dataset: Dataset, search: str = "", trait: str = "", theme: str = "", kind: str = ""
) -> QuerySet[Expression]:
    expressions = Expression.objects.filter(dataset=dataset).select_related("theme").prefetch_related("traits")
    if search:
        expressions = expressions.filter(Q(text__icontains=search) | Q(explanation__icontains=search))
    if trait:
        expressions = expressions.filter(traits__code=trait)
    if theme:
        expressions = expressions.filter(theme__code=theme)
    if kind:
        expressions = expressions.filter(kind=kind)
    return expressions.order_by("id")


def import_job_list(*, user) -> QuerySet[ImportJob]:
    return ImportJob.objects.filter(created_by=user).defer("content").order_by("-created_at")


def dataset_export_rows(*, dataset: Dataset) -> list[dict]:
    expressions = (
        Expression.objects.filter(dataset=dataset).select_related("theme").prefetch_related("traits").order_by("id")
    )
    rows = []
    for expression in expressions:
        trait_codes = [t.code for t in sorted(expression.traits.all(), key=lambda t: t.number)]
        rows.append(
            {
                "id": expression.external_id,
                "expression": expression.text,
                "explanation": expression.explanation,
                "kind": expression.kind,
                "source": expression.source,
                "traits": trait_codes,
                "theme": expression.theme.code if expression.theme else "",
                "metadata": expression.metadata,
            }
        )
    return rows
