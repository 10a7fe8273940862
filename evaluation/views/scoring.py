"""Human scoring of generated explanations (VIVID §4.1.1): the researcher's tasks and the rater's queue.

Researchers create a task from a finished generation run and follow each
rater's progress. A rater scores one explanation at a time: the expression,
the reference explanation and the model's explanation (the model is never
named), a 0-5 score per dimension and overall. With htmx a submit answers with
the next item's panel and pushes its URL; without JavaScript the same form
works by POST/redirect/GET. Input is autosaved as a draft, and the rating's
revision turns a stale second tab into a message instead of an overwrite.

Blindness: a rater reads only their own ratings, looked up with ``rater=user``;
another rater's rating is a 404, and no judge score, no other rater's score and
no model name reaches these pages.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import add_service_errors, vary_on_htmx, wants_fragment
from core.queues import queue_advance, queue_resume, queue_status
from core.roles import ANNOTATOR, RESEARCHER

from ..forms.scoring import DIMENSIONS, RatingForm, ScoringTaskForm, draft_from, posted_revision, rating_as_draft
from ..models import HumanRating, RatingStatus
from ..selectors.lookups import rating_or_404, scoring_task_or_404
from ..selectors.runs import finished_generation_exists
from ..selectors.scoring import (
    rater_next,
    rater_progress,
    rater_ratings,
    rater_tasks,
    task_list,
    task_progress,
)
from ..services.scoring import RatingConflict, rating_draft_save, rating_submit, scoring_task_create

# --- Researcher pages ----------------------------------------------------------------------


@require_GET
@role_required(RESEARCHER)
def task_list_page(request):
    rows = [{"task": task, "progress": task_progress(task)} for task in task_list()]
    context = {"rows": rows}
    if not rows:
        context["has_finished_generation"] = finished_generation_exists()
    return render(request, "evaluation/scoring_task_list.html", context)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def task_new(request):
    if request.method == "GET":
        initial = {}
        if request.GET.get("run", "").isdigit():
            initial["run"] = int(request.GET["run"])
        return render(request, "evaluation/scoring_task_new.html", {"form": ScoringTaskForm(initial=initial)})
    form = ScoringTaskForm(request.POST)
    if form.is_valid():
        try:
            task = scoring_task_create(**form.create_kwargs(), user=request.user)
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            # A double submit (the same idempotency key) lands on the task the first one created.
            messages.success(request, _("Scoring task “%(name)s” created.") % {"name": task.name})
            return redirect("evaluation:scoring_task_detail", pk=task.pk)
    return render(request, "evaluation/scoring_task_new.html", {"form": form}, status=400)


@require_GET
@role_required(RESEARCHER)
def task_detail(request, pk: int):
    task = scoring_task_or_404(pk)
    progress = task_progress(task)
    context = {
        "task": task,
        "progress": progress,
        "submitted": sum(row["submitted"] for row in progress),
        "total": sum(row["total"] for row in progress),
        "per_rater_unique": task.n_items - task.n_shared,
    }
    return render(request, "evaluation/scoring_task_detail.html", context)


# --- Rater pages ---------------------------------------------------------------------------


def _item_url(rating: HumanRating) -> str:
    return reverse("evaluation:scoring_item", args=[rating.task_id, rating.pk])


def _saved_summary(rating: HumanRating) -> list[dict]:
    return [{"label": d["label"], "value": getattr(rating, d["field"])} for d in DIMENSIONS]


def _item_context(request, rating: HumanRating, *, form=None, **extra) -> dict:
    task = rating.task
    if form is None:
        form = RatingForm(initial=RatingForm.initial_for(rating))
    following = rater_next(task=task, user=request.user, after=rating)
    submitted = rating.status == RatingStatus.SUBMITTED
    conflict = extra.get("conflict")
    return {
        "task": task,
        "rating": rating,
        "expression": rating.item.expression,
        "model_explanation": rating.item.response,
        "form": form,
        "dimensions": DIMENSIONS,
        "progress": rater_progress(task=task, user=request.user),
        "submitted": submitted,
        "has_draft": bool(rating.draft) and submitted,
        "next_url": _item_url(following) if following else "",
        "fragment": wants_fragment(request),
        "conflict_scores": _saved_summary(conflict) if conflict else None,
        **extra,
    }


def _render_item(request, rating, *, status=200, **kwargs):
    context = _item_context(request, rating, **kwargs)
    template = "evaluation/scoring_item.html"
    if context["fragment"]:
        template += "#scoring-panel"
    return render(request, template, context, status=status)


def _queue_context(request, task) -> dict:
    return {
        "task": task,
        "progress": rater_progress(task=task, user=request.user),
        "ratings": rater_ratings(task=task, user=request.user),
        "fragment": wants_fragment(request),
    }


def _advance(request, task, *, after, saved=None):
    """Go on to the next item (core.queues): its panel for htmx, a redirect otherwise."""
    return queue_advance(
        request,
        following=rater_next(task=task, user=request.user, after=after),
        item_url=_item_url,
        # rater_next reads the queue's order only; the panel wants the rating with its item.
        render_item=lambda following: _render_item(request, rating_or_404(request.user, following.pk), saved=saved),
        queue_url=reverse("evaluation:scoring_queue", args=[task.pk]),
        render_done=lambda: render(
            request, "evaluation/scoring_queue.html#queue-panel", {**_queue_context(request, task), "saved": saved}
        ),
        saved_text=saved.item.expression.text if saved is not None else None,
    )


@require_GET
@role_required(ANNOTATOR)
def my_tasks(request):
    rows = [
        {"task": task, "progress": rater_progress(task=task, user=request.user)} for task in rater_tasks(request.user)
    ]
    return render(request, "evaluation/scoring_mine.html", {"rows": rows})


@require_GET
@role_required(ANNOTATOR)
@vary_on_htmx
def queue(request, task_pk: int):
    """Straight to the next unscored item; the rater's own list when nothing is left."""
    task = scoring_task_or_404(task_pk, rater=request.user)
    return queue_resume(
        rater_next(task=task, user=request.user),
        item_url=_item_url,
        render_queue=lambda: render(request, "evaluation/scoring_queue.html", _queue_context(request, task)),
    )


@require_http_methods(["GET", "POST"])
@role_required(ANNOTATOR)
@vary_on_htmx
def item(request, task_pk: int, pk: int):
    rating = rating_or_404(request.user, pk, task_pk=task_pk)
    if request.method == "GET":
        return _render_item(request, rating)

    task = rating.task
    form = RatingForm(request.POST)
    error_status = queue_status(request, 400)
    if not form.is_valid():
        return _render_item(request, rating, form=form, status=error_status)
    if form.matches(rating):
        # The saved scores already: a resent form or a double click. No new revision.
        if rating.draft:
            rating_draft_save(rating=rating, user=request.user, data={})
        return _advance(request, task, after=rating, saved=rating)
    try:
        saved = rating_submit(rating=rating, user=request.user, **form.submit_kwargs())
    except RatingConflict:
        current = rating_or_404(request.user, rating.pk)
        if form.matches(current):
            return _advance(request, task, after=current, saved=current)
        return _render_item(
            request,
            current,
            form=form.with_revision(current.revision),
            conflict=current,
            status=queue_status(request, 409),
        )
    except ValidationError as exc:
        add_service_errors(form, exc)
        return _render_item(request, rating, form=form, status=error_status)
    saved = rating_or_404(request.user, saved.pk)
    return _advance(request, task, after=saved, saved=saved)


@require_POST
@role_required(ANNOTATOR)
def draft(request, task_pk: int, pk: int):
    """Autosave of the form as it is filled in; answers with a one-line status."""
    rating = rating_or_404(request.user, pk, task_pk=task_pk)
    context = {"rating": rating}
    if posted_revision(request.POST) != rating.revision:
        # Submitted meanwhile from another tab: this older form must not write over it.
        context["state"] = "stale"
    else:
        data = draft_from(request.POST)
        if rating.status == RatingStatus.SUBMITTED and data == rating_as_draft(rating):
            data = {}  # back to the submitted scores: nothing unsubmitted to keep
        rating_draft_save(rating=rating, user=request.user, data=data)
        context["state"] = "saved"
    return render(request, "evaluation/scoring_item.html#draft-status", context)
