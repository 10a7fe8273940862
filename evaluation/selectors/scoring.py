"""Reads of human scoring (VIVID §4.1.1): the researcher's tasks and each rater's own queue.

Blindness: every rater read takes the rater and filters on ``rater=user``; nothing here hands
a rater another rater's rating.
"""

from django.contrib.auth import get_user_model
from django.db.models import Count, Q, QuerySet

from core.roles import ANNOTATOR

from ..models import HumanRating, RatingStatus, Run, RunKind, RunStatus, ScoringTask


def scoring_runs() -> QuerySet[Run]:
    """The runs a scoring task can sample: finished generation runs."""
    return Run.objects.filter(kind=RunKind.GENERATION, status=RunStatus.DONE).select_related("model", "dataset")


def rater_choices():
    """The people who may rate: active users with the Annotator role."""
    return get_user_model().objects.filter(groups__name=ANNOTATOR, is_active=True).distinct().order_by("username")


def task_list() -> QuerySet[ScoringTask]:
    return ScoringTask.objects.select_related("run__model", "run__dataset", "created_by").prefetch_related("raters")


def task_progress(task: ScoringTask) -> list[dict]:
    """Per rater: submitted of total, in username order."""
    rows = (
        HumanRating.objects.filter(task=task)
        .values("rater_id", "rater__username")
        .annotate(total=Count("id"), submitted=Count("id", filter=Q(status=RatingStatus.SUBMITTED)))
        .order_by("rater__username")
    )
    return [
        {
            "rater": row["rater__username"],
            "rater_id": row["rater_id"],
            "submitted": row["submitted"],
            "total": row["total"],
            "percent": round(100 * row["submitted"] / row["total"]) if row["total"] else 0,
        }
        for row in rows
    ]


def rater_tasks(user) -> QuerySet[ScoringTask]:
    return ScoringTask.objects.filter(raters=user).order_by("-created_at")


def rater_task(*, user, pk: int) -> ScoringTask | None:
    """One of the tasks the user rates; None for any other."""
    return rater_tasks(user).filter(pk=pk).first()


def rater_ratings(*, task: ScoringTask, user) -> QuerySet[HumanRating]:
    """The rater's own ratings of a task, in queue order. Never anyone else's."""
    return (
        HumanRating.objects.filter(task=task, rater=user).select_related("item__expression").order_by("position", "id")
    )


def rater_rating(*, user, pk: int, task_pk: int | None = None) -> HumanRating | None:
    """One of the user's own ratings of a task; None for anyone else's (it does not exist for them)."""
    ratings = HumanRating.objects.select_related("item__expression", "task").filter(
        pk=pk, rater=user, task__isnull=False
    )
    if task_pk is not None:
        ratings = ratings.filter(task_id=task_pk)
    return ratings.first()


def rater_next(*, task: ScoringTask, user, after: HumanRating | None = None) -> HumanRating | None:
    """The next rating not submitted yet: after ``after`` in queue order, then from the start."""
    open_ratings = HumanRating.objects.filter(task=task, rater=user).exclude(status=RatingStatus.SUBMITTED)
    if after is not None:
        following = open_ratings.filter(position__gt=after.position).order_by("position", "id").first()
        if following is not None:
            return following
        open_ratings = open_ratings.exclude(pk=after.pk)
    return open_ratings.order_by("position", "id").first()


def rater_progress(*, task: ScoringTask, user) -> dict:
    counts = HumanRating.objects.filter(task=task, rater=user).aggregate(
        total=Count("id"), done=Count("id", filter=Q(status=RatingStatus.SUBMITTED))
    )
    total, done = counts["total"], counts["done"]
    return {"total": total, "done": done, "percent": round(100 * done / total) if total else 0}
