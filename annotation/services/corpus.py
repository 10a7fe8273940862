"""Writes to datasets and single expressions (the API's create, update and delete).

Business rules live here, not in serializers: text is stored precomposed (NFC) with whitespace collapsed, as
expression_import stores it, the normalised key is computed with
models.normalize_key, and a duplicate inside a dataset is a ValidationError on
``text`` (``name`` for datasets) rather than an IntegrityError.
Errors are django.core.exceptions.ValidationError so forms, the API and the CLI
can all report them.
"""

import unicodedata
from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, RestrictedError

from core.services.idempotency import idempotent_create

from ..models import Dataset, Expression, Theme, Trait, normalize_key
from .changes import dataset_changed

DATASET_IDEMPOTENCY_SCOPE = "annotation.dataset"
EXPRESSION_IDEMPOTENCY_SCOPE = "annotation.expression"
DATASET_UPDATE_FIELDS = ("name", "description")
EXPRESSION_UPDATE_FIELDS = ("text", "explanation", "kind", "source", "external_id", "theme", "metadata", "traits")


def _clean_text(text: str) -> str:
    """Whitespace collapsed and precomposed (NFC), as the import stores it."""
    return unicodedata.normalize("NFC", " ".join((text or "").split()))


def _unknown_fields(data: dict, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValidationError(f"These fields cannot be changed: {', '.join(unknown)}.")


def _dataset_check_name(dataset: Dataset) -> None:
    clash = Dataset.objects.filter(name=dataset.name).exclude(pk=dataset.pk).exists()
    if clash:
        raise ValidationError({"name": f"A dataset named “{dataset.name}” already exists."})


def _dataset_save(dataset: Dataset) -> Dataset:
    dataset.name = dataset.name.strip()
    _dataset_check_name(dataset)
    dataset.full_clean()
    try:
        with transaction.atomic():
            dataset.save()
    except IntegrityError:
        # Created by someone else between the check and the insert.
        raise ValidationError({"name": f"A dataset named “{dataset.name}” already exists."}) from None
    return dataset


def dataset_create(*, name: str, description: str = "", user=None, idempotency_key: str | None = None) -> Dataset:
    """An empty dataset. A repeat of ``idempotency_key`` returns the first one's, with ``idempotent_repeat`` set."""
    dataset = idempotent_create(
        scope=DATASET_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=Dataset,
        create=lambda: _dataset_save(Dataset(name=name or "", description=description or "", created_by=user)),
    )
    return dataset


def dataset_update(*, dataset: Dataset, data: dict) -> Dataset:
    """Change the name and/or description; keys absent from ``data`` are left alone."""
    _unknown_fields(data, DATASET_UPDATE_FIELDS)
    for fieldname, value in data.items():
        setattr(dataset, fieldname, value)
    return _dataset_save(dataset)


def _delete(instance, label: str) -> None:
    try:
        with transaction.atomic():
            instance.delete()
    except ProtectedError as exc:
        raise ValidationError(_blocked_message(label, exc.protected_objects)) from None
    except RestrictedError as exc:
        raise ValidationError(_blocked_message(label, exc.restricted_objects)) from None


def _blocked_message(label: str, blockers) -> str:
    kinds = sorted({str(obj._meta.verbose_name_plural) for obj in blockers})
    return f"{label} cannot be deleted: {', '.join(kinds)} still refer to it."


def dataset_delete(*, dataset: Dataset) -> None:
    """Delete a dataset and, with it, its expressions."""
    _delete(dataset, f"The dataset “{dataset.name}”")


def _expression_save(expression: Expression, traits: Iterable[Trait] | None) -> Expression:
    expression.text = _clean_text(expression.text)
    expression.explanation = unicodedata.normalize("NFC", (expression.explanation or "").strip())
    expression.normalized_key = normalize_key(expression.text)
    if expression.text:
        _expression_check_unique(expression)
    # The unique constraint was just checked with a message naming the field.
    expression.full_clean(validate_constraints=False)
    try:
        with transaction.atomic():
            expression.save()
            if traits is not None:
                expression.traits.set(traits)
    except IntegrityError:
        raise ValidationError(
            {
                "text": f"“{expression.text}” was added to the dataset “{expression.dataset.name}” at the same time; "
                "it is already there."
            }
        ) from None
    return expression


def _expression_check_unique(expression: Expression) -> None:
    other = (
        Expression.objects.filter(dataset=expression.dataset, normalized_key=expression.normalized_key)
        .exclude(pk=expression.pk)
        .only("pk", "text")
        .first()
    )
    if other is not None:
        raise ValidationError(
            {
                "text": f"“{expression.text}” is already in the dataset “{expression.dataset.name}” as expression "
                f"{other.pk} (“{other.text}”); expressions are compared after Unicode normalisation, case folding "
                "and whitespace collapsing."
            }
        )


def expression_create(
    *,
    dataset: Dataset,
    text: str,
    explanation: str,
    kind: str = "",
    source: str = "",
    external_id: str = "",
    traits: Iterable[Trait] = (),
    theme: Theme | None = None,
    metadata: dict | None = None,
    user=None,
    idempotency_key: str | None = None,
) -> Expression:
    """One expression. A repeat of ``idempotency_key`` returns the first one's, with ``idempotent_repeat`` set."""
    expression = Expression(
        dataset=dataset,
        text=text or "",
        explanation=explanation or "",
        kind=kind or "",
        source=(source or "").strip(),
        external_id=(external_id or "").strip(),
        theme=theme,
        metadata=metadata or {},
    )
    expression = idempotent_create(
        scope=EXPRESSION_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=Expression,
        create=lambda: _expression_save(expression, list(traits)),
    )
    dataset_changed(dataset_id=dataset.pk)
    return expression


def expression_update(*, expression: Expression, data: dict) -> Expression:
    """Change some fields of an expression; keys absent from ``data`` are left alone.

    ``traits`` replaces the whole set. The dataset of an expression cannot change.
    """
    _unknown_fields(data, EXPRESSION_UPDATE_FIELDS)
    traits = data.get("traits")
    for fieldname, value in data.items():
        if fieldname == "traits":
            continue
        if fieldname in ("source", "external_id"):
            value = (value or "").strip()
        setattr(expression, fieldname, value)
    return _expression_save(expression, None if traits is None else list(traits))


def expression_delete(*, expression: Expression) -> None:
    _delete(expression, f"The expression “{expression.text}”")
    dataset_changed(dataset_id=expression.dataset_id)
