"""Untrusted files: zip archives, images and SVGs that people upload, and how stored ones are served.

annotation is the lowest app, so the study and evaluation imports and views use these too.

- Zip archives (packages, collections, .xlsx workbooks) are checked on their central
  directory before any entry is inflated: the number of entries, the total uncompressed
  size and the compression ratio. Entries are then inflated in chunks and never past the
  size their header declares.
- Raster images are opened with Pillow's pixel limit, its bomb warning counting as an error.
- SVGs are never stored: they are rasterised to PNG with cairosvg, which fetches nothing.
- A stored file is served with a Content-Type from an allowlist, nosniff, and a policy that
  lets no script run even if the browser renders it as a document.
"""

import copy
import io
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import PurePosixPath

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _

# The inline types a stored image may be served as, by the extension its import gave it
# (the extension comes from the format Pillow detected, never from the uploaded name).
IMAGE_CONTENT_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}
# Downloads the app writes itself (exports): kept as they are, always as an attachment.
DOWNLOAD_CONTENT_TYPES = {
    "text/csv",
    "text/plain",
    "application/json",
    "application/jsonl",
    "application/x-ndjson",
    "application/zip",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
# Figures the app draws itself (core.figures), kept only on a response the app wrote: an SVG or PDF
# stored from an upload (an SVG from before rasterising) is an octet-stream all the same.
DRAWN_CONTENT_TYPES = {"image/svg+xml", "application/pdf"}
UNTRUSTED_FILE_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"
# An SVG is drawn at most this many pixels on its longer side (scaled down to fit).
RASTER_MAX_SIDE = 4096
# Widths of the smaller copies of an imported artwork image: a phone, a phone's 2x screen or a
# laptop, a large screen. No copy is made as wide as the original or wider: that is the original.
VARIANT_WIDTHS = (480, 960, 1600)
# WebP cannot hold a side longer than this: a copy that would be taller is not made.
WEBP_MAX_SIDE = 16383
ORIENTATION_TAG = 0x0112
# Entries smaller than this are not held to the ratio: a few KB of blanks compress a lot and harm no one.
RATIO_MIN_BYTES = 64 * 1024
_CHUNK = 64 * 1024


class ArchiveError(ValueError):
    """The archive is refused; the message names it (and the entry) for the person importing it."""


class ImageRefused(ValueError):
    """The image cannot be used; ``str()`` says why, for the person importing it."""


# --- Zip archives --------------------------------------------------------------------------------


def _limits() -> tuple[int, int, int]:
    return settings.VIVID_IMPORT_MAX_BYTES, settings.VIVID_IMPORT_MAX_ENTRIES, settings.VIVID_IMPORT_MAX_RATIO


def _too_many_entries(name: str, count: int, limit: int) -> ArchiveError:
    return ArchiveError(
        _("%(name)s: the zip holds %(n)s files; the limit is %(limit)s")
        % {"name": name, "n": f"{count:,}", "limit": f"{limit:,}"}
    )


def _entries_check(data: bytes, *, name: str) -> None:
    """Refuse too many entries from the end record alone: zipfile builds an object per entry
    while it opens the archive, hundreds of thousands for a few MB of directory."""
    limit = settings.VIVID_IMPORT_MAX_ENTRIES
    try:
        # zipfile's own reader of the end record (zip64 included); private, hence the fallback.
        end = zipfile._EndRecData(io.BytesIO(data))
        count = end[zipfile._ECD_ENTRIES_TOTAL] if end else None
    except (OSError, ValueError, IndexError, TypeError, zipfile.BadZipFile):
        count = None
    if count is not None and count > limit:
        raise _too_many_entries(name, count, limit)


def zip_open(data: bytes, *, name: str) -> zipfile.ZipFile:
    """Open zip bytes and check its central directory (see ``zip_check``), or raise ArchiveError."""
    _entries_check(data, name=name)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise ArchiveError(_("%(name)s: not a zip file") % {"name": name}) from None
    zip_check(archive, name=name)
    return archive


def zip_check(archive: zipfile.ZipFile, *, name: str) -> None:
    """Refuse a zip whose directory lists too many entries, too many bytes in all, or a bomb-like ratio.

    Nothing is inflated here: only the sizes the central directory declares are read.
    ``zip_read`` then holds every entry to its declared size.
    """
    max_bytes, max_entries, max_ratio = _limits()
    infos = archive.infolist()
    if len(infos) > max_entries:
        raise _too_many_entries(name, len(infos), max_entries)
    total = sum(info.file_size for info in infos)
    if total > max_bytes:
        raise ArchiveError(
            _("%(name)s: the files in the zip add up to %(size)s bytes uncompressed; the limit is %(limit)s bytes")
            % {"name": name, "size": f"{total:,}", "limit": f"{max_bytes:,}"}
        )
    for info in infos:
        if info.file_size >= RATIO_MIN_BYTES and info.file_size > max_ratio * max(info.compress_size, 1):
            raise ArchiveError(
                _("%(name)s: “%(entry)s” is compressed %(ratio)s to 1; the limit is %(limit)s to 1")
                % {
                    "name": name,
                    "entry": info.filename,
                    "ratio": f"{info.file_size // max(info.compress_size, 1):,}",
                    "limit": max_ratio,
                }
            )


def _damaged(name: str, entry: str) -> ArchiveError:
    return ArchiveError(
        _("%(name)s: “%(entry)s” is damaged or holds more than the size its header declares")
        % {"name": name, "entry": entry}
    )


def _stream(archive: zipfile.ZipFile, info: zipfile.ZipInfo, *, name: str, keep: bool) -> bytes:
    """Inflate one entry in chunks, never more than its declared size plus one byte.

    zipfile would stop quietly at the declared size; asked for one byte more, it shows an
    entry whose header understates its size, which is refused right there.
    """
    parts: list[bytes] = []
    seen = 0
    probe = copy.copy(info)
    probe.file_size = info.file_size + 1
    try:
        with archive.open(probe) as handle:
            while True:
                chunk = handle.read(min(_CHUNK, info.file_size + 1 - seen))
                if not chunk:
                    break
                seen += len(chunk)
                if seen > info.file_size:
                    raise _damaged(name, info.filename)
                if keep:
                    parts.append(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError) as exc:
        if isinstance(exc, ArchiveError):
            raise
        raise _damaged(name, info.filename) from None
    if seen != info.file_size:
        raise _damaged(name, info.filename)
    return b"".join(parts)


def zip_read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, *, name: str) -> bytes:
    """The bytes of one entry, inflated with the bounds of ``_stream``; raises ArchiveError."""
    return _stream(archive, info, name=name, keep=True)


def zip_verify(data: bytes, *, name: str) -> None:
    """Check a zip (an .xlsx workbook) whole before a library that trusts it reads it.

    The directory is checked, then every entry is inflated in chunks and thrown away, so an
    entry that inflates past its declared size is refused before anything is kept.
    """
    archive = zip_open(data, name=name)
    with archive:
        for info in archive.infolist():
            _stream(archive, info, name=name, keep=False)


# --- Images --------------------------------------------------------------------------------------


def image_format(content: bytes) -> str | None:
    """Pillow's format name of a raster image (PNG, JPEG, ...), None when it is unreadable.

    An image over Pillow's pixel limit (``Image.MAX_IMAGE_PIXELS``) raises ImageRefused,
    even where Pillow itself would only warn.
    """
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(content)) as image:
                image_format, (width, height) = image.format, image.size
                limit = Image.MAX_IMAGE_PIXELS
                if limit and width * height > limit:
                    raise Image.DecompressionBombError(f"{width}x{height}")
                image.verify()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageRefused(
            _("the image has more pixels than the limit of %(limit)s") % {"limit": f"{Image.MAX_IMAGE_PIXELS:,}"}
        ) from None
    except SoftTimeLimitExceeded:
        raise  # the task's time is up: not a verdict on the image
    except Exception:
        # Pillow raises many kinds (OSError, SyntaxError, ValueError, ...): all mean unusable.
        return None
    return image_format


@dataclass(frozen=True)
class ImageVariant:
    width: int
    height: int
    content: bytes  # WebP


def image_variants(content: bytes, widths: tuple[int, ...] = VARIANT_WIDTHS) -> tuple[int, int, list[ImageVariant]]:
    """The image's (width, height) as a browser shows it, and a WebP copy for each of ``widths``
    narrower than it, narrowest first; or raise ImageRefused.

    The copies carry no metadata (no EXIF: no camera, place or date of a photograph), are turned
    as the EXIF orientation says (the browser turns the original the same way), are in sRGB, and
    hold the first frame of an animation. Pillow's pixel limit holds, as at import.
    """
    from PIL import Image, ImageOps

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(content)) as opened:
                limit = Image.MAX_IMAGE_PIXELS
                if limit and opened.size[0] * opened.size[1] > limit:
                    raise Image.DecompressionBombError(f"{opened.size}")
                width, height = opened.size
                if opened.getexif().get(ORIENTATION_TAG) in (5, 6, 7, 8):
                    width, height = height, width  # turned a quarter: the browser shows it the other way up
                if opened.format == "JPEG" and widths:
                    # A JPEG decodes at 1/2, 1/4 or 1/8 of its size for a fraction of the memory and time
                    # (a 24-megapixel photograph: 18 MB instead of 72), never smaller than the widest copy.
                    opened.draft(opened.mode, (max(widths), max(widths)))
                image = _srgb(ImageOps.exif_transpose(opened))
                variants = []
                for target in sorted(set(widths)):
                    scaled = max(1, round(height * target / width))
                    if target >= width or scaled > WEBP_MAX_SIDE:
                        continue
                    copy_ = image.resize((target, scaled), Image.Resampling.LANCZOS, reducing_gap=3.0)
                    buffer = io.BytesIO()
                    copy_.save(buffer, format="WEBP", quality=80, method=4)
                    variants.append(ImageVariant(target, scaled, buffer.getvalue()))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageRefused(
            _("the image has more pixels than the limit of %(limit)s") % {"limit": f"{Image.MAX_IMAGE_PIXELS:,}"}
        ) from None
    except SoftTimeLimitExceeded:
        raise  # the task's time is up: not a verdict on the image
    except Exception as exc:
        # A file whose header reads but whose pixels do not (truncated, damaged): Pillow raises many kinds.
        detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ImageRefused(_("the image cannot be decoded (%(detail)s)") % {"detail": detail}) from None
    return width, height, variants


def _srgb(image):
    """``image`` as RGB or RGBA in sRGB: WebP takes no palette, CMYK or 16-bit modes, and the copies
    drop the colour profile, so colours are converted to the one browsers assume."""
    from PIL import ImageCms

    image.load()
    has_alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    mode = "RGBA" if has_alpha else "RGB"
    profile = image.info.get("icc_profile")
    if profile:
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(profile))
            if image.mode not in ("RGB", "RGBA", "CMYK"):
                image = image.convert(mode)
            converted = ImageCms.profileToProfile(
                image, source, ImageCms.createProfile("sRGB"), outputMode="RGBA" if image.mode == "RGBA" else "RGB"
            )
            if converted is not None:
                return converted
        except (ImageCms.PyCMSError, OSError, ValueError):
            pass  # a broken profile: the pixels as they are
    if image.mode == "I;16" or image.mode == "I":
        # 16-bit greyscale would be clipped to white by a plain conversion.
        image = image.point(lambda value: value / 256).convert("L")
    return image if image.mode == mode else image.convert(mode)


def _svg_fetch(url, resource_type):
    """cairosvg's own safe fetcher (data: URLs only, anything else is an empty SVG), passed
    explicitly so no default can widen it, with the embedded images held to the same limits."""
    from cairosvg.url import safe_fetch

    data = safe_fetch(url, resource_type)
    if data[:2] == b"\x1f\x8b":
        # cairosvg would gunzip an embedded .svgz without a bound.
        raise ImageRefused(_("a compressed SVG is embedded in the SVG"))
    if not data.lstrip()[:1] == b"<" and image_format(data) is None:
        # cairo decodes an embedded PNG without any pixel limit: Pillow checks it first.
        raise ImageRefused(_("an image embedded in the SVG is not readable"))
    return data


class _SizeProbe(Exception):
    def __init__(self, width: float, height: float):
        super().__init__(width, height)
        self.width, self.height = width, height


def _surface_class():
    from cairosvg.surface import PNGSurface

    class BoundedPNGSurface(PNGSurface):
        """Refuses to allocate a canvas over the bound; the caller learns the size and draws it smaller."""

        def _create_surface(self, width, height):
            if not (0 < width <= RASTER_MAX_SIDE and 0 < height <= RASTER_MAX_SIDE):
                raise _SizeProbe(width, height)
            return super()._create_surface(width, height)

    return BoundedPNGSurface


def svg_rasterise(content: bytes) -> bytes:
    """Draw an SVG as a PNG no larger than RASTER_MAX_SIDE per side, or raise ImageRefused.

    Scripts, event handlers and links cannot survive a raster. Nothing outside the file
    is fetched (no http, no file paths; data: URLs only) and XML entities are refused.
    """
    max_bytes = settings.VIVID_IMPORT_MAX_BYTES
    if content[:2] == b"\x1f\x8b":
        # cairosvg would gunzip an .svgz whole; inflate it here within the import limit.
        inflater = zlib.decompressobj(wbits=31)
        try:
            content = inflater.decompress(content, max_bytes + 1)
        except zlib.error:
            raise ImageRefused(_("not a readable SVG image (damaged gzip data)")) from None
        if len(content) > max_bytes:
            raise ImageRefused(_("the compressed SVG inflates past %(limit)s bytes") % {"limit": f"{max_bytes:,}"})
    surface = _surface_class()
    size: dict = {}
    for _attempt in range(2):
        try:
            with warnings.catch_warnings():
                from PIL import Image

                warnings.simplefilter("error", Image.DecompressionBombWarning)
                png = surface.convert(bytestring=content, unsafe=False, url_fetcher=_svg_fetch, **size)
        except _SizeProbe as probe:
            if size or not (probe.width > 0 and probe.height > 0) or probe.width == float("inf"):
                raise ImageRefused(_("the SVG has no drawable size (width and height must be above 0)")) from None
            scale = RASTER_MAX_SIDE / max(probe.width, probe.height)
            size = {
                "output_width": max(1, round(probe.width * scale)),
                "output_height": max(1, round(probe.height * scale)),
            }
            continue
        except SoftTimeLimitExceeded:
            raise  # the task's time is up: not a verdict on the image
        except Exception as exc:
            # lxml, defusedxml, cairo and cairosvg each raise their own kinds for a broken file.
            detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise ImageRefused(_("not a readable SVG image (%(detail)s)") % {"detail": detail}) from None
        return png
    raise ImageRefused(_("the SVG has no drawable size (width and height must be above 0)"))


# --- Serving stored files ------------------------------------------------------------------------


def untrusted_file_response(response, *, filename: str, inline: bool = False, drawn: bool = False):
    """Make a response carrying a stored or exported file safe to open, and return it.

    With ``inline`` an image whose (validated) extension is on the allowlist is shown as
    that image type; anything else becomes an attachment, typed application/octet-stream
    unless it is one of the app's own download formats (or, with ``drawn``, a figure the app drew).
    Every such response gets nosniff
    and a policy that sandboxes it and allows no script, so a file a browser would render
    as a document still cannot run anything on this origin. django-csp leaves a response
    that already has the header as it is.
    """
    extension = PurePosixPath(filename).suffix.lower()
    current = (response.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    if inline and extension in IMAGE_CONTENT_TYPES:
        response["Content-Type"] = IMAGE_CONTENT_TYPES[extension]
        response["Content-Disposition"] = content_disposition_header(False, PurePosixPath(filename).name)
    else:
        if current not in DOWNLOAD_CONTENT_TYPES and not (drawn and current in DRAWN_CONTENT_TYPES):
            response["Content-Type"] = "application/octet-stream"
        response["Content-Disposition"] = content_disposition_header(True, PurePosixPath(filename).name)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = UNTRUSTED_FILE_CSP
    return response
