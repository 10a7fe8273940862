"""The API side of core.services.idempotency: the key comes in the ``Idempotency-Key`` header."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from core.services.idempotency import KEY_PATTERN

IDEMPOTENCY_KEY_HEADER = OpenApiParameter(
    name="Idempotency-Key",
    type=OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=False,
    # Empty is allowed: idempotency_key_check reads an empty header as no key.
    pattern=f"^(?:{KEY_PATTERN.pattern.strip('^$')})?$",
    description=(
        "8-64 letters, digits, '-' or '_' (empty: as if none was sent). A repeat of a request with the same "
        "key (a retry after a timeout) returns what the first created instead of creating again."
    ),
)


def request_idempotency_key(request) -> str | None:
    return request.headers.get("Idempotency-Key") or None
