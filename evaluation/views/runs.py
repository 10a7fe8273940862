"""Runs: the list, the three new-run forms, the live run page, its items and its report.

A run form carries an idempotency key: a second submit of the same form (a double click,
a reload after the POST) lands on the run the first one created instead of starting another.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import REPORT_FORMATS, add_service_errors, download, json_text, vary_on_htmx
from core.roles import RESEARCHER
from llm.selectors import batch_run_is_stalled, batch_run_waiting_for_worker, worker_hint_context
from llm.services import CostNotConfirmed, estimate_text
from llm.views.runs import batch_run_act

from .. import selectors, services
from ..forms import RUN_FORMS, RunImportForm, RunRerunForm
from ..models import ItemStatus, RunKind, RunStatus
from ..scoring import PARSER_VERSION, unscored_reason_text
from ..selectors.exports import report_csv
from ..selectors.lookups import run_item_or_404, run_or_404
from ..selectors.runs import run_items_read_by_older_parser, run_truncation
from ..services.runs.cost import run_estimate, run_start

ITEMS_PER_PAGE = 50
ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING)
ITEM_FILTERS = (
    ("", gettext_lazy("All")),
    ("failed", gettext_lazy("Failed")),
    ("unscored", gettext_lazy("Unscored")),
    ("cached", gettext_lazy("Cached")),
)
RUN_TITLES = {
    RunKind.GENERATION: gettext_lazy("New generation run"),
    RunKind.JUDGE: gettext_lazy("New judge run"),
    RunKind.CLASSIFICATION: gettext_lazy("New classification run"),
}


def report_sections(report: dict) -> dict:
    """A judge report's scores by theme and by trait, with the taxonomy entries for their names."""
    if "by_theme" not in report:
        return {}
    traits, themes = selectors.taxonomy_by_code()
    return {
        "by_theme": [{"code": c, "entry": themes.get(c), "value": v} for c, v in report["by_theme"].items()],
        "by_trait": [{"code": c, "entry": traits.get(c), "value": v} for c, v in report["by_trait"].items()],
    }


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def _progress_context(run) -> dict:
    progress = selectors.run_progress(run=run)
    progress["elapsed"] = duration(progress["elapsed_s"])
    progress["eta"] = duration(progress["eta_s"])
    # A worker killed mid-run leaves it running: the page offers Resume once it has stalled.
    progress["stalled"] = batch_run_is_stalled(run=run)
    progress["no_worker"] = batch_run_waiting_for_worker(run=run)
    return {
        "run": run,
        "progress": progress,
        "polling": run.status in ACTIVE,
        **worker_hint_context(),
    }


@require_GET
@role_required(RESEARCHER)
def run_list(request):
    kind = request.GET.get("kind", "")
    if kind and kind not in RunKind.values:
        kind = ""
    page = Paginator(selectors.run_list(kind=kind or None), ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [{"run": run, **selectors.run_progress(run=run)} for run in page.object_list]
    context = {"rows": rows, "page": page, "kind": kind, "kinds": RunKind.choices}
    if not rows:
        # The empty page's next step: a run needs a dataset, and a judge run a finished generation run.
        context |= {
            "has_datasets": selectors.run_dataset_choices().exists(),
            "has_finished_generation": selectors.finished_generation_exists(),
        }
    return render(request, "evaluation/run_list.html", context)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def run_new(request, kind: str):
    if kind not in RUN_FORMS:
        raise Http404
    form_class = RUN_FORMS[kind]
    if request.method == "GET":
        initial = {}
        for key in ("source_run", "dataset", "model", "version"):
            if request.GET.get(key, "").isdigit():
                initial[key] = int(request.GET[key])
        form = form_class(initial=initial)
        return render(request, "evaluation/run_new.html", {"form": form, "kind": kind, "title": RUN_TITLES[kind]})

    form = form_class(request.POST)
    context = {"form": form, "kind": kind, "title": RUN_TITLES[kind]}
    if form.is_valid() and "estimate" in request.POST:
        # "Estimate the cost": the same run built and rolled back; nothing starts.
        try:
            context["estimate"] = run_estimate(**form.run_arguments(), user=request.user)
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            context["estimate_text"] = estimate_text(context["estimate"])
            return render(request, "evaluation/run_new.html", context)
    elif form.is_valid():
        try:
            run = run_start(
                **form.run_arguments(),
                user=request.user,
                idempotency_key=form.cleaned_data["idempotency_key"],
                confirm_cost=form.cleaned_data["confirm_cost"],
            )
        except CostNotConfirmed as exc:
            context["estimate"] = exc.estimate
            context["estimate_text"] = estimate_text(exc.estimate)
            add_service_errors(form, exc)
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            if run.idempotent_repeat:
                # The same form again (a double click, a reload after the POST): where the first submit went.
                messages.info(request, _("This form was already submitted: here is the run it started."))
            else:
                messages.success(request, _("Run #%(id)s started.") % {"id": run.pk})
            return redirect("evaluation:run_detail", pk=run.pk)
    return render(request, "evaluation/run_new.html", context, status=400)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def run_import(request):
    """A harness log (lm-eval or Inspect) of the exported tasks as a finished run (services.run_import)."""
    if request.method == "GET":
        return render(request, "evaluation/run_import.html", {"form": RunImportForm()})
    form = RunImportForm(request.POST, request.FILES)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            run = services.run_import(
                fmt=form.cleaned_data["format"],
                data=upload.read(),
                filename=upload.name,
                model=form.cleaned_data["model"],
                user=request.user,
            )
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            if run.idempotent_repeat:
                messages.info(request, _("This file was already imported: here is its run."))
            else:
                messages.success(
                    request, _("Run #%(id)s imported with %(n)s items.") % {"id": run.pk, "n": run.items.count()}
                )
            return redirect("evaluation:run_detail", pk=run.pk)
    return render(request, "evaluation/run_import.html", {"form": form}, status=400)


def _filtered_items(run, item_filter: str):
    if item_filter == "failed":
        return selectors.run_items(run=run, status=ItemStatus.FAILED)
    if item_filter == "unscored":
        return selectors.run_items(run=run, unscored=True)
    if item_filter == "cached":
        return selectors.run_items(run=run).filter(cached=True)
    return selectors.run_items(run=run)


@require_GET
@role_required(RESEARCHER)
def run_detail(request, pk: int):
    run = run_or_404(pk)
    fmt = request.GET.get("format", "")
    if fmt:
        if fmt not in REPORT_FORMATS:
            return HttpResponseBadRequest(
                _("Unknown download format “%(format)s”; use ?format=json or ?format=csv.") % {"format": fmt},
                content_type="text/plain; charset=utf-8",
            )
        report = selectors.run_report(run=run)
        body = json_text(report) if fmt == "json" else report_csv(report)
        return download(body, filename=f"run-{run.pk}-report.{fmt}", fmt=fmt)
    context = {
        **_live_context(request, run),
        "reproducibility_json": json_text(run.reproducibility),
        "judge_runs": run.judge_runs.select_related("model") if run.kind == RunKind.GENERATION else [],
    }
    return render(request, "evaluation/run_detail.html", context)


def _live_context(request, run) -> dict:
    """Everything on the run page that a worker changes: progress, report, times and the items shown."""
    item_filter = request.GET.get("items", "")
    if item_filter not in dict(ITEM_FILTERS):
        item_filter = ""
    page = Paginator(_filtered_items(run, item_filter), ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    report = selectors.run_report(run=run)
    for item in page.object_list:
        item.reason_text = unscored_reason_text(item.score_reason) if item.score_reason else ""
    truncation = run_truncation(run=run, counts=report["run"])
    # The poll asks for the same filter and page as the page it updates.
    query = {key: value for key, value in (("items", item_filter), ("page", request.GET.get("page", ""))) if value}
    return {
        **_progress_context(run),
        "truncation": truncation,
        "rerun_form": RunRerunForm(initial={"max_tokens": truncation["suggested_max_tokens"]}, auto_id=False),
        "n_older_parser": run_items_read_by_older_parser(run=run) if run.status not in ACTIVE else 0,
        "parser_version": PARSER_VERSION,
        "page": page,
        "item_filter": item_filter,
        "item_filters": [(key, label) for key, label in ITEM_FILTERS if key != "unscored" or run.kind == RunKind.JUDGE],
        "report": report,
        **report_sections(report),
        "accuracy_percent": round(100 * report["accuracy"], 1) if report.get("accuracy") is not None else None,
        "poll_query": f"?{urlencode(query)}" if query else "",
    }


@require_GET
@role_required(RESEARCHER)
@vary_on_htmx
def run_progress(request, pk: int):
    """What the run page polls every second while the run is queued or running: the progress
    section, and out of band the report, the times and the items table, so no part of the
    page is left behind; the answer after the run ends carries no trigger, and polling stops."""
    run = run_or_404(pk)
    if not request.htmx:
        return render(request, "evaluation/run_detail.html#run-progress", _progress_context(run))
    context = _live_context(request, run)
    context["finished_now"] = not context["polling"]
    return render(request, "evaluation/run_detail.html#run-live", context)


@require_POST
@role_required(RESEARCHER)
def run_cancel(request, pk: int):
    run = run_or_404(pk)
    batch_run_act(request, run=run, action="cancel")
    return redirect("evaluation:run_detail", pk=run.pk)


@require_POST
@role_required(RESEARCHER)
def run_resume(request, pk: int):
    run = run_or_404(pk)
    batch_run_act(request, run=run, action="resume", resume=services.run_resume)
    return redirect("evaluation:run_detail", pk=run.pk)


@require_POST
@role_required(RESEARCHER)
def run_rerun(request, pk: int):
    """The judge run again with a larger max_tokens: its replies were cut off."""
    run = run_or_404(pk)
    form = RunRerunForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
        return redirect("evaluation:run_detail", pk=run.pk)
    try:
        rerun = services.run_rerun_longer(
            run=run,
            max_tokens=form.cleaned_data["max_tokens"],
            user=request.user,
            idempotency_key=form.cleaned_data["idempotency_key"],
            confirm_cost=form.cleaned_data["confirm_cost"],
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("evaluation:run_detail", pk=run.pk)
    started = _("Run #%(id)s started: run #%(source)s again with max_tokens=%(n)s.") % {
        "id": rerun.pk,
        "source": run.pk,
        "n": rerun.params["max_tokens"],
    }
    if rerun.estimate and not getattr(rerun, "idempotent_repeat", False):
        started = f"{started} {estimate_text(rerun.estimate)}"
    messages.success(request, started)
    return redirect("evaluation:run_detail", pk=rerun.pk)


@require_POST
@role_required(RESEARCHER)
def run_reparse(request, pk: int):
    """Read the run's stored replies again with the current score parser (no request to the model)."""
    run = run_or_404(pk)
    try:
        summary = services.run_scores_reparse(run=run, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, reparse_text(summary))
    return redirect("evaluation:run_detail", pk=run.pk)


def reparse_text(summary: dict) -> str:
    return _(
        "%(n)s replies read again with score parser v%(version)s: %(changed)s scores changed "
        "(%(unscored)s now unscored, %(scored)s now scored, %(other)s another value)."
    ) % {
        "n": summary["n_items"],
        "version": summary["parser_version"],
        "changed": summary["n_changed"],
        "unscored": summary["n_newly_unscored"],
        "scored": summary["n_newly_scored"],
        "other": summary["n_other_value"],
    }


@require_GET
@role_required(RESEARCHER)
def item_detail(request, run_pk: int, pk: int):
    run = run_or_404(run_pk)
    item = run_item_or_404(run=run, pk=pk)
    probabilities = item.score_probabilities or []
    context = {
        "run": run,
        "item": item,
        "reason_text": unscored_reason_text(item.score_reason) if item.score_reason else "",
        "score_probabilities": [{"score": s, "p": p} for s, p in enumerate(probabilities)],
        **selectors.run_item_neighbours(item=item),
        "source_url": reverse("evaluation:item_detail", args=[item.source_item.run_id, item.source_item_id])
        if item.source_item_id
        else "",
    }
    return render(request, "evaluation/item_detail.html", context)
