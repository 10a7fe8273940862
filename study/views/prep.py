"""The terms page of a study: its preparation status, the culture-specific terms to confirm and the
sentence pairs, plus the button that queues the preparation again.

Each term row is a small form that htmx swaps in place; without JavaScript the same form posts
the whole page and comes back to the row.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST

from core.decorators import role_required
from core.http import vary_on_htmx
from core.roles import RESEARCHER

from ..forms import TermAddForm, TermEditForm, TermModelForm, ThresholdForm
from ..models import PrepStatus, Study, Term
from ..rules import study_stimuli_editable
from ..selectors.lookups import study_artwork_or_404, study_or_404, study_term_or_404
from ..selectors.prep import study_terms_review, term_in_descriptions, term_study
from ..services import prep as services
from ..text import term_matches


def _error_text(exc: ValidationError) -> str:
    text = " ".join(exc.messages)
    return text[:1].upper() + text[1:]


def _preparing(study: Study) -> bool:
    return PrepStatus.RUNNING in (study.highlight_status, study.terms_status)


def marked_text(text: str, terms: list[Term]):
    """The description with each term (in any inflected form) wrapped in a mark carrying its Chinese
    label; escaped first."""
    by_text = {" ".join(t.term.split()): t for t in terms}
    parts, last = [], 0
    for start, end, found in term_matches(text, by_text):
        term = by_text[found]
        parts.append(escape(text[last:start]))
        parts.append(
            format_html(
                '<mark class="study-term study-term-{}" title="{}" data-term="{}">{}</mark>',
                term.status,
                term.zh or _("no Chinese label yet"),
                term.pk,
                text[start:end],
            )
        )
        last = end
    parts.append(escape(text[last:]))
    # Safe: every part is escaped or built by format_html.
    return mark_safe("".join(parts))


def _terms_context(study: Study) -> dict:
    review = study_terms_review(study=study)
    sections = [
        {
            "artwork": section["artwork"],
            "terms": section["terms"],
            "descriptions": [
                {"description": d, "marked": marked_text(d.text, section["shown"])} for d in section["descriptions"]
            ],
            "add_form": TermAddForm(prefix=f"add-{section['artwork'].pk}"),
        }
        for section in review["sections"]
    ]
    return {
        "sections": sections,
        "pairs": review["pairs"],
        "counts": review["counts"],
        "unmatched": review["unmatched"],
    }


def _status_context(study: Study) -> dict:
    return {
        "study": study,
        "preparing": _preparing(study),
        "editable": study_stimuli_editable(study),
        "model_form": TermModelForm(),
        "threshold_form": ThresholdForm(initial={"threshold": study.similarity_threshold}),
    }


def _row(request, term: Term, *, error: str = "", saved: str = ""):
    term.refresh_from_db()
    term.in_descriptions = term_in_descriptions(term=term)
    study = term_study(term=term)
    return render(
        request,
        "study/_terms_row.html",
        {
            "term": term,
            "study": study,
            "editable": study_stimuli_editable(study),
            "row_error": error,
            "row_saved": saved,
        },
    )


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
@vary_on_htmx
def study_terms(request, slug: str):
    study = study_or_404(slug)
    if request.method == "POST":
        return _terms_post(request, study)
    if request.htmx and request.GET.get("part") == "status" and not request.htmx.history_restore_request:
        if not _preparing(study):
            # The task has finished: the whole page reloads, since it may have found new terms.
            return HttpResponse(headers={"HX-Refresh": "true"})
        return render(request, "study/study_terms.html#prep-status", _status_context(study))
    context = {**_status_context(study), **_terms_context(study)}
    return render(request, "study/study_terms.html", context)


def _terms_post(request, study: Study):
    action = request.POST.get("action", "")
    page = reverse("study:terms", args=[study.slug])
    if action in {"confirm", "reject", "save"}:
        return _term_action(request, study, action)
    try:
        if action == "confirm_all":
            n = services.terms_confirm_all(study=study, user=request.user)
            messages.success(
                request,
                ngettext(
                    "%(n)s term found on Wikidata is confirmed.", "%(n)s terms found on Wikidata are confirmed.", n
                )
                % {"n": n},
            )
        elif action == "add":
            return _term_add(request, study)
        elif action == "threshold":
            form = ThresholdForm(request.POST)
            if not form.is_valid():
                messages.error(request, _("The threshold is a number between 0 and 1."))
                return redirect(page)
            services.study_threshold_set(study=study, threshold=form.cleaned_data["threshold"])
            messages.success(
                request,
                _("The threshold is now %(t)s; the sentence pairs are being computed again.")
                % {"t": form.cleaned_data["threshold"]},
            )
        else:
            messages.error(request, _("Unknown action."))
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect(page)


def _term_action(request, study: Study, action: str):
    term = study_term_or_404(study=study, pk=request.POST.get("term"))
    form = TermEditForm(request.POST)
    form.is_valid()
    zh = form.cleaned_data.get("zh") if "zh" in request.POST else None
    wikidata = form.cleaned_data.get("wikidata") if "wikidata" in request.POST else None
    error, saved = "", ""
    try:
        if form.errors:
            raise ValidationError(list(form.errors.values())[0])
        if action == "confirm":
            services.term_confirm(term=term, user=request.user, zh=zh, wikidata=wikidata)
            saved = _("Confirmed.")
        elif action == "reject":
            services.term_reject(term=term, user=request.user)
            saved = _("Rejected.")
        else:
            services.term_edit(term=term, user=request.user, zh=zh or "", wikidata=wikidata)
            saved = _("Saved.")
    except ValidationError as exc:
        error = _error_text(exc)
    if request.htmx:
        return _row(request, term, error=error, saved=saved)
    if error:
        messages.error(request, f"{term.term}: {error}")
    else:
        messages.success(request, f"{term.term}: {saved}")
    return redirect(f"{reverse('study:terms', args=[study.slug])}#term-{term.pk}")


def _term_add(request, study: Study):
    artwork = study_artwork_or_404(study=study, pk=request.POST.get("artwork_pk"))
    form = TermAddForm(request.POST, prefix=f"add-{artwork.pk}")
    page = reverse("study:terms", args=[study.slug])
    if not form.is_valid():
        messages.error(request, _("To add a term, give the English term and its Chinese label."))
        return redirect(f"{page}#artwork-{artwork.pk}")
    try:
        term = services.term_add(
            artwork=artwork,
            term=form.cleaned_data["term"],
            zh=form.cleaned_data["zh"],
            wikidata=form.cleaned_data["wikidata"],
            user=request.user,
        )
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
        return redirect(f"{page}#artwork-{artwork.pk}")
    messages.success(request, _("“%(term)s” added and confirmed.") % {"term": term.term})
    return redirect(f"{page}#term-{term.pk}")


@require_POST
@role_required(RESEARCHER)
def study_prepare(request, slug: str):
    """Queue the preparation again, optionally finding terms with a chosen model."""
    study = study_or_404(slug)
    form = TermModelForm(request.POST)
    term_model = form.cleaned_data.get("term_model") if form.is_valid() else None
    if request.POST.get("term_model") and term_model is None:
        messages.error(request, _("Choose one of the registered models."))
    else:
        try:
            services.study_prepare_start(study=study, term_model=term_model, force=request.POST.get("force") == "1")
        except ValidationError as exc:
            messages.error(request, _error_text(exc))
        else:
            if term_model is not None:
                messages.success(
                    request,
                    _("Preparation queued: sentence pairs, then terms found with %(model)s and looked up on Wikidata.")
                    % {"model": term_model.name},
                )
            else:
                messages.success(request, _("Preparation queued: sentence pairs and Wikidata lookups."))
    # Back to the page the button was on (the study page or the terms page).
    for target in (request.POST.get("next", ""), request.headers.get("Referer", "")):
        if target and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return redirect(target)
    return redirect("study:terms", slug=study.slug)
