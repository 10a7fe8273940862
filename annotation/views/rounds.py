"""Researchers' pages: suggestion import, rounds (create, follow, lock, freeze) and frozen versions.

Reads go through selectors, writes through services; a service's
ValidationError is shown to the person, never swallowed. An annotator sees
only their own rounds and their own progress (the blindness rule).
"""

import math

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import add_service_errors, download, file_stem, vary_on_htmx, wants_fragment
from core.localization import localized_name
from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER, has_role
from core.tables import SUPPORTED_EXTENSIONS, ImportValidationError

from .. import selectors, services
from ..forms.rounds import FreezeForm, LockForm, RoundForm, SuggestionImportForm
from ..models import AnnotationRound, RoundStatus
from ..selectors import rounds as round_selectors
from ..selectors.lookups import round_or_404, version_or_404
from ..selectors.quality import annotator_control_counts
from ..selectors.visibility import blind_round_ids, gold_labels_visible, round_overview_visible, round_seed_visible

VERSION_ITEMS_PER_PAGE = 50
# The funnel in the order items flow through it, with labels for people.
FUNNEL_STAGES = (
    ("imported", gettext_lazy("Imported into the dataset")),
    ("in_round", gettext_lazy("In the round")),
    ("reviewed_by_all", gettext_lazy("Reviewed by every annotator")),
    ("unanimous", gettext_lazy("Unanimous")),
    ("needs_adjudication", gettext_lazy("Needs adjudication")),
    ("adjudicated", gettext_lazy("Adjudicated")),
    ("removed", gettext_lazy("Removed")),
    ("undecided", gettext_lazy("Not decided yet")),
    ("final", gettext_lazy("Final")),
)


def funnel_rows(funnel: dict) -> list[dict]:
    """Each funnel stage with its share of the imported items, for the bar chart."""
    base = funnel.get("imported") or 0
    return [
        {
            "key": key,
            "label": label,
            "count": funnel.get(key, 0),
            "percent": round(100 * funnel.get(key, 0) / base) if base else 0,
        }
        for key, label in FUNNEL_STAGES
    ]


# --- Suggestions ------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def suggestion_import(request):
    errors = []
    if request.method == "POST":
        form = SuggestionImportForm(request.POST, request.FILES)
        if form.is_valid():
            data, upload = form.cleaned_data, form.cleaned_data["file"]
            try:
                suggestion_set = services.suggestion_set_import(
                    dataset=data["dataset"],
                    name=data["name"],
                    model_name=data["model_name"],
                    prompt_version=data["prompt_version"],
                    filename=upload.name,
                    content=upload.read(),
                    user=request.user,
                    idempotency_key=data["idempotency_key"],
                )
            except ImportValidationError as exc:
                errors = exc.report.to_dict()["errors"]
            except ValidationError as exc:
                add_service_errors(form, exc)
            else:
                suggestion_set = round_selectors.suggestion_set_get(pk=suggestion_set.pk)
                messages.success(
                    request,
                    ngettext(
                        "Imported %(count)s suggestion as “%(name)s”. You can now create a round with it.",
                        "Imported %(count)s suggestions as “%(name)s”. You can now create a round with them.",
                        suggestion_set.n_suggestions,
                    )
                    % {"count": suggestion_set.n_suggestions, "name": suggestion_set.name},
                )
                return redirect(
                    f"{reverse('annotation:round_new')}?dataset={data['dataset'].pk}&suggestion_set={suggestion_set.pk}"
                )
    else:
        form = SuggestionImportForm(initial={"dataset": request.GET.get("dataset")})
    context = {
        "form": form,
        "errors": errors,
        "extensions": SUPPORTED_EXTENSIONS,
        "suggestion_sets": round_selectors.suggestion_set_list(),
    }
    return render(request, "annotation/suggestion_import.html", context, status=400 if errors else 200)


# --- Rounds -----------------------------------------------------------------


@require_GET
@role_required()
def round_list(request):
    rounds = list(selectors.round_list(user=request.user))
    sees_all = has_role(request.user, RESEARCHER, ADJUDICATOR)
    blind = blind_round_ids(user=request.user)
    overall = (
        round_selectors.round_overall_progress(rounds=[r for r in rounds if r.pk not in blind]) if sees_all else {}
    )
    mine = round_selectors.annotator_progress_by_round(user=request.user) if has_role(request.user, ANNOTATOR) else {}
    rows = [{"round": round_, "overall": overall.get(round_.pk), "mine": mine.get(round_.pk)} for round_ in rounds]
    context = {"rows": rows, "sees_all": sees_all}
    if not rows:
        # The empty page's next step: a round needs a dataset to draw its items from.
        context["has_datasets"] = selectors.dataset_list().exists()
    return render(request, "annotation/round_list.html", context)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
@vary_on_htmx
def round_new(request):
    if request.method == "POST":
        form = RoundForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            item_filter = form.item_filter()
            try:
                round_ = services.round_create(
                    name=data["name"],
                    dataset=data["dataset"],
                    annotators=list(data["annotators"]),
                    user=request.user,
                    expressions=round_selectors.round_candidates(dataset=data["dataset"], item_filter=item_filter),
                    item_filter=item_filter,
                    suggestion_set=data["suggestion_set"],
                    annotators_per_item=data["annotators_per_item"],
                    hide_suggestions_fraction=data["hide_percent"] / 100,
                    seed=data["seed"],
                    idempotency_key=data["idempotency_key"],
                )
            except ValidationError as exc:
                add_service_errors(form, exc)
            else:
                if round_.idempotent_repeat:
                    # A double submit: the first request created the round.
                    messages.info(request, _("The round “%(name)s” was already created.") % {"name": round_.name})
                else:
                    messages.success(request, _("Round “%(name)s” created.") % {"name": round_.name})
                return redirect("annotation:round_detail", pk=round_.pk)
    elif request.GET.get("preview") and wants_fragment(request):
        form = RoundForm(request.GET)
        return render(request, "annotation/round_new.html#round-preview", {"preview": _round_preview(form)})
    else:
        initial = {"annotators_per_item": 2, "hide_percent": 0}
        for key in ("dataset", "suggestion_set"):
            if request.GET.get(key, "").isdigit():
                initial[key] = int(request.GET[key])
        form = RoundForm(initial=initial)
    preview = _round_preview(form) if form.is_bound else _round_preview(RoundForm(initial_data(form)))
    return render(
        request,
        "annotation/round_new.html",
        {"form": form, "preview": preview},
        status=400 if form.is_bound and form.errors else 200,
    )


def initial_data(form: RoundForm) -> dict:
    """The unbound form's initial values as submitted data, so the first preview matches what is shown."""
    data = {}
    for name, field in form.fields.items():
        value = form.get_initial_for_field(field, name)
        if value not in (None, ""):
            data[name] = value
    if "dataset" not in data:
        first = form.fields["dataset"].queryset.first()
        if first is not None:
            data["dataset"] = first.pk
    return data


def _round_preview(form: RoundForm) -> dict:
    """How many items the round would hold and each annotator's expected load, from the input so far."""
    dataset = form.preview_value("dataset")
    if dataset is None:
        return {"dataset": None}
    counts = round_selectors.round_preview_counts(dataset=dataset, item_filter=form.preview_filter())
    n_items = counts["n_items"]
    annotators = list(form.preview_value("annotators") or [])
    per_item = form.preview_value("annotators_per_item") or 2
    hide_percent = form.preview_value("hide_percent") or 0
    preview = {
        "dataset": dataset,
        "n_items": n_items,
        "total_items": counts["total_items"],
        "n_annotators": len(annotators),
        "per_item": per_item,
        "enough_annotators": len(annotators) >= per_item,
        "hidden": round(n_items * hide_percent / 100),
        "assignments": n_items * per_item,
    }
    if annotators and preview["enough_annotators"]:
        share = n_items * per_item / len(annotators)
        preview["load_min"], preview["load_max"] = math.floor(share), math.ceil(share)
    return preview


@require_GET
@role_required(RESEARCHER, ADJUDICATOR)
def round_detail(request, pk: int):
    round_ = round_or_404(request.user, pk)
    return _render_detail(request, round_, FreezeForm())


def _render_detail(
    request, round_: AnnotationRound, freeze_form: FreezeForm, status: int = 200, lock_form: LockForm | None = None
):
    overview = round_overview_visible(round=round_, user=request.user)
    context = {
        "round": round_,
        "overview": overview,
        "freeze_form": freeze_form,
        "lock_form": lock_form or LockForm(),
        "is_researcher": has_role(request.user, RESEARCHER),
        "seed_visible": round_seed_visible(round=round_, user=request.user),
        **round_selectors.round_summary(round=round_),
    }
    if overview:
        counts = round_selectors.round_counts(round=round_)
        funnel = counts["funnel"]
        quality = round_selectors.round_quality_summary_get(
            round=round_, answered=any(row["done"] for row in counts["progress"])
        )
        context |= {
            "funnel": funnel,
            "funnel_rows": funnel_rows(funnel),
            "progress": counts["progress"],
            # What locking takes from the annotators, named on the lock's confirmation.
            "answers_done": sum(row["done"] for row in counts["progress"]),
            "answers_total": sum(row["total"] for row in counts["progress"]),
            "can_freeze": round_.status == RoundStatus.LOCKED and funnel["undecided"] == 0,
            "waiting": funnel["undecided"],
            "quality_warnings": quality["warnings"],
            "quality_computed_at": quality["computed_at"],
            "quality_stale": quality["stale"],
        }
    else:
        own = annotator_control_counts(round=round_, user=request.user)
        context["item_count"] += own["items"]
        context["hidden_count"] += own["hidden"]
        # Blind: the person annotates this open round, so only their own progress.
        context["progress"] = [
            {"annotator": request.user.get_username(), **selectors.annotator_progress(round=round_, user=request.user)}
        ]
    return render(request, "annotation/round_detail.html", context, status=status)


def _transition(request, pk: int, service, target: str, done_message: str):
    round_ = round_or_404(request.user, pk)
    try:
        service(round=round_, user=request.user)
    except ValidationError as exc:
        if round_.status == target:
            # A double click or a second tab already did it.
            messages.info(request, done_message % {"name": round_.name})
        else:
            messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, done_message % {"name": round_.name})
    return redirect("annotation:round_detail", pk=round_.pk)


@require_POST
@role_required(RESEARCHER)
def round_lock(request, pk: int):
    form = LockForm(request.POST)
    if not form.is_valid():
        round_ = round_or_404(request.user, pk)
        if round_.status == RoundStatus.OPEN:
            return _render_detail(request, round_, FreezeForm(), status=400, lock_form=form)
    return _transition(
        request,
        pk,
        services.round_lock,
        RoundStatus.LOCKED,
        _("The round “%(name)s” is locked: annotators can no longer change answers, adjudication can start."),
    )


@require_POST
@role_required(RESEARCHER)
def round_reopen(request, pk: int):
    return _transition(
        request,
        pk,
        services.round_reopen,
        RoundStatus.OPEN,
        _("The round “%(name)s” is open again for annotators."),
    )


@require_POST
@role_required(RESEARCHER)
def round_freeze(request, pk: int):
    round_ = round_or_404(request.user, pk)
    form = FreezeForm(request.POST)
    if form.is_valid():
        try:
            version = services.version_freeze(
                round=round_,
                name=form.cleaned_data["name"],
                user=request.user,
                idempotency_key=form.cleaned_data["idempotency_key"],
            )
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            if not version.idempotent_repeat:
                n_items = round_selectors.version_get(pk=version.pk).n_items
                messages.success(
                    request,
                    ngettext(
                        "Version “%(name)s” frozen with %(count)s item.",
                        "Version “%(name)s” frozen with %(count)s items.",
                        n_items,
                    )
                    % {"name": version.name, "count": n_items},
                )
            # A repeat (the second of two submits) shows what the first froze instead of an error.
            return redirect("annotation:version_detail", pk=version.pk)
    round_.refresh_from_db()
    return _render_detail(request, round_, form, status=400)


# --- Versions ---------------------------------------------------------------


@require_GET
@role_required()
def version_list(request):
    return render(request, "annotation/version_list.html", {"versions": selectors.version_list()})


@require_GET
@role_required()
@vary_on_htmx
def version_detail(request, pk: int):
    version = version_or_404(pk)
    page = Paginator(round_selectors.version_items(version=version), VERSION_ITEMS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    traits = {t.code: t for t in selectors.trait_list()}
    themes = {t.code: t for t in selectors.theme_list()}
    rows = [
        {
            "item": item,
            "traits": [localized_name(traits[c]) if c in traits else c for c in item.traits],
            "theme": localized_name(themes[item.theme]) if item.theme in themes else item.theme,
        }
        for item in page.object_list
    ]
    context = {
        "version": version,
        "gold": gold_labels_visible(user=request.user),
        "funnel_rows": funnel_rows(selectors.version_funnel(version=version)),
        "provenance": round_selectors.version_provenance_counts(version=version),
        "page": page,
        "rows": rows,
    }
    template = "annotation/version_detail.html"
    if wants_fragment(request):
        template += "#version-items"
    return render(request, template, context)


@require_GET
@role_required()
def version_export(request, pk: int):
    version = version_or_404(pk)
    fmt = request.GET.get("format", "")
    try:
        body = services.version_export(version=version, fmt=fmt, gold=gold_labels_visible(user=request.user))
    except services.ExportError:
        return HttpResponseBadRequest(
            _("Unknown export format “%(format)s”; use ?format=csv or ?format=jsonl.") % {"format": fmt},
            content_type="text/plain; charset=utf-8",
        )
    filename = f"{file_stem(version.name, fallback=f'version-{version.pk}')}.{fmt}"
    return download(body, filename=filename, fmt=fmt)


@require_GET
@role_required(RESEARCHER)
def version_export_hf(request, pk: int):
    """The version as a Hugging Face dataset folder (Parquet, card, croissant.json) in a zip: the
    folder ``export_version --format hf`` writes. Researchers only: it publishes the gold labels."""
    version = version_or_404(pk)
    try:
        body, filename = services.version_hf_zip(version=version)
    except services.ExportError as error:
        return HttpResponseBadRequest(
            _("This version cannot be exported as a Hugging Face dataset: %(reason)s") % {"reason": error},
            content_type="text/plain; charset=utf-8",
        )
    return download(body, filename=filename, fmt="zip")
