"""Researcher pages of studies: the list, the package upload, a study's page and its status buttons."""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import add_service_errors, vary_on_htmx
from core.roles import RESEARCHER

from ..forms import StudyImportForm, StudyTransitionForm
from ..models import Device, PrepStatus, StudyStatus
from ..selectors import studies as selectors
from ..selectors.lookups import study_or_404
from ..services import imports
from ..services import studies as services

# Prolific replaces these placeholders with the participant's ids when it sends them to the study URL.
PROLIFIC_PARAMETERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
PREPARING = (PrepStatus.PENDING, PrepStatus.RUNNING)


def entry_urls(request, study) -> dict:
    """The URL to paste into Prolific, for one study with a screener and for one Prolific study per group."""
    base = request.build_absolute_uri(reverse("study:entry", args=[study.slug]))
    return {
        "any": f"{base}?{PROLIFIC_PARAMETERS}",
        "groups": [(group, f"{base}?{PROLIFIC_PARAMETERS}&group={group}") for group in study.groups],
    }


def _status_context(study) -> dict:
    checklist = {item["key"]: item for item in selectors.study_checklist(study)}
    preparing = study.status == StudyStatus.DRAFT and (
        study.highlight_status in PREPARING or study.terms_status in PREPARING
    )
    return {
        "study": study,
        "checklist": checklist,
        "blockers": selectors.study_launch_blockers(study=study) if study.status == StudyStatus.DRAFT else [],
        "polling": preparing,
        # A failed preparation, or one never queued (no worker seen it), can be started again.
        "can_prepare": study.status == StudyStatus.DRAFT
        and PrepStatus.RUNNING not in (study.highlight_status, study.terms_status)
        and not (study.highlight_status == PrepStatus.READY and study.terms_status == PrepStatus.READY),
    }


@require_GET
@role_required(RESEARCHER)
def study_list(request):
    return render(request, "study/study_list.html", {"studies": selectors.study_list()})


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def study_import(request):
    errors: list[str] = []
    status = 200
    if request.method == "POST":
        form = StudyImportForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["package"]
            try:
                study = imports.study_import(
                    source=upload,
                    user=request.user,
                    filename=upload.name,
                    idempotency_key=form.cleaned_data["idempotency_key"],
                )
            except imports.StudyImportError as exc:
                errors = exc.errors
            except ValidationError as exc:
                add_service_errors(form, exc)
            else:
                if not study.idempotent_repeat:
                    messages.success(
                        request,
                        _("Study “%(slug)s” imported as a draft; its sentence pairs and terms are being prepared.")
                        % {"slug": study.slug},
                    )
                return redirect("study:detail", slug=study.slug)
        status = 400
    else:
        form = StudyImportForm()
    return render(request, "study/study_import.html", {"form": form, "errors": errors}, status=status)


@require_GET
@role_required(RESEARCHER)
@vary_on_htmx
def study_detail(request, slug: str):
    study = study_or_404(slug, progress=True)
    context = _status_context(study)
    # htmx asks for the whole page when it restores history it no longer holds.
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "study/study_detail.html#study-status", context)
    context.update(
        {
            "artworks": selectors.study_artworks(study=study),
            "entry": entry_urls(request, study),
            "devices": [Device(device).label for device in study.devices if device in Device.values],
            "completion_url": settings.PROLIFIC_COMPLETE_URL.format(code=study.completion_code),
            "screenout_url": settings.PROLIFIC_COMPLETE_URL.format(code=study.screenout_code),
            "no_consent_url": settings.PROLIFIC_COMPLETE_URL.format(code=study.no_consent_code),
        }
    )
    return render(request, "study/study_detail.html", context)


@require_POST
@role_required(RESEARCHER)
def study_transition(request, slug: str):
    study = study_or_404(slug, progress=True)
    form = StudyTransitionForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Unknown action."))
        return redirect("study:detail", slug=study.slug)
    action = form.cleaned_data["action"]
    try:
        if action == "delete":
            services.study_delete(study=study, user=request.user)
        else:
            services.study_transition(study=study, action=action, user=request.user)
    except services.StudyTransitionError as exc:
        messages.error(request, str(exc)[:1].upper() + str(exc)[1:])
        return redirect("study:detail", slug=study.slug)
    if action == "delete":
        messages.success(request, _("Study “%(slug)s” deleted.") % {"slug": study.slug})
        return redirect("study:list")
    done = {
        "launch": _("The study is live: participants arriving from Prolific can start."),
        "pause": _("The study is paused."),
        "resume": _("The study is live again."),
        "close": _("The study is closed."),
    }
    messages.success(request, done[action])
    return redirect("study:detail", slug=study.slug)
