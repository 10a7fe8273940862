"""What every app's views share: htmx fragments, service errors on forms, and file downloads.

CSV text is written by core.csv_writer (formula cells neutralised), never here.
"""

import json
from functools import wraps

from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.http import content_disposition_header
from django.utils.text import slugify

from core.files import untrusted_file_response

DOWNLOAD_CONTENT_TYPES = {
    "json": "application/json; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "zip": "application/zip",
    # Figures for the paper (core.figures): attachments like every download, never shown inline.
    "svg": "image/svg+xml",
    "pdf": "application/pdf",
}
# What a report page's ?format= offers; its figures have their own URLs.
REPORT_FORMATS = ("json", "csv")


def wants_fragment(request) -> bool:
    """True when the page's htmx fragment will do.

    htmx asks for the full page when it restores history it no longer has cached;
    answering with a fragment would leave a page without its layout.
    """
    return bool(request.htmx) and not request.htmx.history_restore_request


def found_or_404(found, message: str):
    """What a look-up found, or a 404 saying ``message`` (an API's detail; the HTML 404 page never shows it).

    Each app's ``selectors.lookups`` builds its ``<entity>_or_404`` on it, with the reader's filter."""
    if found is None:
        raise Http404(message)
    return found


def vary_on_htmx(view):
    """For a view that answers htmx with a fragment and everyone else with the page (``wants_fragment``,
    ``request.htmx``): ``Vary: HX-Request`` on every answer, so that a browser or proxy cache never
    serves the fragment as the page (after a reload, or the back button) or the page as the fragment."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        patch_vary_headers(response, ("HX-Request",))
        return response

    return wrapped


def add_service_errors(form, exc: ValidationError) -> None:
    """A service's ValidationError shown on the form, on the field it names where the form has it."""
    if hasattr(exc, "error_dict"):
        for fieldname, messages in exc.message_dict.items():
            target = fieldname if fieldname in form.fields else None
            for message in messages:
                form.add_error(target, message)
    else:
        for message in exc.messages:
            form.add_error(None, message)


def file_stem(name: str, *, fallback: str) -> str:
    """A download's file name from an object's name (Vietnamese letters kept), or ``fallback`` when
    nothing of it survives (a name of punctuation only)."""
    return slugify(name, allow_unicode=True) or fallback


def download(body: str | bytes, *, filename: str, fmt: str) -> HttpResponse:
    """A file to save, never shown inline: every export of every app goes out through here."""
    response = HttpResponse(
        body.encode("utf-8") if isinstance(body, str) else body,
        content_type=DOWNLOAD_CONTENT_TYPES[fmt],
        headers={"Content-Disposition": content_disposition_header(True, filename)},
    )
    return untrusted_file_response(response, filename=filename, drawn=fmt in ("svg", "pdf"))


def streamed_download(chunks, *, filename: str, fmt: str) -> StreamingHttpResponse:
    """A file sent as it is written (an export too large to build in memory first), with the
    headers of ``download``: the type, an attachment, nosniff and the sandboxing policy."""
    response = StreamingHttpResponse(chunks, content_type=DOWNLOAD_CONTENT_TYPES[fmt])
    return untrusted_file_response(response, filename=filename)


def json_text(data) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False, default=str) + "\n"
