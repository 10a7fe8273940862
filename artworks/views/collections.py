"""Artwork collections: list, import, the artworks of a collection, and one artwork's review page.

On the artwork page every element row and every question is a small form. htmx posts it and
swaps the row (or the question) in place; without JavaScript the same form posts to the
same URL and the page comes back with a message.
"""

from csp.decorators import csp_exempt
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from core.decorators import role_required
from core.files import untrusted_file_response
from core.http import add_service_errors, vary_on_htmx
from core.roles import RESEARCHER

from ..forms import BackgroundForm, CollectionImportForm, ElementForm, QuestionForm
from ..models import DISTRACTORS, ArtworkCollection, ArtworkQuestionType, CollectionArtwork
from ..selectors import collections as selectors
from ..services import editing
from ..services.editing import ArtworkEditError
from ..services.imports import ArtworkImportError, artworks_import


@require_GET
@role_required(RESEARCHER)
def collection_list(request):
    return render(request, "artworks/artwork_collection_list.html", {"collections": selectors.collection_list()})


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def collection_import(request):
    form = CollectionImportForm(request.POST or None, request.FILES or None)
    import_errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            # A repeat of the same form lands on the collection the first submit imported.
            collection = artworks_import(
                name=form.cleaned_data["name"],
                source=upload,
                filename=upload.name,
                user=request.user,
                idempotency_key=form.cleaned_data["idempotency_key"],
            )
        except ArtworkImportError as exc:
            import_errors = exc.errors
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(
                request,
                _("Collection “%(name)s” imported with %(n)s artworks.")
                % {"name": collection.name, "n": collection.artworks.count()},
            )
            return redirect("artworks:collection_detail", pk=collection.pk)
    status = 400 if form.is_bound and (form.errors or import_errors) else 200
    return render(
        request,
        "artworks/artwork_collection_import.html",
        {"form": form, "import_errors": import_errors},
        status=status,
    )


@require_GET
@role_required(RESEARCHER)
def collection_detail(request, pk: int):
    collection = get_object_or_404(ArtworkCollection, pk=pk)
    artworks = list(selectors.collection_artworks(collection=collection))
    return render(
        request,
        "artworks/artwork_collection_detail.html",
        {"collection": collection, "artworks": artworks, "n_reviewed": sum(1 for a in artworks if a.reviewed_at)},
    )


def _artwork_or_404(pk: int, artwork_pk: int) -> CollectionArtwork:
    artwork = selectors.collection_artwork_get(collection_id=pk, pk=artwork_pk)
    if artwork is None:
        raise Http404
    return artwork


# The site policy would be the wrong one: the file carries its own, stricter policy.
@csp_exempt()
@require_GET
@role_required(RESEARCHER)
def artwork_image(request, pk: int, artwork_pk: int):
    artwork = _artwork_or_404(pk, artwork_pk)
    if not artwork.image:
        raise Http404
    response = FileResponse(artwork.image.open("rb"))
    response["Cache-Control"] = "private, max-age=3600"
    return untrusted_file_response(response, filename=artwork.image.name, inline=True)


# --- The artwork page ----------------------------------------------------------------------------


def _element_row(element, values=None, errors=None, saved="") -> dict:
    values = values or {}
    return {
        "pk": element.pk,
        "name": values.get("name", element.name),
        "is_symbol": values.get("is_symbol", element.is_symbol),
        "meaning": values.get("meaning", element.meaning),
        "errors": errors or [],
        "saved": saved,
    }


def _question_block(question, values=None, errors=None, saved="") -> dict:
    values = values or {}
    distractors = list(values.get("distractors", question.distractors if question else []))
    distractors += [""] * (DISTRACTORS - len(distractors))
    return {
        "pk": question.pk if question else None,
        "key": question.key if question else "",
        "type": values.get("type", question.type if question else ArtworkQuestionType.ATTUNED),
        "symbol": values.get("symbol", question.symbol if question else ""),
        "question": values.get("question", question.question if question else ""),
        "answer": values.get("answer", question.answer if question else ""),
        "distractors": list(enumerate(distractors, start=1)),
        "errors": errors or {},
        "saved": saved,
    }


def _page_context(artwork: CollectionArtwork, *, element_add=None, question_add=None) -> dict:
    elements = list(selectors.artwork_elements(artwork=artwork))
    questions = list(selectors.artwork_questions(artwork=artwork))
    return {
        "artwork": artwork,
        "collection": artwork.collection,
        "element_rows": [_element_row(e) for e in elements],
        "symbols": [e.name for e in elements if e.is_symbol],
        "question_blocks": [_question_block(q) for q in questions],
        "element_add": element_add or _element_add_state(),
        "question_add": question_add or _question_block(None),
        "type_choices": ArtworkQuestionType.choices,
    }


def _element_add_state(values=None, errors=None) -> dict:
    values = values or {}
    return {
        "name": values.get("name", ""),
        "is_symbol": values.get("is_symbol", False),
        "meaning": values.get("meaning", ""),
        "errors": errors or [],
    }


def _errors_text(exc: ArtworkEditError) -> str:
    return " ".join(message for messages_ in exc.errors.values() for message in messages_)


def _page_url(artwork: CollectionArtwork, anchor: str = "") -> str:
    url = reverse("artworks:artwork_detail", args=[artwork.collection_id, artwork.pk])
    return f"{url}#{anchor}" if anchor else url


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
@vary_on_htmx
def artwork_detail(request, pk: int, artwork_pk: int):
    artwork = _artwork_or_404(pk, artwork_pk)
    if request.method == "POST":
        handler = _ACTIONS.get(request.POST.get("action", ""))
        if handler is None:
            messages.error(request, _("Unknown action."))
            return redirect(_page_url(artwork))
        return handler(request, artwork)
    return render(request, "artworks/artwork_detail.html", _page_context(artwork))


def _element_values(request) -> dict:
    form = ElementForm(request.POST)
    form.is_valid()
    return {
        "name": form.cleaned_data.get("name", ""),
        "is_symbol": form.cleaned_data.get("is_symbol", False),
        "meaning": form.cleaned_data.get("meaning", ""),
    }


def _element_of(request, artwork):
    element = artwork.elements.filter(pk=request.POST.get("element") or 0).first()
    if element is None:
        raise Http404(_("No such element on this artwork."))
    return element


def _element_save(request, artwork):
    element = _element_of(request, artwork)
    values = _element_values(request)
    old_name = element.name
    try:
        editing.element_save(artwork=artwork, element=element, user=request.user, **values)
    except ArtworkEditError as exc:
        if request.htmx:
            return render(
                request,
                "artworks/_artwork_element_row.html",
                {
                    "row": _element_row(element, values, [m for ms in exc.errors.values() for m in ms]),
                    "artwork": artwork,
                },
            )
        messages.error(request, f"{old_name}: {_errors_text(exc)}")
        return redirect(_page_url(artwork, f"element-{element.pk}"))
    if request.htmx:
        if old_name != element.name and artwork.questions.filter(symbol=element.name).exists():
            # The questions about this symbol show the new name too: the whole page is redrawn.
            return HttpResponse(headers={"HX-Refresh": "true"})
        return render(
            request,
            "artworks/_artwork_element_row.html",
            {"row": _element_row(element, saved=_("Saved.")), "artwork": artwork},
        )
    messages.success(request, _("“%(name)s” saved.") % {"name": element.name})
    return redirect(_page_url(artwork, f"element-{element.pk}"))


def _element_delete(request, artwork):
    element = _element_of(request, artwork)
    try:
        editing.element_delete(element=element, user=request.user)
    except ArtworkEditError as exc:
        if request.htmx:
            return render(
                request,
                "artworks/_artwork_element_row.html",
                {"row": _element_row(element, errors=[_errors_text(exc)]), "artwork": artwork},
            )
        messages.error(request, _errors_text(exc))
        return redirect(_page_url(artwork, f"element-{element.pk}"))
    if request.htmx:
        # An empty answer swapped over the row removes it.
        return HttpResponse("")
    messages.success(request, _("“%(name)s” deleted.") % {"name": element.name})
    return redirect(_page_url(artwork, "elements"))


def _element_add(request, artwork):
    values = _element_values(request)
    try:
        editing.element_save(artwork=artwork, user=request.user, **values)
    except ArtworkEditError as exc:
        if request.htmx:
            context = _page_context(
                artwork, element_add=_element_add_state(values, [m for ms in exc.errors.values() for m in ms])
            )
            return render(request, "artworks/_artwork_elements.html", context)
        messages.error(request, _errors_text(exc))
        return redirect(_page_url(artwork, "elements"))
    if request.htmx:
        return render(request, "artworks/_artwork_elements.html", _page_context(artwork))
    messages.success(request, _("“%(name)s” added.") % {"name": values["name"]})
    return redirect(_page_url(artwork, "elements"))


def _question_values(request) -> dict:
    form = QuestionForm(request.POST)
    form.is_valid()
    return {
        "type": request.POST.get("type", ""),
        "symbol": form.cleaned_data.get("symbol", ""),
        "question": form.cleaned_data.get("question", ""),
        "answer": form.cleaned_data.get("answer", ""),
        "distractors": form.distractors(),
    }


def _question_of(request, artwork):
    question = artwork.questions.filter(pk=request.POST.get("question_pk") or 0).first()
    if question is None:
        raise Http404(_("No such question on this artwork."))
    return question


def _question_context(artwork, block) -> dict:
    return {
        "q": block,
        "artwork": artwork,
        "symbols": list(
            artwork.elements.filter(is_symbol=True).order_by("position", "pk").values_list("name", flat=True)
        ),
        "type_choices": ArtworkQuestionType.choices,
    }


def _save_question(request, artwork, instance):
    values = _question_values(request)
    editing.question_save(
        artwork=artwork,
        instance=instance,
        type=values["type"],
        symbol=values["symbol"],
        text=values["question"],
        answer=values["answer"],
        distractors=values["distractors"],
        user=request.user,
    )
    return values


def _question_save(request, artwork):
    question = _question_of(request, artwork)
    try:
        _save_question(request, artwork, question)
    except ArtworkEditError as exc:
        if request.htmx:
            block = _question_block(question, _question_values(request), exc.errors)
            return render(request, "artworks/_artwork_question.html", _question_context(artwork, block))
        messages.error(request, f"{question.key}: {_errors_text(exc)}")
        return redirect(_page_url(artwork, f"question-{question.pk}"))
    if request.htmx:
        block = _question_block(question, saved=_("Saved."))
        return render(request, "artworks/_artwork_question.html", _question_context(artwork, block))
    messages.success(request, _("Question %(key)s saved.") % {"key": question.key})
    return redirect(_page_url(artwork, f"question-{question.pk}"))


def _question_delete(request, artwork):
    question = _question_of(request, artwork)
    editing.question_delete(question=question, user=request.user)
    if request.htmx:
        return HttpResponse("")
    messages.success(request, _("Question %(key)s deleted.") % {"key": question.key})
    return redirect(_page_url(artwork, "questions"))


def _question_add(request, artwork):
    try:
        _save_question(request, artwork, None)
    except ArtworkEditError as exc:
        if request.htmx:
            add = _question_block(None, _question_values(request), exc.errors)
            return render(request, "artworks/_artwork_questions.html", _page_context(artwork, question_add=add))
        messages.error(request, _errors_text(exc))
        return redirect(_page_url(artwork, "questions"))
    if request.htmx:
        return render(request, "artworks/_artwork_questions.html", _page_context(artwork))
    messages.success(request, _("Question added."))
    return redirect(_page_url(artwork, "questions"))


def _background(request, artwork):
    form = BackgroundForm(request.POST)
    form.is_valid()
    editing.artwork_background_save(
        artwork=artwork, background=form.cleaned_data.get("background", ""), user=request.user
    )
    messages.success(request, _("Background saved."))
    return redirect(_page_url(artwork, "background"))


def _review(request, artwork):
    reviewed = request.POST.get("reviewed", "1") != "0"
    editing.artwork_mark_reviewed(artwork=artwork, user=request.user, reviewed=reviewed)
    if reviewed:
        messages.success(request, _("“%(title)s” is marked as reviewed.") % {"title": artwork.title})
    else:
        messages.success(request, _("“%(title)s” is no longer marked as reviewed.") % {"title": artwork.title})
    return redirect(_page_url(artwork))


_ACTIONS = {
    "element_save": _element_save,
    "element_delete": _element_delete,
    "element_add": _element_add,
    "question_save": _question_save,
    "question_delete": _question_delete,
    "question_add": _question_add,
    "background": _background,
    "review": _review,
}
