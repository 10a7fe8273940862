"""Addresses that moved: a page or API under an old prefix answers 308 with the new address.

308 and not 301: a script POSTing to the old address (cancel, resume) is sent on with the same
method and body, where a 301 would let its client turn the POST into a GET.
"""

from django.http.response import HttpResponseRedirectBase
from django.urls import reverse


class HttpResponsePermanentRedirectKeepingMethod(HttpResponseRedirectBase):
    status_code = 308


def moved_to(url_name: str):
    """A view that sends ``<old prefix><rest>`` to the address of ``url_name`` followed by ``rest``,
    with the query string kept."""

    def moved(request, rest: str = ""):
        target = reverse(url_name) + rest
        if request.META.get("QUERY_STRING"):
            target += "?" + request.META["QUERY_STRING"]
        return HttpResponsePermanentRedirectKeepingMethod(target)

    return moved
