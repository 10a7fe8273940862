"""Checks shared by the tests of every figure download (core.figures): headers, texts, fonts.

An SVG keeps each text as a comment beside its glyph outlines, so the labels can be read
from it; a PDF keeps the title and the caption (with its n) in its metadata.
"""

import os
import warnings
from pathlib import Path
from urllib.parse import unquote

import pytest

# Each chart is read from the database and drawn; the SVG runs in both passes of `make test`, so
# every engine answers its queries. The PDF is the same drawing through another matplotlib backend
# (with its fonts subset and embedded: 0.8-2.9 s a chart), which no engine changes: one pass, the
# SQLite one (the PostgreSQL pass ended 36 s after it with the PDFs in it, at 0fe512e).
FORMATS = ("svg", pytest.param("pdf", marks=[pytest.mark.once, pytest.mark.sqlite_pass]))
CONTENT_TYPES = {"svg": "image/svg+xml", "pdf": "application/pdf"}
# matplotlib's words when a label's character is in none of the figure's fonts.
MISSING_GLYPH = "missing from font"


def fetch(client, url: str):
    """GET a figure, with every warning raised while it was drawn."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response = client.get(url)
    return response, [str(w.message) for w in caught]


def glyph_warnings(caught: list[str]) -> list[str]:
    return [message for message in caught if MISSING_GLYPH in message or "CJK font" in message]


def assert_figure_file(response, fmt: str, *, filename_end: str = "") -> bytes:
    """A download, never inline, with the figure's type and the sandboxing headers."""
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == CONTENT_TYPES[fmt]
    assert response["Content-Disposition"].startswith("attachment")
    # A non-ASCII name comes as filename*=utf-8''…, percent-encoded.
    assert unquote(response["Content-Disposition"]).rstrip('"').endswith(f"{filename_end}.{fmt}")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]
    body = response.content
    if os.environ.get("VIVID_FIGURE_DUMP"):
        Path(os.environ["VIVID_FIGURE_DUMP"]).write_bytes(body)
    if fmt == "svg":
        assert body.startswith(b"<?xml") and b"<svg" in body
    else:
        assert body.startswith(b"%PDF-")
    return body


def assert_svg_has(body: bytes, *texts: str) -> None:
    """Each text is drawn: its comment is beside its glyph outlines in the SVG."""
    svg = body.decode("utf-8")
    for text in texts:
        escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert escaped in svg, f"{text!r} is not in the SVG"


def pdf_info(body: bytes, key: str) -> str:
    """A string of the PDF's document information (``Title``, ``Subject``), decoded."""
    start = body.index(f"/{key} (".encode()) + len(key) + 3
    raw, index = bytearray(), start
    escapes = {ord("n"): b"\n", ord("r"): b"\r"}
    while body[index] != ord(")"):
        if body[index] == ord("\\"):
            index += 1
            raw += escapes.get(body[index], bytes([body[index]]))
        else:
            raw.append(body[index])
        index += 1
    raw = bytes(raw)
    return raw[2:].decode("utf-16-be") if raw.startswith(b"\xfe\xff") else raw.decode("latin-1")


def assert_pdf_has(body: bytes, *texts: str) -> None:
    """Each text is in the PDF's title or subject (the caption, which gives n)."""
    info = pdf_info(body, "Title") + "\n" + pdf_info(body, "Subject")
    for text in texts:
        assert text in info, f"{text!r} is not in the PDF's title or caption: {info!r}"


def assert_pdf_embeds(body: bytes, *fonts: str) -> None:
    for font in fonts:
        assert f"+{font}".encode() in body, f"{font} is not embedded in the PDF"
