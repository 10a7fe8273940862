"""What a participant page costs a phone: the bytes each page transfers on a first visit.

Shared by tests/browser/test_mobile_browser.py (the budget) and benchmarks/survey_load.py (the
table). Bytes are as Chromium counts them on the wire: the response headers plus the body as sent
(compressed when the server compresses). The browser cache is turned off, so every page is
measured as a first visit: its document, stylesheets and scripts all over again.
"""

import gzip
from dataclasses import dataclass, field

# The budget of issue #27: a page, first visit, before its artwork image.
PAGE_BUDGET_BYTES = 150 * 1024
# The artwork images of a study are served from /s/<slug>/images/<key>/.
IMAGE_PATH = "/images/"


@dataclass
class PageWeight:
    step: str
    page_bytes: int  # the document and everything it loads but the artwork image
    image_bytes: int
    image_url: str
    files: list[tuple[str, int]] = field(default_factory=list)
    # With ``take(gzip_estimate=True)``: page_bytes had the server gzipped every text response, as
    # WhiteNoise does in production for static files (the development server sends them as they are).
    page_gzip_bytes: int | None = None


def cold_cache(page) -> None:
    """Make every page of ``page`` load as on a first visit (Chromium's DevTools: cache disabled)."""
    session = page.context.new_cdp_session(page)
    session.send("Network.enable")
    session.send("Network.setCacheDisabled", {"cacheDisabled": True})


class TransferLog:
    """Every finished request of ``page``, read page by page with ``take``."""

    def __init__(self, page):
        self.requests = []
        page.on("requestfinished", lambda request: self.requests.append(request))

    def take(self, step: str, *, gzip_estimate: bool = False) -> PageWeight:
        """The requests finished since the last call, as one page's weight. Call it once the page's
        ``load`` event has fired (its image is in by then). The favicon is left out: a browser asks
        for it once per site, after the page, not as part of any page."""
        requests, self.requests = self.requests, []
        files, page_bytes, image_bytes, image_url, gzipped = [], 0, 0, "", 0
        for request in requests:
            if request.url.endswith("favicon.svg") or request.url.endswith("favicon.ico"):
                continue
            sizes = request.sizes()
            size = sizes["responseHeadersSize"] + sizes["responseBodySize"]
            files.append((request.url, size))
            if IMAGE_PATH in request.url and request.resource_type == "image":
                image_bytes += size
                image_url = request.url
            else:
                page_bytes += size
                if gzip_estimate:
                    gzipped += sizes["responseHeadersSize"] + _gzipped_size(request)
        return PageWeight(
            step=step,
            page_bytes=page_bytes,
            image_bytes=image_bytes,
            image_url=image_url,
            files=files,
            page_gzip_bytes=gzipped if gzip_estimate else None,
        )


def _gzipped_size(request) -> int:
    response = request.response()
    if response is None:
        return 0
    if response.headers.get("content-encoding") or 300 <= response.status < 400:
        return request.sizes()["responseBodySize"]  # already compressed on the wire, or a redirect (no body kept)
    return len(gzip.compress(response.body(), compresslevel=9))


def weights_table(weights: list[PageWeight]) -> list[str]:
    """Lines of a table: each kind of page once (its first occurrence), KB before the image and of the image."""
    gzip_column = any(weight.page_gzip_bytes is not None for weight in weights)
    lines = [f"  {'page':<16}{'KB before image':>16}{'gzipped KB' if gzip_column else '':>12}{'image KB':>10}  image"]
    seen = set()
    for weight in weights:
        kind = weight.step.split(":")[-1]
        if kind in seen:
            continue
        seen.add(kind)
        image = weight.image_url.rsplit("/images/", 1)[-1] if weight.image_url else "-"
        gzipped = f"{weight.page_gzip_bytes / 1024:.1f}" if weight.page_gzip_bytes is not None else ""
        lines.append(
            f"  {kind:<16}{weight.page_bytes / 1024:>16.1f}{gzipped:>12}{weight.image_bytes / 1024:>10.1f}  {image}"
        )
    return lines
