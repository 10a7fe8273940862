"""Artwork pipeline runs: the list with the new-run form, the live progress page (cancel,
resume, failed items with their kept replies) and one artwork's candidates and scores."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from core.decorators import role_required
from core.http import add_service_errors, vary_on_htmx
from core.roles import RESEARCHER
from llm.models import RunStatus
from llm.selectors import batch_run_waiting_for_worker, worker_hint_context
from llm.services import CostNotConfirmed, estimate_text
from llm.views.runs import batch_run_act

from ..forms import ArtworkRunForm
from ..selectors.collections import collection_choices
from ..selectors.lookups import artwork_run_or_404
from ..selectors.pipeline import (
    artwork_run_artwork_detail,
    artwork_run_artworks,
    artwork_run_failed_items,
    artwork_run_list,
    artwork_run_progress,
    artwork_run_usage,
    artwork_runs_progress,
)
from ..services.pipeline import (
    artwork_run_estimate,
    artwork_run_start,
)

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def artwork_run_list_page(request):
    form = ArtworkRunForm(request.POST or None)
    context = {"form": form}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        arguments = {
            "collection": data["collection"],
            "speaker": data["speaker"],
            "listener": data["listener"],
            "builder": data["builder"],
            "samples": data["samples"],
            "lam": data["lam"],
            "limit": data["limit"],
            "user": request.user,
        }
        try:
            if "estimate" in request.POST:
                # "Estimate the cost": the same run built and rolled back; nothing starts.
                context.update(_estimate_context(artwork_run_estimate(**arguments)))
                run = None
            else:
                run = artwork_run_start(
                    **arguments, idempotency_key=data["idempotency_key"], confirm_cost=data["confirm_cost"]
                )
        except CostNotConfirmed as exc:
            context.update(_estimate_context(exc.estimate))
            add_service_errors(form, exc)
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            if run is None:
                return render(request, "artworks/artwork_run_list.html", _list_context(context))
            if run.idempotent_repeat:
                # The same form again (a double click, a reload after the POST): where the first submit went.
                messages.info(request, _("This form was already submitted: here is the run it started."))
            else:
                messages.success(request, _("Pipeline run #%(id)s started.") % {"id": run.pk})
            return redirect("artworks:run_detail", pk=run.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "artworks/artwork_run_list.html", _list_context(context), status=status)


def _list_context(context: dict) -> dict:
    runs = list(artwork_run_list()[:100])
    progress = artwork_runs_progress(runs=runs)
    rows = [{"run": run, **progress[run.pk]} for run in runs]
    # The empty list's next step: a run needs a collection to work on.
    return {**context, "rows": rows, "has_collections": bool(rows) or collection_choices().exists()}


ROLE_LABELS = {
    "builder": gettext_lazy("Question builder"),
    "speaker": gettext_lazy("Speaker"),
    "listener": gettext_lazy("Listener"),
}


def _estimate_context(estimate: dict) -> dict:
    roles = [
        {"role": role, "label": ROLE_LABELS[role], **part}
        for role, part in (estimate.get("by_role") or {}).items()
        if part["n_requests"]
    ]
    return {"estimate": estimate, "estimate_text": estimate_text(estimate), "estimate_roles": roles}


def _detail_context(run) -> dict:
    """Everything on the run page that a worker changes: progress, hints, times and failed items."""
    progress = artwork_run_progress(run=run)
    progress["no_worker"] = batch_run_waiting_for_worker(run=run)
    return {
        "run": run,
        "progress": progress,
        "polling": run.status in ACTIVE,
        **worker_hint_context(),
        "failed_items": artwork_run_failed_items(run=run)[:200],
        "usage": artwork_run_usage(run=run),
    }


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
@vary_on_htmx
def artwork_run_detail(request, pk: int):
    run = artwork_run_or_404(pk)
    if request.method == "POST":
        batch_run_act(request, run=run, action=request.POST.get("action", ""))
        return redirect("artworks:run_detail", pk=run.pk)
    context = _detail_context(run)
    if request.htmx and not request.htmx.history_restore_request:
        # The poll: the progress section, and out of band the times and failed items, so no
        # part of the page waits for a reload; the answer after the run ends has no trigger.
        context["finished_now"] = not context["polling"]
        return render(request, "artworks/artwork_run_detail.html#artwork-run-live", context)
    context["artworks"] = artwork_run_artworks(run=run)
    return render(request, "artworks/artwork_run_detail.html", context)


@require_GET
@role_required(RESEARCHER)
def artwork_run_artwork(request, pk: int, artwork_pk: int):
    run = artwork_run_or_404(pk)
    artwork = get_object_or_404(artwork_run_artworks(run=run), pk=artwork_pk)
    context = {"run": run, "artwork": artwork, **artwork_run_artwork_detail(run=run, artwork=artwork)}
    return render(request, "artworks/artwork_run_artwork.html", context)
