"""The annotator's review queue (workflow step 3).

One item at a time: the expression, the suggested traits to accept, reject or
mark unsure, traits the model missed, one theme, a flag and a note. With htmx a
submit answers with the next item's panel (and pushes its URL); without
JavaScript the same form works by POST/redirect/GET. Input is autosaved as a
draft, and the assignment's revision turns a stale second tab into a message
instead of a silent overwrite.

Blindness: everything here is read through ``assignment_get`` and the
annotator's own queue; another annotator's answer, note or progress never
reaches these pages, and an assignment that is not yours is a 404.
"""

from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import vary_on_htmx, wants_fragment
from core.queues import queue_advance, queue_resume, queue_status
from core.roles import ANNOTATOR

from .. import selectors, services
from ..forms.review import ReviewForm, answer_as_draft, draft_from, posted_revision
from ..models import AssignmentStatus, ItemStatus, RoundStatus, TraitDecision
from ..selectors import quality
from ..selectors.lookups import assignment_or_404, round_or_404

OUTCOMES_PER_PAGE = 50
# Statuses that say how an item ended; anything else is "not resolved yet", so
# that a pending item does not tell whether the other annotator has submitted.
RESOLVED_STATUSES = (ItemStatus.UNANIMOUS, ItemStatus.ADJUDICATED, ItemStatus.REMOVED)


def _item_url(assignment) -> str:
    return reverse("annotation:review_item", args=[assignment.item.round_id, assignment.pk])


def _taxonomy() -> tuple[list, list]:
    traits, themes = selectors.taxonomy_rows()
    return list(traits), list(themes)


def _suggestion_state(item) -> str:
    """'shown', 'hidden' (control item, or a round without suggestions) or 'none' (the model suggested nothing)."""
    if item.suggestions_hidden or item.round.suggestion_set_id is None:
        return "hidden"
    return "shown"


def _answer_summary(assignment, traits) -> dict:
    """A saved answer as a person reads it (the annotator's own, shown beside a conflicting input)."""
    by_code = {t.code: t for t in traits}
    labels = dict(TraitDecision.choices)
    return {
        "theme": assignment.theme,
        "decisions": [
            (by_code[code], labels.get(decision, decision))
            for code, decision in (assignment.trait_decisions or {}).items()
            if code in by_code
        ],
        "added": [by_code[code] for code in assignment.added_traits or [] if code in by_code],
        "flagged": assignment.flagged,
        "note": assignment.note,
    }


_UNREAD = object()


def _note_context(note) -> dict:
    traits = {t.code: t for t in selectors.trait_list()}
    themes = {t.code: t for t in selectors.theme_list()}
    return {
        "note": note,
        "examples": [
            {
                **example,
                "trait_entries": [traits[c] for c in example.get("traits", []) if c in traits],
                "theme_entry": themes.get(example.get("theme")),
            }
            for example in note.examples
        ],
    }


def _item_context(request, assignment, *, form=None, suggested=None, taxonomy=None, following=_UNREAD, **extra) -> dict:
    round_ = assignment.item.round
    if suggested is None:
        suggested = services.suggested_codes(assignment.item)
    traits, themes = taxonomy or _taxonomy()
    is_open = round_.status == RoundStatus.OPEN
    if form is None:
        form = ReviewForm(
            # A locked round shows the answer as submitted: a draft left behind can no longer be sent.
            initial=ReviewForm.initial_for(assignment, suggested=suggested, with_draft=is_open),
            traits=traits,
            themes=themes,
            suggested=suggested,
        )
    if following is _UNREAD or not is_open:
        following = selectors.annotator_next(round=round_, user=request.user, after=assignment) if is_open else None
    state = _suggestion_state(assignment.item)
    if state == "shown" and not suggested:
        state = "none"
    # A researcher's notes are shown once, on the next item the annotator opens. Whether any waits,
    # and whether the queue is paused, comes from the shared cache (no query on an ordinary item).
    recalibration = quality.annotator_recalibration(round=round_, user=request.user) if is_open else {}
    paused = recalibration.get("paused", False)
    notes = []
    if recalibration.get("notes_waiting"):
        notes = list(quality.recalibration_notes_unseen(round=round_, user=request.user))
    for note in notes:
        services.recalibration_note_seen(note=note, user=request.user)
    return {
        "round": round_,
        "assignment": assignment,
        "expression": assignment.item.expression,
        "form": form,
        "progress": selectors.annotator_progress(round=round_, user=request.user),
        "is_open": is_open,
        "paused": is_open and paused,
        "notes": [_note_context(note) for note in notes],
        "suggestion_state": state,
        "submitted": assignment.status == AssignmentStatus.SUBMITTED,
        "has_draft": is_open and bool(assignment.draft) and assignment.status == AssignmentStatus.SUBMITTED,
        "next_url": _item_url(following) if following else "",
        "fragment": wants_fragment(request),
        "conflict_answer": _answer_summary(extra["conflict"], traits) if extra.get("conflict") else None,
        **extra,
    }


def _render_item(request, assignment, *, status=200, **kwargs):
    context = _item_context(request, assignment, **kwargs)
    template = "annotation/review_item.html"
    if context["fragment"]:
        template += "#review-panel"
    return render(request, template, context, status=status)


def _finished_context(request, round_) -> dict:
    return {
        "round": round_,
        "progress": selectors.annotator_progress(round=round_, user=request.user),
        "is_open": round_.status == RoundStatus.OPEN,
        "fragment": wants_fragment(request),
    }


def _advance(request, round_, *, after, saved=None, taxonomy=None):
    """Go on to the next item (core.queues): its panel for htmx, a redirect otherwise."""
    after_that = None
    if wants_fragment(request):
        # The next item and the one after it (the panel's "next item" link) in one query; the
        # queue's own read is the annotator's (annotator_queue filters on them), as assignment_get's is.
        following, after_that = selectors.annotator_next_two(round=round_, user=request.user, after=after)
    else:
        following = selectors.annotator_next(round=round_, user=request.user, after=after)
    return queue_advance(
        request,
        following=following,
        item_url=_item_url,
        render_item=lambda item: _render_item(request, item, saved=saved, taxonomy=taxonomy, following=after_that),
        queue_url=reverse("annotation:review_queue", args=[round_.pk]),
        render_done=lambda: render(
            request, "annotation/review_queue.html#queue-panel", {**_finished_context(request, round_), "saved": saved}
        ),
        saved_text=saved.item.expression.text if saved is not None else None,
    )


@require_GET
@role_required(ANNOTATOR)
@vary_on_htmx
def queue(request, round_pk: int):
    """Straight to the next item; a summary when nothing is left or the round is locked."""
    round_ = round_or_404(request.user, round_pk, annotated=True)
    following = selectors.annotator_next(round=round_, user=request.user) if round_.status == RoundStatus.OPEN else None
    return queue_resume(
        following,
        item_url=_item_url,
        render_queue=lambda: render(request, "annotation/review_queue.html", _finished_context(request, round_)),
    )


@require_http_methods(["GET", "POST"])
@role_required(ANNOTATOR)
@vary_on_htmx
def item(request, round_pk: int, assignment_pk: int):
    assignment = assignment_or_404(request.user, assignment_pk, round_pk=round_pk)
    if request.method == "GET":
        return _render_item(request, assignment)

    round_ = assignment.item.round
    suggested = services.suggested_codes(assignment.item)
    traits, themes = _taxonomy()
    form = ReviewForm(request.POST, traits=traits, themes=themes, suggested=suggested)
    common = {"suggested": suggested, "taxonomy": (traits, themes)}
    if round_.status != RoundStatus.OPEN:
        # Shown back (read-only) so nothing typed is lost even though it cannot be saved.
        return _render_item(request, assignment, form=form, status=queue_status(request, 409), refused=True, **common)
    if not form.is_valid():
        return _render_item(request, assignment, form=form, **common)
    try:
        saved = services.assignment_submit(
            assignment=assignment, user=request.user, suggested=suggested, **form.submit_kwargs()
        )
    except services.ConflictError as exc:
        current = exc.current
        if form.matches(current):
            # The same POST again (double click, resent form): already saved, just move on.
            return _advance(request, round_, after=current, saved=current, taxonomy=common["taxonomy"])
        return _render_item(
            request,
            current,
            form=form.with_revision(current.revision),
            conflict=current,
            status=queue_status(request, 409),
            **common,
        )
    except ValidationError as exc:
        form.add_service_errors(exc)
        return _render_item(request, assignment, form=form, **common)
    return _advance(request, round_, after=saved, saved=saved, taxonomy=common["taxonomy"])


def _draft_data(request, assignment, suggested) -> dict:
    traits, themes = _taxonomy()
    data = draft_from(
        request.POST,
        suggested=suggested,
        trait_codes={t.code for t in traits},
        theme_codes={t.code for t in themes},
    )
    if assignment.status == AssignmentStatus.SUBMITTED and data == answer_as_draft(assignment):
        # Back to the submitted answer: no unsubmitted changes to keep.
        return {}
    return data


@require_POST
@role_required(ANNOTATOR)
def draft(request, round_pk: int, assignment_pk: int):
    """Autosave of the form as it is filled in; answers with a one-line status."""
    assignment = assignment_or_404(request.user, assignment_pk, round_pk=round_pk)
    context = {"assignment": assignment}
    if posted_revision(request.POST) != assignment.revision:
        # Submitted meanwhile from another tab: this older form must not write over it.
        context["state"] = "stale"
    else:
        try:
            services.assignment_draft_save(
                assignment=assignment,
                user=request.user,
                data=_draft_data(request, assignment, services.suggested_codes(assignment.item)),
            )
            context["state"] = "saved"
        except ValidationError:
            context["state"] = "locked"
    return render(request, "annotation/review_item.html#draft-status", context)


@require_POST
@role_required(ANNOTATOR)
@vary_on_htmx
def skip(request, round_pk: int, assignment_pk: int):
    """Put the item at the back of the queue, keeping what was typed, and go on."""
    assignment = assignment_or_404(request.user, assignment_pk, round_pk=round_pk)
    round_ = assignment.item.round
    if round_.status != RoundStatus.OPEN:
        return redirect(_item_url(assignment))
    if posted_revision(request.POST) == assignment.revision:
        # The skip button posts the form: input typed since the last autosave is kept too.
        services.assignment_draft_save(
            assignment=assignment,
            user=request.user,
            data=_draft_data(request, assignment, services.suggested_codes(assignment.item)),
        )
    services.assignment_skip(assignment=assignment, user=request.user)
    return _advance(request, round_, after=assignment)


@require_GET
@role_required(ANNOTATOR)
def outcomes(request, round_pk: int):
    """The annotator's own items and answers; how each was resolved once the round is closed."""
    round_ = round_or_404(request.user, round_pk, annotated=True)
    traits, themes = _taxonomy()
    traits_by_code = {t.code: t for t in traits}
    page = Paginator(selectors.annotator_outcomes(round=round_, user=request.user), OUTCOMES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    show_resolution = round_.status != RoundStatus.OPEN
    rows = []
    for assignment in page.object_list:
        labels = selectors.assignment_labels(assignment)
        item_ = assignment.item
        if item_.control_id is not None:
            # A control item ends like any other item, with its known labels, so it does not stand out here either.
            # Its labels were decided by a researcher, not the annotators: "adjudicated" tells nothing more. Only
            # once the round is frozen, though: at the lock no item is adjudicated yet, so every "adjudicated" row
            # would be a control, its answer in sight of anyone who changes theirs if the round is reopened.
            resolved = round_.status == RoundStatus.FROZEN
            status_label = ItemStatus.ADJUDICATED.label
            final_theme = item_.control.theme if resolved else None
            final_traits = [t for t in traits if t.code in item_.control.traits] if resolved else []
        else:
            resolved, status_label = show_resolution and item_.status in RESOLVED_STATUSES, item_.get_status_display()
            final_theme = item_.final_theme if resolved else None
            final_traits = sorted(item_.final_traits.all(), key=lambda t: t.number) if resolved else []
        rows.append(
            {
                "assignment": assignment,
                "submitted": assignment.status == AssignmentStatus.SUBMITTED,
                "traits": [t for t in traits if t.code in labels.traits],
                "unsure": [traits_by_code[c] for c in sorted(labels.unsure) if c in traits_by_code],
                "resolved": resolved,
                "final_theme": final_theme,
                "status_label": status_label,
                "final_traits": final_traits,
            }
        )
    context = {
        "round": round_,
        "rows": rows,
        "page": page,
        "progress": selectors.annotator_progress(round=round_, user=request.user),
        "is_open": round_.status == RoundStatus.OPEN,
        "show_resolution": show_resolution,
    }
    return render(request, "annotation/review_outcomes.html", context)
