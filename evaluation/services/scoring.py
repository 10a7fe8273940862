"""Human scoring of generated explanations (VIVID §4.1.1, Table 1).

A task samples N items of a generation run (seeded, recorded) and splits them
between raters: ``n_shared`` items go to every rater (for inter-rater
reliability) and the rest are divided evenly. Each rater's queue comes in its
own random order. Ratings are also imported from files made elsewhere.
"""

import random

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import normalize_key
from core.services.idempotency import idempotent_create
from core.tables import ImportReport, ImportValidationError, RowError, TableError, cell, read_table

from ..models import HumanRating, ItemStatus, RatingStatus, Run, RunKind, ScoringTask

SCORE_FIELDS = ("score", "accuracy", "completeness", "native_alignment")
RATER_GROUP = "Annotator"
TASK_IDEMPOTENCY_SCOPE = "evaluation.scoring_task"


def scoring_task_size_check(*, n_items: int, n_shared: int) -> None:
    """The one rule on a task's size: at least one item, and no more shared items than items.

    The form and the API call it too, each saying it in its own words.
    """
    if n_items < 1 or n_shared < 0 or n_shared > n_items:
        raise ValidationError({"n_shared": _("0 <= shared <= items, and at least one item")}, code="task_size")


def scoring_task_create(
    *,
    name: str,
    run: Run,
    raters: list,
    n_items: int = 200,
    n_shared: int = 50,
    seed: int | None = None,
    user=None,
    idempotency_key: str | None = None,
) -> ScoringTask:
    """Sample items of a generation run and hand them to raters.

    Defaults follow the paper (§4.1.1): 200 items and a 50-item overlap. Its "150 each" does not add up
    with 200 items (150 + 150 - 50 = 250), so two raters get 125 each; ask for 250 items to get 150.

    A second request with the same ``idempotency_key`` returns the task the first one created, with
    ``task.idempotent_repeat`` set, instead of refusing the name as taken.
    """
    task = idempotent_create(
        scope=TASK_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=ScoringTask,
        create=lambda: _scoring_task_create(
            name=name, run=run, raters=raters, n_items=n_items, n_shared=n_shared, seed=seed, user=user
        ),
    )
    return task


@transaction.atomic
def _scoring_task_create(*, name, run, raters, n_items, n_shared, seed, user) -> ScoringTask:
    raters = list(dict.fromkeys(raters))
    errors = {}
    if run.kind != RunKind.GENERATION:
        errors["run"] = _("human scoring rates a generation run's explanations")
    if not name.strip() or ScoringTask.objects.filter(name=name.strip()).exists():
        errors["name"] = _("a new, unique name is required")
    if len(raters) < 1:
        errors["raters"] = _("pick at least one rater")
    done = list(run.items.filter(status=ItemStatus.DONE).order_by("id").values_list("id", flat=True))
    try:
        scoring_task_size_check(n_items=n_items, n_shared=n_shared)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    taken = HumanRating.objects.filter(run=run, rater__in=raters).values_list("rater__username", flat=True).distinct()
    if taken:
        # One score per rater and item keeps the pairing rule of the report unambiguous.
        errors["raters"] = _("already scoring this run: %(names)s") % {"names": ", ".join(sorted(taken))}
    if errors:
        raise ValidationError(errors)
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    rng = random.Random(seed)
    sample = rng.sample(done, min(n_items, len(done)))
    shared, rest = sample[:n_shared], sample[n_shared:]
    task = ScoringTask.objects.create(
        name=name.strip(), run=run, n_items=len(sample), n_shared=len(shared), seed=seed, sample=sample, created_by=user
    )
    task.raters.set(raters)
    queues = {rater.pk: list(shared) for rater in raters}
    for index, item_id in enumerate(rest):
        queues[raters[index % len(raters)].pk].append(item_id)
    ratings = []
    for rater_id, queue in queues.items():
        rng.shuffle(queue)
        ratings.extend(
            HumanRating(task=task, run=run, item_id=item_id, rater_id=rater_id, position=position)
            for position, item_id in enumerate(queue, 1)
        )
    HumanRating.objects.bulk_create(ratings)
    return task


def _check_rater(rating: HumanRating, user) -> None:
    if rating.rater_id != user.pk:
        raise PermissionDenied(_("This item is not in your queue."))


def _clean_scores(values: dict, *, require_overall: bool) -> dict:
    cleaned, errors = {}, {}
    for field in SCORE_FIELDS:
        raw = values.get(field)
        if raw in (None, ""):
            if field == "score" and require_overall:
                errors[field] = _("an overall score from 0 to 5 is required")
            cleaned[field] = None
            continue
        try:
            number = int(raw)
        except (TypeError, ValueError):
            errors[field] = _("a whole number from 0 to 5")
            continue
        if not 0 <= number <= 5:
            errors[field] = _("a whole number from 0 to 5")
            continue
        cleaned[field] = number
    if errors:
        raise ValidationError(errors)
    return cleaned


def rating_draft_save(*, rating: HumanRating, user, data: dict) -> HumanRating:
    """Keep unsubmitted input as it is typed; never validated (it is a draft)."""
    _check_rater(rating, user)
    draft = {key: data[key] for key in (*SCORE_FIELDS, "note") if key in data}
    HumanRating.objects.filter(pk=rating.pk).update(draft=draft)
    HumanRating.objects.filter(pk=rating.pk, status=RatingStatus.PENDING).update(status=RatingStatus.DRAFT)
    rating.refresh_from_db()
    return rating


class RatingConflict(Exception):
    pass


@transaction.atomic
def rating_submit(
    *, rating: HumanRating, user, values: dict, note: str = "", revision: int | None = None
) -> HumanRating:
    """Record a rater's scores; submitting again edits them. A stale tab is refused, not overwritten."""
    rating = HumanRating.objects.select_for_update(of=("self",)).get(pk=rating.pk)
    _check_rater(rating, user)
    scores = _clean_scores(values, require_overall=True)
    unchanged = (
        rating.status == RatingStatus.SUBMITTED
        and note.strip() == rating.note
        and all(getattr(rating, field) == value for field, value in scores.items())
    )
    if unchanged:
        return rating  # a double submit, or the same answer from a second tab: nothing to change
    if revision is not None and revision != rating.revision:
        raise RatingConflict(_("These scores were saved from another tab or window; reload to see them."))
    for field, value in scores.items():
        setattr(rating, field, value)
    rating.note = note.strip()
    rating.status = RatingStatus.SUBMITTED
    rating.submitted_at = timezone.now()
    rating.draft = {}
    rating.revision += 1
    rating.save()
    return rating


def ratings_import(*, run: Run, filename: str, content: bytes) -> dict:
    """Human scores made elsewhere for a generation run's outputs, all or nothing.

    Columns: expression, rater, score (0-5), optional accuracy, completeness,
    native_alignment. Rater accounts are created inactive when missing.
    """
    report = ImportReport(dataset_name=run.dataset.name, filename=filename, dry_run=False)
    try:
        columns, records, first_row = read_table(filename, content)
    except TableError as exc:
        report.errors.append(exc.error)
        raise ImportValidationError(report) from None
    by_lower = {c.strip().lower(): c for c in columns}
    for required in ("expression", "rater", "score"):
        if required not in by_lower:
            report.errors.append(RowError(None, required, "required_column_missing", {"columns": ", ".join(columns)}))
    if report.errors:
        raise ImportValidationError(report)
    items = {
        normalize_key(text): item_id
        for item_id, text in run.items.filter(status=ItemStatus.DONE).values_list("id", "expression__text")
    }
    existing = set(HumanRating.objects.filter(run=run).values_list("item_id", "rater__username"))
    seen: dict[tuple, int] = {}
    rows = []
    for offset, record in enumerate(records):
        row = first_row + offset
        if record is None:
            continue
        text = cell(record.get(by_lower["expression"]))
        rater = cell(record.get(by_lower["rater"]))
        item_id = items.get(normalize_key(text))
        if item_id is None:
            report.errors.append(RowError(row, by_lower["expression"], "unknown_expression", {"value": text}))
            continue
        if not rater:
            report.errors.append(RowError(row, by_lower["rater"], "annotator_missing"))
            continue
        if (item_id, rater) in seen or (item_id, rater) in existing:
            first = seen.get((item_id, rater), "?")
            report.errors.append(
                RowError(row, by_lower["rater"], "unknown_annotator_item", {"annotator": rater, "first_row": first})
            )
            continue
        seen[(item_id, rater)] = row
        values = {field: cell(record.get(by_lower[field])) for field in SCORE_FIELDS if field in by_lower}
        try:
            scores = _clean_scores(values, require_overall=True)
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                report.errors.append(
                    RowError(row, by_lower.get(field, field), "bad_score", {"detail": " ".join(messages)})
                )
            continue
        rows.append((item_id, rater, scores))
    if report.errors:
        raise ImportValidationError(report)
    with transaction.atomic():
        users = _raters_ensure(sorted({rater for _, rater, _ in rows}))
        now = timezone.now()
        HumanRating.objects.bulk_create(
            [
                HumanRating(
                    run=run,
                    item_id=item_id,
                    rater=users[rater],
                    status=RatingStatus.SUBMITTED,
                    submitted_at=now,
                    revision=1,
                    **scores,
                )
                for item_id, rater, scores in rows
            ]
        )
    return {"ratings": len(rows), "raters": sorted(users)}


def _raters_ensure(usernames: list[str]) -> dict:
    User = get_user_model()
    users = {u.username: u for u in User.objects.filter(username__in=usernames)}
    group = Group.objects.get(name=RATER_GROUP)
    for username in usernames:
        if username not in users:
            user = User(username=username, is_active=False)
            user.set_unusable_password()
            user.save()
            user.groups.add(group)
            users[username] = user
    return users
