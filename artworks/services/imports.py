"""Artwork collections: the all-or-nothing import.

An import reads ``artworks.csv`` or ``artworks.jsonl`` (columns ``id``, ``title``, ``artist``,
``date``, ``culture``, ``comment``, ``image``) from a folder, a .zip of that folder, or the
data file itself with its images beside it. Every row is checked before anything is written
and every error names its row and column; image files written before a failure are deleted
again, so a refused import leaves neither rows nor files behind.
"""

import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from core.csv_writer import csv_cell_read
from core.packages import (
    FileRefused,
    FolderPackage,
    ImageUnusable,
    PackageError,
    ZipPackage,
    package_image_read,
    package_open,
    storage_delete,
)
from core.services.idempotency import idempotent_create

from ..models import ArtworkCollection, CollectionArtwork

IMPORT_IDEMPOTENCY_SCOPE = "artworks.collection_import"
DATA_FILES = ("artworks.csv", "artworks.jsonl")
COLUMNS = ("id", "title", "artist", "date", "culture", "comment", "image")
REQUIRED = ("id", "title", "culture", "image")
MAX_LENGTHS = {"id": 100, "title": 300, "artist": 300, "date": 100, "culture": 40}
# Ids become file names (collections/<id>/<key>.<ext>), so they stay plain.
ARTWORK_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_CULTURE = re.compile(r"^[a-z]+(?:[_-][a-z]+)*\Z")


class ArtworkImportError(ValueError):
    """The collection cannot be imported; nothing was written."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


# --- Reading the source --------------------------------------------------------------------------


class _Source:
    """The package and the name of its data file (artworks.csv or artworks.jsonl)."""

    def __init__(self, package: FolderPackage | ZipPackage, data_name: str | None = None):
        self.package = package
        self.data_name = data_name or _pick_data_file(package.top_level_files())

    def read(self, relative: str) -> bytes | None:
        return self.package.read(relative)


def _pick_data_file(names: list[str]) -> str:
    found = [name for name in DATA_FILES if name in names]
    if not found:
        raise ArtworkImportError([_("no artworks.csv or artworks.jsonl found in the folder")])
    if len(found) > 1:
        raise ArtworkImportError([_("both artworks.csv and artworks.jsonl are present; keep one")])
    return found[0]


def _open_source(source, filename: str) -> _Source:
    if isinstance(source, (str, Path)) and Path(source).is_file() and Path(source).suffix.lower() in {".csv", ".jsonl"}:
        # The data file itself: its images are relative to its folder.
        return _Source(FolderPackage(Path(source).parent), data_name=Path(source).name)
    try:
        return _Source(package_open(source=source, markers=DATA_FILES, filename=filename))
    except PackageError as exc:
        raise ArtworkImportError(exc.errors) from None


def _where(row: int, column: str) -> str:
    return _("row %(row)s, column '%(column)s'") % {"row": row, "column": column}


def _read_rows(raw: bytes, data_name: str) -> tuple[list[tuple[int, dict]], list[str]]:
    """``[(row number as a person sees it, {column: text})]`` and file-level errors.

    In the CSV the header is row 1, so the first artwork is row 2; in the JSONL line n is row n.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return [], [_("%(file)s: not UTF-8") % {"file": data_name}]
    if data_name.lower().endswith(".csv"):
        return _read_csv(text, data_name)
    return _read_jsonl(text, data_name)


def _read_csv(text: str, data_name: str) -> tuple[list[tuple[int, dict]], list[str]]:
    import pandas as pd  # where used: core/warmup.py says why

    try:
        # Everything as text: ids like "007" and dates like "1850" stay as written.
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        return [], [_("%(file)s: not a readable CSV file (%(detail)s)") % {"file": data_name, "detail": exc}]
    columns = {str(column).strip().lower(): column for column in frame.columns}
    missing = [column for column in REQUIRED if column not in columns]
    if missing:
        return [], [
            _("%(file)s: column '%(column)s' is missing") % {"file": data_name, "column": column} for column in missing
        ]
    rows = []
    for n, record in enumerate(frame.to_dict("records")):
        # csv_cell_read: a title of "=..." written by one of the app's CSVs comes back without its apostrophe.
        rows.append(
            (n + 2, {column: csv_cell_read(str(record[columns[column]])) for column in COLUMNS if column in columns})
        )
    return rows, []


def _read_jsonl(text: str, data_name: str) -> tuple[list[tuple[int, dict]], list[str]]:
    rows, errors = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(_("row %(row)s: not valid JSON (%(detail)s)") % {"row": number, "detail": exc.msg})
            continue
        if not isinstance(item, dict):
            errors.append(_("row %(row)s: expected a JSON object") % {"row": number})
            continue
        item = {str(key).strip().lower(): value for key, value in item.items()}
        values = {}
        for column in COLUMNS:
            value = item.get(column)
            if value is None:
                value = ""
            elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
                errors.append(f"{_where(number, column)}: " + _("expected text"))
                value = ""
            values[column] = str(value)
        rows.append((number, values))
    return rows, errors


@dataclass
class _Row:
    number: int
    key: str
    title: str
    artist: str
    date: str
    culture: str
    comment: str
    image: bytes
    extension: str


def _check_image(source, number: int, image: str, errors: list[str]) -> tuple[bytes, str] | None:
    where = _where(number, "image")
    if not image:
        errors.append(f"{where}: " + _("required: the path of the image inside the folder"))
        return None
    try:
        return package_image_read(source, image)
    except ImageUnusable as exc:
        errors.append(f"{where}: {exc}")
        return None


def _check_rows(source, rows: list[tuple[int, dict]]) -> tuple[list[_Row], list[str]]:
    errors: list[str] = []
    checked: list[_Row] = []
    seen: dict[str, int] = {}
    for number, values in rows:
        values = {column: (values.get(column) or "").strip() for column in COLUMNS}
        values["culture"] = values["culture"].lower()
        ok = True
        for column in ("id", "title", "culture"):
            if not values[column]:
                errors.append(f"{_where(number, column)}: " + _("required"))
                ok = False
        for column, limit in MAX_LENGTHS.items():
            if len(values[column]) > limit:
                errors.append(f"{_where(number, column)}: " + _("longer than %(n)s characters") % {"n": limit})
                ok = False
        key = values["id"]
        if key:
            if not ARTWORK_KEY.match(key):
                errors.append(
                    f"{_where(number, 'id')}: "
                    + _("“%(id)s”: use letters, digits, '.', '_' and '-' only, starting with a letter or digit")
                    % {"id": key}
                )
                ok = False
            # Case-folded: on some file systems "A.png" and "a.png" are one file.
            elif key.casefold() in seen:
                errors.append(
                    f"{_where(number, 'id')}: "
                    + _("“%(id)s” is also the id of row %(other)s") % {"id": key, "other": seen[key.casefold()]}
                )
                ok = False
            else:
                seen[key.casefold()] = number
        if values["culture"] and not _CULTURE.match(values["culture"]):
            errors.append(
                f"{_where(number, 'culture')}: "
                + _("“%(culture)s”: use lowercase letters, e.g. american or chinese") % {"culture": values["culture"]}
            )
            ok = False
        image = _check_image(source, number, values["image"], errors)
        if ok and image is not None:
            checked.append(
                _Row(
                    number,
                    key,
                    values["title"],
                    values["artist"],
                    values["date"],
                    values["culture"],
                    values["comment"],
                    image[0],
                    image[1],
                )
            )
    if not rows and not errors:
        errors.append(_("the file holds no artworks"))
    return checked, errors


# --- Writing -------------------------------------------------------------------------------------


def artworks_import(
    *,
    name: str,
    source,
    user=None,
    filename: str = "",
    description: str = "",
    idempotency_key: str | None = None,
) -> ArtworkCollection:
    """Validate a whole folder, .zip or data file and create the collection ``name``, or raise ArtworkImportError.

    ``source`` is a folder, a .zip, .csv or .jsonl path, zip bytes or an uploaded zip file.
    A second request with the same ``idempotency_key`` (a double submit) returns the collection the
    first one created, with ``collection.idempotent_repeat`` set; an import that failed leaves the key free.
    """
    collection = idempotent_create(
        scope=IMPORT_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=ArtworkCollection,
        create=lambda: _collection_create(
            name=name, source=source, user=user, filename=filename, description=description
        ),
    )
    return collection


def _collection_create(*, name: str, source, user, filename: str, description: str) -> ArtworkCollection:
    name = (name or "").strip()
    errors: list[str] = []
    if not name:
        errors.append(_("collection: a name is required"))
    elif len(name) > 200:
        errors.append(_("collection: the name is longer than 200 characters"))
    elif ArtworkCollection.objects.filter(name=name).exists():
        errors.append(_("collection: a collection “%(name)s” already exists; choose a new name") % {"name": name})
    reader = _open_source(source, filename)
    try:
        raw = reader.read(reader.data_name)
    except FileRefused as exc:
        raise ArtworkImportError(errors + [exc.message()]) from None
    rows, file_errors = _read_rows(raw or b"", reader.data_name)
    errors += file_errors
    checked, row_errors = _check_rows(reader, rows)
    errors += row_errors
    if errors:
        raise ArtworkImportError(errors)

    written: list[str] = []
    try:
        with transaction.atomic():
            collection = ArtworkCollection.objects.create(
                name=name,
                description=description,
                created_by=user if user is not None and user.is_authenticated else None,
            )
            for position, row in enumerate(checked):
                artwork = CollectionArtwork(
                    collection=collection,
                    key=row.key,
                    title=row.title,
                    artist=row.artist,
                    date=row.date,
                    culture=row.culture,
                    comment=row.comment,
                    image_sha256=hashlib.sha256(row.image).hexdigest(),
                    position=position,
                )
                # upload_to adds the "collections/" folder.
                artwork.image.save(f"{collection.pk}/{row.key}.{row.extension}", ContentFile(row.image), save=False)
                written.append(artwork.image.name)
                artwork.save()
    except IntegrityError:
        storage_delete(written)
        # Two imports of one name at once: the unique constraint decided.
        raise ArtworkImportError(
            [_("collection: a collection “%(name)s” already exists; choose a new name") % {"name": name}]
        ) from None
    except BaseException:
        storage_delete(written)
        raise
    return collection
