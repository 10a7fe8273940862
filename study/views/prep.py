"""The terms page of a study: its preparation status, the culture-specific terms to confirm and the
sentence pairs, plus the button that queues the preparation again.

Each term row is a small form that htmx swaps in place; without JavaScript the same form posts
the whole page and comes back to the row.
"""

import re

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from core.decorators import role_required
from core.roles import RESEARCHER

from ..models import Artwork, Culture, DescriptionPair, PrepStatus, Study, StudyStatus, Term, TermStatus
from ..services import prep as services

EDITABLE = (StudyStatus.DRAFT, StudyStatus.PAUSED)
# Terms the page marks in the descriptions: every one not rejected.
SHOWN_STATUSES = [s for s in TermStatus.values if s != TermStatus.REJECTED]


class TermEditForm(forms.Form):
    zh = forms.CharField(label=gettext_lazy("Chinese label"), max_length=200, required=False)
    wikidata = forms.CharField(label=gettext_lazy("Wikidata item"), max_length=20, required=False)


class TermAddForm(forms.Form):
    term = forms.CharField(label=gettext_lazy("English term"), max_length=200)
    zh = forms.CharField(label=gettext_lazy("Chinese label"), max_length=200)
    wikidata = forms.CharField(label=gettext_lazy("Wikidata item (optional)"), max_length=20, required=False)


class ThresholdForm(forms.Form):
    threshold = forms.FloatField(label=gettext_lazy("Similarity threshold"), min_value=0.01, max_value=1.0)


class TermModelForm(forms.Form):
    term_model = forms.ModelChoiceField(label=gettext_lazy("Model"), queryset=None, empty_label=None, required=False)

    def __init__(self, *args, **kwargs):
        from evaluation.models import ModelConfig

        super().__init__(*args, **kwargs)
        self.fields["term_model"].queryset = ModelConfig.objects.order_by("name")


def _study_or_404(slug: str) -> Study:
    return get_object_or_404(Study, slug=slug)


def _error_text(exc: ValidationError) -> str:
    text = " ".join(exc.messages)
    return text[:1].upper() + text[1:]


def _preparing(study: Study) -> bool:
    return PrepStatus.RUNNING in (study.highlight_status, study.terms_status)


def marked_text(text: str, terms: list[Term]):
    """The description with each term wrapped in a mark carrying its Chinese label; escaped first."""
    if not terms:
        return escape(text)
    by_lower = {" ".join(t.term.split()).lower(): t for t in terms}
    # Longest first, so "Chinese peony" wins over "peony".
    words = sorted(by_lower, key=len, reverse=True)
    pattern = re.compile(
        r"(?<!\w)(" + "|".join(r"\s+".join(re.escape(w) for w in word.split(" ")) for word in words) + r")(?!\w)",
        flags=re.IGNORECASE,
    )
    parts, last = [], 0
    for match in pattern.finditer(text):
        term = by_lower[" ".join(match.group(0).split()).lower()]
        parts.append(escape(text[last : match.start()]))
        parts.append(
            format_html(
                '<mark class="study-term study-term-{}" title="{}" data-term="{}">{}</mark>',
                term.status,
                term.zh or _("no Chinese label yet"),
                term.pk,
                match.group(0),
            )
        )
        last = match.end()
    parts.append(escape(text[last:]))
    # Safe: every part is escaped or built by format_html.
    return mark_safe("".join(parts))


def _pair_rows(pair: DescriptionPair) -> list[dict]:
    base, pragmatic = pair.base.sentences, pair.pragmatic.sentences
    rows = []
    for i, j, cosine in pair.matches:
        if i < len(base) and j < len(pragmatic):
            rows.append({"base": base[i], "pragmatic": pragmatic[j], "cosine": cosine, "i": i, "j": j})
    return rows


def _terms_context(study: Study) -> dict:
    artworks = list(
        Artwork.objects.filter(study=study, culture=Culture.CHINESE)
        .prefetch_related("descriptions", "terms__confirmed_by")
        .order_by("position")
    )
    sections = []
    for artwork in artworks:
        terms = list(artwork.terms.all())
        shown = [t for t in terms if t.status in SHOWN_STATUSES]
        sections.append(
            {
                "artwork": artwork,
                "terms": terms,
                "descriptions": [
                    {"description": d, "marked": marked_text(d.text, shown)} for d in artwork.descriptions.all()
                ],
                "add_form": TermAddForm(prefix=f"add-{artwork.pk}"),
            }
        )
    pairs = (
        DescriptionPair.objects.filter(artwork__study=study)
        .select_related("artwork", "base", "pragmatic")
        .order_by("artwork__position", "listener")
    )
    counts = {status: 0 for status in TermStatus.values}
    for section in sections:
        for term in section["terms"]:
            counts[term.status] += 1
    return {
        "sections": sections,
        "pairs": [{"pair": pair, "rows": _pair_rows(pair)} for pair in pairs],
        "counts": counts,
    }


def _status_context(study: Study) -> dict:
    return {
        "study": study,
        "preparing": _preparing(study),
        "editable": study.status in EDITABLE,
        "model_form": TermModelForm(),
        "threshold_form": ThresholdForm(initial={"threshold": study.similarity_threshold}),
    }


def _row(request, term: Term, *, error: str = "", saved: str = ""):
    term.refresh_from_db()
    study = Study.objects.get(pk=term.artwork.study_id)
    return render(
        request,
        "study/_terms_row.html",
        {"term": term, "study": study, "editable": study.status in EDITABLE, "row_error": error, "row_saved": saved},
    )


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
@vary_on_headers("HX-Request")
def study_terms(request, slug: str):
    study = _study_or_404(slug)
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
            messages.success(request, _("%(n)s terms found on Wikidata are confirmed.") % {"n": n})
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
    term = Term.objects.filter(pk=request.POST.get("term") or 0, artwork__study=study).select_related("artwork").first()
    if term is None:
        raise Http404(_("No such term in this study."))
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
    artwork = Artwork.objects.filter(study=study, pk=request.POST.get("artwork_pk") or 0).first()
    if artwork is None:
        raise Http404(_("No such artwork in this study."))
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
    study = _study_or_404(slug)
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
