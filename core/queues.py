"""The one-item-at-a-time queues (the annotator's review, the rater's scoring): how a page moves along one.

Both answer a submit or a skip the same way: with htmx, the next item's panel with its URL pushed (the
address bar and the history follow); without JavaScript, a POST/redirect/GET with a "Saved" message;
once nothing is left, the queue's own panel or page. What each queue reads (its next item, its panels)
stays in its app and is handed in: the review page reads its next two items in one query, and nothing
here may add one to that path.
"""

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django_htmx.http import push_url

from core.http import wants_fragment


def queue_status(request, status: int) -> int:
    """The status of a refused or conflicting answer: htmx 2 swaps no 4xx answer, so it gets 200 and the
    panel that explains; a client without JavaScript (and a test) gets ``status``."""
    return 200 if wants_fragment(request) else status


def queue_resume(following, *, item_url: Callable[..., str], render_queue: Callable[[], HttpResponse]):
    """A queue's own address: straight on to the next item, or the queue's page when none is left."""
    if following is not None:
        return redirect(item_url(following))
    return render_queue()


def queue_advance(
    request,
    *,
    following,
    item_url: Callable[..., str],
    render_item: Callable[..., HttpResponse],
    queue_url: str,
    render_done: Callable[[], HttpResponse],
    saved_text: str | None = None,
) -> HttpResponse:
    """Go on to ``following`` (None: the queue is done) after a submit or a skip.

    ``render_item(following)`` and ``render_done()`` build the panels htmx swaps in; they are called
    only for htmx, so a redirect reads nothing more. ``saved_text`` (the expression just saved) is
    said in a message across the redirect; a panel says it itself, from its own context.
    """
    url = item_url(following) if following is not None else queue_url
    if not wants_fragment(request):
        if saved_text is not None:
            messages.success(request, _("Saved “%(text)s”.") % {"text": saved_text})
        return redirect(url)
    return push_url(render_item(following) if following is not None else render_done(), url)


__all__ = ["queue_advance", "queue_resume", "queue_status"]
