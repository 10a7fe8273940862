"""Hostile uploads for the import tests: SVGs that script the page in ways a denylist misses,
and zip bombs built in memory in milliseconds.

Compressing a gigabyte would take seconds; instead one deflate block of a mebibyte is made
once and repeated (each block ends on a full flush, so a copy needs nothing before it), and
the zip around it is written by hand with the sizes it really inflates to, or with lies.
"""

import io
import struct
import zipfile
import zlib

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NAMESPACED_SCRIPT = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30">'
    '<s:script xmlns:s="http://www.w3.org/2000/svg">alert(document.cookie)</s:script>'
    '<rect width="40" height="30" fill="#0a0"/></svg>'
)
ENTITY_JAVASCRIPT = (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="30">'
    '<a xlink:href="&#106;avascript&#58;alert(1)"><rect width="40" height="30" fill="#00a"/></a></svg>'
)

MIB = 1 << 20
GIB = 1 << 30
# zlib.crc32 of 2**30 zero bytes, computed once (a second of CPU each time otherwise).
ZEROS_GIB_CRC = 0x5B64C2B0


def _piece(data: bytes, *, final: bool = False) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if final else zlib.Z_FULL_FLUSH)


def deflate_repeated(unit: bytes, times: int, *, prefix: bytes = b"", suffix: bytes = b"") -> bytes:
    """A raw deflate stream inflating to ``prefix + unit * times + suffix``."""
    return _piece(prefix) + _piece(unit) * times + _piece(suffix, final=True)


def zip_entries(entries: list[tuple[str, bytes, int, int, int]]) -> bytes:
    """A zip of ``(name, data, method, crc, declared size)``; ``data`` is already compressed."""
    out = io.BytesIO()
    central = []
    for name, data, method, crc, size in entries:
        offset = out.tell()
        raw = name.encode()
        # Version 20, no flags, 1980-01-01 00:00.
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(data), size, len(raw), 0))
        out.write(raw + data)
        central.append(
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                method,
                0,
                0x21,
                crc,
                len(data),
                size,
                len(raw),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + raw
        )
    start = out.tell()
    directory = b"".join(central)
    out.write(directory)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(directory), start, 0))
    return out.getvalue()


def stored(name: str, content: bytes) -> tuple[str, bytes, int, int, int]:
    return name, content, zipfile.ZIP_STORED, zlib.crc32(content), len(content)


def gigabyte_entry(name: str) -> tuple[str, bytes, int, int, int]:
    """An entry that really inflates to 1 GiB of zeros (about 1 MB compressed)."""
    return name, deflate_repeated(bytes(MIB), 1024), zipfile.ZIP_DEFLATED, ZEROS_GIB_CRC, GIB


def lying_entry(name: str, *, declared: int = 1000, mebibytes: int = 10) -> tuple[str, bytes, int, int, int]:
    """An entry whose headers say ``declared`` bytes but that inflates to ``mebibytes`` MiB of zeros.

    Its CRC is that of the first ``declared`` bytes, so a reader that stops quietly at the
    declared size would take the truncated bytes as good.
    """
    return name, deflate_repeated(bytes(MIB), mebibytes), zipfile.ZIP_DEFLATED, zlib.crc32(bytes(declared)), declared


def xlsx_bomb(workbook: bytes, *, mebibytes: int = 1024) -> bytes:
    """``workbook`` (a valid .xlsx) with its first sheet padded by ``mebibytes`` MiB of blanks.

    The padding is whitespace between elements, so the sheet stays valid XML. The CRC is
    left at zero: an importer must refuse the file on its sizes before it ever gets there.
    """
    source = zipfile.ZipFile(io.BytesIO(workbook))
    entries = []
    for info in source.infolist():
        content = source.read(info)
        if info.filename == "xl/worksheets/sheet1.xml":
            head, tail = content.split(b"<sheetData>", 1)
            prefix = head + b"<sheetData>"
            data = deflate_repeated(b" " * MIB, mebibytes, prefix=prefix, suffix=tail)
            entries.append((info.filename, data, zipfile.ZIP_DEFLATED, 0, len(prefix) + mebibytes * MIB + len(tail)))
        else:
            entries.append(stored(info.filename, content))
    return zip_entries(entries)
