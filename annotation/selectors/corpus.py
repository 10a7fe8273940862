"""Reads of the corpus."""

import difflib
import time
import unicodedata

from django.db.models import F, Q, QuerySet
from django.db.models.signals import post_delete, post_migrate, post_save

from ..models import Dataset, Expression, ImportJob, Theme, Trait, normalize_key


def dataset_list() -> QuerySet[Dataset]:
    return Dataset.objects.annotate(n_expressions=F("expression_count")).select_related("created_by").order_by("name")


def dataset_choices() -> QuerySet[Dataset]:
    """The datasets a form or a request may name, by name."""
    return Dataset.objects.order_by("name")


def dataset_names() -> QuerySet[str]:
    return dataset_choices().values_list("name", flat=True)


def dataset_detail_get(*, pk: int) -> Dataset | None:
    """A dataset as ``dataset_list`` shows it (with ``n_expressions``)."""
    return dataset_list().filter(pk=pk).first()


def dataset_get(*, name: str) -> Dataset | None:
    return Dataset.objects.filter(name=name).first()


def dataset_name_key(name: str) -> str:
    """A dataset name as a person would read it: accents, case and spacing ignored.

    Vietnamese đ is a letter of its own to Unicode, not d with a mark, so NFKD
    alone would keep it.
    """
    decomposed = unicodedata.normalize("NFKD", name or "").replace("đ", "d").replace("Đ", "D")
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(stripped.casefold().split())


# Above this difflib ratio two keys read as a typo of each other ("vivid v1" / "vivid-v1").
NEAR_MATCH_RATIO = 0.85


def dataset_near_matches(*, name: str, limit: int = 5) -> list[Dataset]:
    """Existing datasets a name probably meant: none when a dataset has exactly that name.

    Same key first, then the closest by edit similarity. Datasets are few, so
    they are compared in Python rather than by a database function that
    SQLite and PostgreSQL would spell differently.
    """
    if not (name or "").strip() or Dataset.objects.filter(name=name).exists():
        return []
    key = dataset_name_key(name)
    scored = []
    for dataset in Dataset.objects.only("pk", "name"):
        other = dataset_name_key(dataset.name)
        ratio = 1.0 if other == key else difflib.SequenceMatcher(None, key, other).ratio()
        if ratio >= NEAR_MATCH_RATIO:
            scored.append((-ratio, dataset.name, dataset))
    scored.sort(key=lambda item: item[:2])
    return [dataset for _, _, dataset in scored[:limit]]


def expression_list(
    *, dataset: Dataset | None = None, search: str = "", trait: str = "", theme: str = "", kind: str = ""
) -> QuerySet[Expression]:
    """Expressions of one dataset (or of all), filtered.

    The search ignores case and Unicode composition in the expression text:
    SQLite's LIKE folds ASCII letters only, so "ăn" would never find "Ăn", and
    some keyboards send decomposed (NFD) text. The stored normalized_key is NFC
    and casefolded, so the query is normalised the same way and matched
    against it; the explanation keeps icontains.
    """
    expressions = Expression.objects.select_related("theme").prefetch_related("traits")
    if dataset is not None:
        expressions = expressions.filter(dataset=dataset)
    search = unicodedata.normalize("NFC", search or "").strip()
    if search:
        expressions = expressions.filter(
            Q(normalized_key__contains=normalize_key(search)) | Q(explanation__icontains=search)
        )
    if trait:
        expressions = expressions.filter(traits__code=trait)
    if theme:
        expressions = expressions.filter(theme__code=theme)
    if kind:
        expressions = expressions.filter(kind=kind)
    return expressions.order_by("id")


def expression_get(*, pk: int) -> Expression | None:
    return expression_list().filter(pk=pk).first()


def expression_count(*, dataset: Dataset) -> int:
    return Expression.objects.filter(dataset=dataset).count()


def import_job_list(*, user) -> QuerySet[ImportJob]:
    return ImportJob.objects.filter(created_by=user).defer("content").order_by("-created_at")


def dataset_export_rows(*, dataset: Dataset) -> list[dict]:
    """One row per expression, in id order. Plain rows in two queries: a prefetch would build a
    queryset per expression, which at a corpus's size costs more than the export itself."""
    traits_of: dict[int, list[str]] = {}
    links = (
        Expression.traits.through.objects.filter(expression__dataset=dataset)
        .order_by("trait__number")
        .values_list("expression_id", "trait__code")
    )
    for expression_id, code in links:
        traits_of.setdefault(expression_id, []).append(code)
    fields = ("pk", "external_id", "text", "explanation", "kind", "source", "theme__code", "metadata")
    return [
        {
            "id": external_id,
            "expression": text,
            "explanation": explanation,
            "kind": kind,
            "source": source,
            "traits": traits_of.get(pk, []),
            "theme": theme or "",
            "metadata": metadata,
        }
        for pk, external_id, text, explanation, kind, source, theme, metadata in Expression.objects.filter(
            dataset=dataset
        )
        .order_by("id")
        .values_list(*fields)
    ]


def trait_list() -> QuerySet[Trait]:
    return Trait.objects.order_by("number")


def theme_list() -> QuerySet[Theme]:
    return Theme.objects.order_by("number")


# The taxonomy's keys (trait codes, theme ids by code), read once per process.
_taxonomy_keys: dict = {}
# The wording can change in the admin (in another process): rows are kept this long, so every
# answer on the review page does not re-read 12 rows that change once a project, if ever.
TAXONOMY_ROWS_SECONDS = 30.0


def taxonomy_rows() -> tuple[tuple[Trait, ...], tuple[Theme, ...]]:
    """The traits and themes in their order, with their wording, read at most every 30 s per process.

    A wording edited in the admin shows on every page within ``TAXONOMY_ROWS_SECONDS``; in the
    process that saved it, at once (the same signals empty this cache as the keys').
    """
    cached = _taxonomy_keys.get("rows")
    now = time.monotonic()
    if cached is None or now - cached[0] > TAXONOMY_ROWS_SECONDS:
        cached = (now, tuple(trait_list()), tuple(theme_list()))
        _taxonomy_keys["rows"] = cached
    return cached[1], cached[2]


def trait_codes() -> frozenset[str]:
    """Every trait code, read once per process: validating an answer needs no query.

    Correct for the process's lifetime because keys never change while the app runs: the
    taxonomy is seeded by a migration and the admin keeps codes read-only and refuses adds and
    deletes (only the wording is editable, and these hold no wording). A trait or theme saved or
    deleted in this process, or a migrate or flush run in it (tests), empties the cache all the same.
    """
    if "traits" not in _taxonomy_keys:
        _taxonomy_keys["traits"] = frozenset(Trait.objects.values_list("code", flat=True))
    return _taxonomy_keys["traits"]


def theme_ids() -> dict[str, int]:
    """Theme ids by code, read once per process (see ``trait_codes``)."""
    if "themes" not in _taxonomy_keys:
        _taxonomy_keys["themes"] = dict(Theme.objects.values_list("code", "pk"))
    return _taxonomy_keys["themes"]


def theme_codes() -> dict[int, str]:
    """Theme codes by id, read once per process (see ``trait_codes``): an answer's theme code
    without a join to the theme."""
    if "codes" not in _taxonomy_keys:
        _taxonomy_keys["codes"] = {pk: code for code, pk in theme_ids().items()}
    return _taxonomy_keys["codes"]


def trait_numbers() -> dict[str, int]:
    """Trait numbers by code, read once per process (see ``trait_codes``): an answer's
    ``present_traits`` holds bit number - 1 of each trait marked present."""
    if "numbers" not in _taxonomy_keys:
        _taxonomy_keys["numbers"] = dict(Trait.objects.values_list("code", "number"))
    return _taxonomy_keys["numbers"]


def present_traits_mask(codes) -> int:
    """The bits of the trait codes given (unknown codes have none)."""
    numbers = trait_numbers()
    return sum(1 << (numbers[code] - 1) for code in set(codes) if code in numbers)


def present_traits_codes(mask: int) -> frozenset[str]:
    """The trait codes whose bits ``mask`` holds."""
    table = _taxonomy_keys.setdefault("masks", {})
    if mask not in table:
        table[mask] = frozenset(code for code, number in trait_numbers().items() if mask >> (number - 1) & 1)
    return table[mask]


def trait_codes_forget(**kwargs) -> None:
    """Empty the process's taxonomy keys (a signal receiver; tests that roll a change back call it)."""
    _taxonomy_keys.clear()


for _model in (Trait, Theme):
    post_save.connect(
        trait_codes_forget, sender=_model, dispatch_uid=f"annotation.taxonomy_keys.save.{_model.__name__}"
    )
    post_delete.connect(
        trait_codes_forget, sender=_model, dispatch_uid=f"annotation.taxonomy_keys.delete.{_model.__name__}"
    )
post_migrate.connect(trait_codes_forget, dispatch_uid="annotation.taxonomy_keys.migrate")


def dataset_get_by_id(*, pk: int) -> Dataset | None:
    return Dataset.objects.filter(pk=pk).first()


def import_job_get(*, pk: int, user) -> ImportJob | None:
    """A job as seen by ``user``: only its creator (or a superuser) may see it.

    Another person's job reads as missing rather than forbidden, so job ids
    reveal nothing about other people's uploads.
    """
    jobs = ImportJob.objects.defer("content").select_related("dataset")
    if not user.is_superuser:
        jobs = jobs.filter(created_by=user)
    return jobs.filter(pk=pk).first()


__all__ = [
    "dataset_list",
    "dataset_choices",
    "dataset_names",
    "dataset_detail_get",
    "dataset_get",
    "dataset_name_key",
    "dataset_near_matches",
    "expression_list",
    "expression_get",
    "expression_count",
    "import_job_list",
    "dataset_export_rows",
    "trait_list",
    "theme_list",
    "trait_codes",
    "taxonomy_rows",
    "theme_codes",
    "theme_ids",
    "trait_codes_forget",
    "dataset_get_by_id",
    "import_job_get",
]
