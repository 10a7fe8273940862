"""The study's Prolific page (state, publish form with a preview of the request bodies, review, bonuses), its
create / publish / sync / webhook actions, and the log of every API call."""

import json

from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from core.decorators import role_required
from core.http import vary_on_htmx, wants_fragment
from core.roles import RESEARCHER
from study.selectors.lookups import study_or_404

from .. import selectors, services
from ..client import ProlificError
from ..forms import (
    EACH_GROUP,
    BonusPayForm,
    BonusUploadForm,
    PublishConfirmForm,
    PublishForm,
    RejectForm,
    ReturnForm,
)
from ..models import ProlificStudyStatus
from . import back, call_prolific, not_configured_text

LOG_LIMIT = 200


def site_of(request) -> str:
    """The app's public address: PROLIFIC_SITE_URL when set (a researcher may reach the app by another
    address than participants do), else the address this researcher reaches it at."""
    return settings.PROLIFIC_SITE_URL.strip().rstrip("/") or request.build_absolute_uri("/").rstrip("/")


def webhook_url_of(request) -> str:
    return site_of(request) + reverse("prolific:webhook")


def site_warning(request) -> str:
    """Why Prolific cannot reach the address this page builds the study URL and webhook on, and which setting
    to change; "" when it can."""
    site = site_of(request)
    problem = selectors.site_unreachable(site)
    if not problem:
        return ""
    if settings.PROLIFIC_SITE_URL.strip():
        fix = _("Change PROLIFIC_SITE_URL to the app's public https:// address and restart the app.")
    else:
        fix = _(
            "Set PROLIFIC_SITE_URL to the app's public https:// address and restart the app (or open this page "
            "at that address)."
        )
    return f"{problem} {fix}"


def preview(request, form: PublishForm, study) -> dict:
    """The exact create-request bodies for the form's choices (or its defaults), as JSON to show, or why not."""
    if form.is_bound and not form.is_valid():
        return {"bodies": [], "bodies_json": "", "bodies_error": ""}
    if form.is_bound:
        group, completion, filters = (
            form.chosen_group(),
            form.cleaned_data["completion_action"],
            form.cleaned_data["filters"],
        )
    else:
        group, completion, filters = EACH_GROUP, form.fields["completion_action"].initial, []
    try:
        bodies = selectors.prolific_study_bodies(
            study=study, group=group, completion_action=completion, filters=filters, site=site_of(request)
        )
    except ProlificError as exc:
        # A package without a reward or duration: the page says what to fix instead of a body.
        return {"bodies": [], "bodies_json": "", "bodies_error": str(exc)}
    return {"bodies": bodies, "bodies_json": json.dumps(bodies, indent=2, ensure_ascii=False), "bodies_error": ""}


def page_context(request, study, *, form: PublishForm | None = None, bonus_form=None) -> dict:
    form = form or PublishForm(study=study)
    return {
        "configured": selectors.prolific_configured(),
        "secret_configured": selectors.prolific_webhook_secret_configured(),
        "token_env": settings.PROLIFIC_API_TOKEN_ENV,
        "secret_env": settings.PROLIFIC_WEBHOOK_SECRET_ENV,
        "api_url": settings.PROLIFIC_API_URL,
        "sync_seconds": settings.PROLIFIC_SYNC_SECONDS,
        "bonus_cap": settings.PROLIFIC_BONUS_CAP,
        "webhook_url": webhook_url_of(request),
        "site_warning": site_warning(request),
        "webhook_refusals": selectors.webhook_refusals_recent(),
        "refused_bodies_per_minute": settings.PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE,
        "prolific_studies": selectors.prolific_studies_of(study=study),
        "form": form,
        **preview(request, form, study),
        "publish_form": PublishConfirmForm(),
        "submissions": selectors.prolific_submissions_of(study=study),
        **review_context(study),
        "bonus_form": bonus_form or BonusUploadForm(),
        "batches": selectors.bonus_batches_of(study=study),
        "pay_form": BonusPayForm(),
        **selectors.worker_hint(),
    }


def review_context(study) -> dict:
    return {
        "study": study,
        "review_rows": selectors.prolific_review_rows(study=study),
        "discrepancies": selectors.prolific_discrepancies(study=study),
        "reject_form": RejectForm(),
        "return_form": ReturnForm(),
    }


@require_GET
@role_required(RESEARCHER)
@vary_on_htmx
def prolific_study_page(request, slug: str):
    """The page; its review part alone (``?panel=review``) is what the study's results page shows, and one bonus
    batch's row (``?batch=N``) is what that row polls while a worker pays it."""
    study = study_or_404(slug)
    if request.GET.get("panel") == "review" and wants_fragment(request):
        return render(request, "prolific/study.html#review-panel", review_context(study))
    if request.GET.get("batch", "").isdigit() and wants_fragment(request):
        batch = selectors.bonus_batch_of(study=study, pk=int(request.GET["batch"]))
        if batch is None:
            raise Http404(_("No such bonus batch of this study."))
        context = {"study": study, "batch": batch, "pay_form": BonusPayForm(), **selectors.worker_hint()}
        return render(request, "prolific/study.html#bonus-batch", context)
    return render(request, "prolific/study.html", page_context(request, study))


@require_POST
@role_required(RESEARCHER)
@vary_on_htmx
def prolific_study_create(request, slug: str):
    """Creates the draft(s); with ``preview`` it only shows the request bodies (the htmx fragment, or the page)."""
    study = study_or_404(slug)
    form = PublishForm(request.POST, study=study)
    valid = form.is_valid()
    if "preview" in request.POST:
        if wants_fragment(request):
            context = {"study": study, "form": form, **preview(request, form, study)}
            return render(request, "prolific/study.html#request-preview", context)
        return render(
            request, "prolific/study.html", page_context(request, study, form=form), status=200 if valid else 400
        )
    if not valid:
        return render(request, "prolific/study.html", page_context(request, study, form=form), status=400)
    n = len(preview(request, form, study)["bodies"])
    would = ngettext(
        "It would create %(n)s draft study on Prolific with the request body shown below.",
        "It would create %(n)s draft studies on Prolific with the request bodies shown below.",
        n,
    ) % {"n": n}
    if not selectors.prolific_configured():
        # The page again with the researcher's choices, so "shown below" is what they asked for.
        messages.warning(request, not_configured_text(would))
        return render(request, "prolific/study.html", page_context(request, study, form=form))
    created = call_prolific(
        request,
        would=would,
        call=lambda: services.prolific_study_create(
            study=study,
            group=form.chosen_group(),
            completion_action=form.cleaned_data["completion_action"],
            filters=form.cleaned_data["filters"],
            user=request.user,
            site=site_of(request),
        ),
    )
    if created is not None:
        ids = ", ".join(p.prolific_id or "-" for p in created)
        messages.success(
            request,
            _("Draft on Prolific: %(ids)s. Check it, then publish it below.") % {"ids": ids},
        )
    return back(study)


@require_POST
@role_required(RESEARCHER)
def prolific_study_publish(request, slug: str):
    study = study_or_404(slug)
    form = PublishConfirmForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return back(study)
    target = next(
        (p for p in selectors.prolific_studies_of(study=study) if p.pk == form.cleaned_data["prolific_study"]), None
    )
    if target is None:
        messages.error(request, _("No such Prolific study of this study."))
        return back(study)
    if target.status != ProlificStudyStatus.UNPUBLISHED:
        # A double click or a second tab: the first request published it (or is publishing it).
        messages.info(
            request,
            _("Prolific study %(id)s is already %(status)s; nothing was sent.")
            % {"id": target.prolific_id or "-", "status": target.get_status_display()},
        )
        return back(study)
    published = call_prolific(
        request,
        would=_("It would publish the draft %(id)s.") % {"id": target.prolific_id or "-"},
        call=lambda: services.prolific_study_publish(prolific_study=target),
    )
    if published is not None:
        messages.success(
            request,
            _("Prolific study %(id)s is %(status)s: participants can take it; this page syncs every %(s)s seconds.")
            % {
                "id": published.prolific_id,
                "status": published.get_status_display(),
                "s": settings.PROLIFIC_SYNC_SECONDS,
            },
        )
    return back(study)


@require_POST
@role_required(RESEARCHER)
def prolific_study_sync(request, slug: str):
    study = study_or_404(slug)
    counts = call_prolific(
        request,
        would=_("It would list the submissions of this study's Prolific studies and store their statuses."),
        call=lambda: services.prolific_submissions_sync(study=study),
    )
    if counts is not None:
        messages.success(
            request,
            _(
                "Synced: %(seen)s submissions on Prolific, %(created)s new, %(updated)s changed, "
                "%(freed)s places freed here."
            )
            % {key: counts.get(key, 0) for key in ("seen", "created", "updated", "freed")},
        )
        if counts.get("unverified"):
            messages.warning(
                request,
                ngettext(
                    "%(n)s session Prolific does not know was released and left out of the results.",
                    "%(n)s sessions Prolific does not know were released and left out of the results.",
                    counts["unverified"],
                )
                % {"n": counts["unverified"]},
            )
    return back(study)


@require_POST
@role_required(RESEARCHER)
def prolific_hooks_register(request, slug: str):
    study = study_or_404(slug)
    target_url = webhook_url_of(request)
    done = call_prolific(
        request,
        would=_("It would subscribe %(url)s to Prolific's submission status changes.") % {"url": target_url},
        call=lambda: services.prolific_hooks_register(study=study, target_url=target_url),
    )
    if done is not None:
        if done.get("created", True):
            text = _("Prolific now sends submission status changes to %(url)s.")
        else:
            text = _("Prolific already sends submission status changes to %(url)s; nothing changed.")
        messages.success(request, text % {"url": target_url})
    return back(study)


@require_GET
@role_required(RESEARCHER)
def prolific_log(request, slug: str):
    study = study_or_404(slug)
    calls = [
        # The body as JSON, as it was sent (the token never is: the client keeps it out of the log).
        (call, None if call.request_body is None else json.dumps(call.request_body, indent=2, ensure_ascii=False))
        for call in selectors.prolific_calls_of(study=study, limit=LOG_LIMIT)
    ]
    return render(request, "prolific/log.html", {"study": study, "calls": calls, "limit": LOG_LIMIT})
