"""Reading an uploaded package of files: a folder, or a .zip of it, from a path, bytes or an upload.

Shared by the imports that take a data file plus images (study packages, artwork
collections). Sizes are checked before anything is read or inflated, so neither a huge
upload nor a zip bomb is loaded (core/files.py holds the archive checks), and no
path outside the folder is ever read.
"""

import contextlib
import re
import zipfile
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.files.storage import default_storage
from django.utils.translation import gettext as _

from core.files import ArchiveError, ImageRefused, image_format, svg_rasterise, zip_open, zip_read

# What an image of a package may be (allowlist), and the extension each readable format is stored with.
IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".webp", ".gif", ".svg"}
RASTER_FORMATS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp", "GIF": "gif"}


class PackageError(ValueError):
    """The package cannot be opened; ``errors`` are messages for the person importing it."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


class FileRefused(Exception):
    """One file of the package cannot be read; ``message()`` says why."""

    def __init__(self, name: str, text: str = ""):
        super().__init__(name)
        self.name, self.text = name, text

    def message(self) -> str:
        return self.text


class TooLarge(FileRefused):
    """One file of the package is over the import limit."""

    def __init__(self, name: str, size: int):
        super().__init__(name)
        self.size = size

    def message(self) -> str:
        return too_large_message(self.name, self.size)


def max_bytes() -> int:
    return settings.VIVID_IMPORT_MAX_BYTES


def too_large_message(name: str, size: int) -> str:
    return _("%(name)s: %(size)s bytes; the limit is %(limit)s bytes") % {
        "name": name,
        "size": f"{size:,}",
        "limit": f"{max_bytes():,}",
    }


class FolderPackage:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()

    def top_level_files(self) -> list[str]:
        return [path.name for path in self.root.iterdir() if path.is_file()]

    def read(self, relative: str) -> bytes | None:
        path = (self.root / relative).resolve()
        # A symlink may point outside the folder even when the written path does not.
        if not path.is_relative_to(self.root) or not path.is_file():
            return None
        size = path.stat().st_size
        if size > max_bytes():
            raise TooLarge(relative, size)
        return path.read_bytes()


class ZipPackage:
    """A zip holding the package at its root or, as a zipped folder does, in one top-level folder.

    The folder is the one holding one of ``markers`` (the data file names); ``found`` is
    False when neither the root nor exactly one top-level folder holds one.
    """

    def __init__(self, archive: zipfile.ZipFile, markers: tuple[str, ...], name: str = "upload"):
        self.archive = archive
        self.name = name
        self.infos = {
            info.filename: info
            for info in archive.infolist()
            if not info.is_dir() and not info.filename.startswith("__MACOSX/")
        }
        self.prefix = ""
        self.found = any(name in self.infos for name in markers)
        if not self.found:
            tops = {name.split("/", 1)[0] for name in self.infos if "/" in name}
            candidates = [top for top in tops if any(f"{top}/{marker}" in self.infos for marker in markers)]
            if len(candidates) == 1:
                self.prefix, self.found = candidates[0] + "/", True

    def top_level_files(self) -> list[str]:
        inside = [name[len(self.prefix) :] for name in self.infos if name.startswith(self.prefix)]
        return [name for name in inside if "/" not in name]

    def read(self, relative: str) -> bytes | None:
        info = self.infos.get(self.prefix + relative)
        if info is None:
            return None
        # The declared sizes were checked when the zip was opened; this read never inflates past them.
        if info.file_size > max_bytes():
            raise TooLarge(relative, info.file_size)
        try:
            return zip_read(self.archive, info, name=self.name)
        except ArchiveError as exc:
            raise FileRefused(relative, str(exc)) from None


def package_open(*, source, markers: tuple[str, ...], filename: str = "") -> FolderPackage | ZipPackage:
    """``source`` is a folder or .zip path, zip bytes, or an uploaded zip file."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            return FolderPackage(path)
        if path.is_file():
            if path.stat().st_size > max_bytes():
                raise PackageError([too_large_message(path.name, path.stat().st_size)])
            return _zip(path.read_bytes(), path.name, markers)
        raise PackageError([_("%(path)s: no such folder or .zip file") % {"path": path}])
    name = filename or getattr(source, "name", "") or "upload"
    if isinstance(source, (bytes, bytearray)):
        data = bytes(source)
    elif hasattr(source, "read"):
        size = getattr(source, "size", None)
        if size is not None and size > max_bytes():
            raise PackageError([too_large_message(name, size)])
        if hasattr(source, "seek"):
            source.seek(0)
        data = source.read()
    else:
        raise TypeError(f"unsupported package source {type(source).__name__}")
    if len(data) > max_bytes():
        raise PackageError([too_large_message(name, len(data))])
    return _zip(data, name, markers)


def _zip(data: bytes, name: str, markers: tuple[str, ...]) -> ZipPackage:
    try:
        archive = zip_open(data, name=name)
    except ArchiveError as exc:
        raise PackageError([str(exc)]) from None
    return ZipPackage(archive, markers, name)


def storage_delete(names: list[str]) -> None:
    """Remove files an import wrote before it failed; a file already gone is no error."""
    for name in names:
        with contextlib.suppress(OSError):
            default_storage.delete(name)


class ImageUnusable(Exception):
    """An image a package names cannot be used; ``str()`` is the message for the person importing it."""


def package_image_read(package: FolderPackage | ZipPackage, image: str) -> tuple[bytes, str]:
    """The image at ``image`` inside the package, as (content, stored extension).

    The path must stay inside the package, the name must have an allowed extension and the
    content must be a readable image. An SVG is drawn to PNG: it is stored and served only as
    a raster, so nothing an SVG carries (script, links) survives.
    """
    path = PurePosixPath(image.replace("\\", "/"))
    if image.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", image) or path.is_absolute():
        raise ImageUnusable(_("“%(path)s” is absolute; give a path inside the package") % {"path": image})
    if ".." in path.parts:
        raise ImageUnusable(_("“%(path)s” leaves the package folder") % {"path": image})
    suffix = path.suffix.lower()
    if suffix not in IMAGE_EXTENSIONS:
        raise ImageUnusable(_("“%(path)s” is not a PNG, JPEG, WebP, GIF or SVG file") % {"path": image})
    try:
        content = package.read(path.as_posix())
    except FileRefused as exc:
        raise ImageUnusable(exc.message()) from None
    if content is None:
        raise ImageUnusable(_("“%(path)s” is not in the package") % {"path": image})
    try:
        if suffix == ".svg":
            return svg_rasterise(content), "png"
        extension = RASTER_FORMATS.get(image_format(content))
    except ImageRefused as exc:
        raise ImageUnusable(_("“%(path)s”: %(reason)s") % {"path": image, "reason": exc}) from None
    if extension is None:
        raise ImageUnusable(_("“%(path)s” is not a readable PNG, JPEG, WebP, GIF or SVG image") % {"path": image})
    return content, extension
