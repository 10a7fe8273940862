"""Corpus pages: datasets, exports and the import wizard.

Each view serves its page and, for htmx requests, only the fragment that
changes; reads go through selectors, writes through services.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import download, vary_on_htmx, wants_fragment
from core.localization import localized_name
from core.roles import RESEARCHER
from core.tables import SUPPORTED_EXTENSIONS

from .. import selectors, services
from ..forms.corpus import ExpressionFilterForm, ImportForm, ImportRetargetForm
from ..models import ExpressionKind, ImportJobStatus
from ..selectors.lookups import dataset_or_404, import_job_or_404
from ..selectors.visibility import gold_labels_visible

EXPRESSIONS_PER_PAGE = 50
# While a job is in one of these states its status fragment keeps polling.
ACTIVE_STATUSES = (ImportJobStatus.QUEUED, ImportJobStatus.RUNNING)


@require_GET
@role_required()
def dataset_list(request):
    return render(request, "annotation/dataset_list.html", {"datasets": selectors.dataset_list()})


@require_GET
@role_required()
@vary_on_htmx
def dataset_detail(request, pk: int):
    dataset = dataset_or_404(pk)
    gold = gold_labels_visible(user=request.user)
    filter_form = ExpressionFilterForm(
        request.GET, traits=selectors.trait_list(), themes=selectors.theme_list(), gold=gold
    )
    filters = filter_form.filters()
    expressions = selectors.expression_list(dataset=dataset, **filters)
    page = Paginator(expressions, EXPRESSIONS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "dataset": dataset,
        "gold": gold,
        "filter_form": filter_form,
        "filtered": any(filters.values()),
        "page": page,
        "total": selectors.expression_count(dataset=dataset),
    }
    template = "annotation/dataset_detail.html"
    if wants_fragment(request):
        template += "#expression-table"
    return render(request, template, context)


@require_GET
@role_required()
def dataset_export(request, pk: int):
    dataset = dataset_or_404(pk)
    fmt = request.GET.get("format", "")
    try:
        body = services.dataset_export(dataset=dataset, fmt=fmt, gold=gold_labels_visible(user=request.user))
    except services.ExportError:
        return HttpResponseBadRequest(
            _("Unknown export format “%(format)s”; use ?format=csv or ?format=jsonl.") % {"format": fmt},
            content_type="text/plain; charset=utf-8",
        )
    return download(body, filename=f"{dataset.name}.{fmt}", fmt=fmt)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def import_start(request):
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            job = services.import_job_create(
                dataset_name=form.cleaned_data["dataset_name"],
                filename=upload.name,
                content=upload.read(),
                column_map=form.column_map(),
                user=request.user,
                idempotency_key=form.cleaned_data["idempotency_key"],
            )
            return redirect("annotation:import_detail", pk=job.pk)
    else:
        form = ImportForm(initial={"dataset_name": request.GET.get("dataset", "")})
    context = {
        "form": form,
        "dataset_names": selectors.dataset_names(),
        "required_fields": services.REQUIRED_FIELDS,
        "optional_fields": services.OPTIONAL_FIELDS,
        "extensions": SUPPORTED_EXTENSIONS,
        "preview_rows": services.PREVIEW_ROWS,
    }
    return render(request, "annotation/import_start.html", context)


@require_GET
@role_required(RESEARCHER)
@vary_on_htmx
def import_detail(request, pk: int):
    job = import_job_or_404(request.user, pk)
    context = {
        "job": job,
        "report": job.report,
        "polling": job.status in ACTIVE_STATUSES,
        "preview": _preview_rows(job.report.get("preview", [])) if job.status == ImportJobStatus.PREVIEWED else [],
    }
    template = "annotation/import_detail.html"
    if wants_fragment(request):
        template += "#job-status"
    return render(request, template, context)


def _preview_rows(rows: list[dict]) -> list[dict]:
    """Preview rows with trait, theme and kind names for people instead of codes."""
    traits = {t.code: t for t in selectors.trait_list()}
    themes = {t.code: localized_name(t) for t in selectors.theme_list()}
    kinds = dict(ExpressionKind.choices)
    return [
        {
            **row,
            # In taxonomy order, as on the dataset page, whatever order the file listed them in.
            "trait_names": [
                localized_name(trait)
                for trait in sorted((traits[c] for c in row.get("traits", []) if c in traits), key=lambda t: t.number)
            ],
            "theme_name": themes.get(row.get("theme"), row.get("theme", "")),
            "kind_name": kinds.get(row.get("kind"), row.get("kind", "")),
        }
        for row in rows
    ]


@require_POST
@role_required(RESEARCHER)
def import_confirm(request, pk: int):
    job = import_job_or_404(request.user, pk)
    try:
        services.import_job_confirm(job=job, user=request.user)
    except services.ImportJobStateError:
        messages.error(
            request,
            _("This import can no longer be confirmed (status: %(status)s); upload the file again.")
            % {"status": job.get_status_display().lower()},
        )
    return redirect("annotation:import_detail", pk=job.pk)


@require_POST
@role_required(RESEARCHER)
def import_retarget(request, pk: int):
    job = import_job_or_404(request.user, pk)
    form = ImportRetargetForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("That dataset does not exist (any more); pick another or upload the file again."))
        return redirect("annotation:import_detail", pk=job.pk)
    try:
        services.import_job_retarget(job=job, dataset_name=form.cleaned_data["dataset"].name, user=request.user)
    except services.ImportJobStateError:
        messages.error(
            request,
            _("This import can no longer change its dataset (status: %(status)s); upload the file again.")
            % {"status": job.get_status_display().lower()},
        )
    return redirect("annotation:import_detail", pk=job.pk)


@require_POST
@role_required(RESEARCHER)
def import_cancel(request, pk: int):
    job = import_job_or_404(request.user, pk)
    job = services.import_job_cancel(job=job)
    if job.status in (*ACTIVE_STATUSES, ImportJobStatus.DONE):
        # Only a previewed job can be cancelled; a confirmed one is already importing.
        messages.error(request, _("This import was already confirmed and can no longer be cancelled."))
    return redirect("annotation:import_detail", pk=job.pk)
