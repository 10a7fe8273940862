"""Suggestions and rounds: what annotators are given to review.

Stage 1 of the VIVID validation (paper section 3.3) attaches LLM trait
suggestions to a dataset; a round then hands each item to annotators, two by
default, spread so that every pair of annotators overlaps evenly.
"""

import builtins
import itertools
import random

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils.translation import gettext as _

from core.services.idempotency import idempotent_create

from ..models import (
    AnnotationRound,
    Assignment,
    ControlItem,
    Dataset,
    Expression,
    RoundItem,
    RoundStatus,
    Suggestion,
    SuggestionSet,
    Trait,
)
from ..selectors.workflow import round_suggested_codes
from .changes import round_changed

ROUND_IDEMPOTENCY_SCOPE = "annotation.round"
# The largest share of items whose suggestions a person may hide (the form and the API offer no more):
# the rest measure agreement with the suggestions. Code (tests, a demo) may hide any share.
MAX_HIDDEN_FRACTION = 0.5


@transaction.atomic
def suggestion_set_create(
    *,
    dataset: Dataset,
    name: str,
    model_name: str,
    predictions: list[tuple[int, list[str], str]],
    prompt_version: str = "",
    source: str = "",
    user=None,
) -> SuggestionSet:
    """Store suggestions given as (expression id, trait codes, raw model output).

    The entry point for a model run as well as for a file.
    """
    if SuggestionSet.objects.filter(dataset=dataset, name=name).exists():
        raise ValidationError({"name": _("the dataset already has a suggestion set named '%(name)s'") % {"name": name}})
    suggestion_set = SuggestionSet.objects.create(
        dataset=dataset, name=name, model_name=model_name, prompt_version=prompt_version, source=source, created_by=user
    )
    trait_ids = dict(Trait.objects.values_list("code", "id"))
    created = Suggestion.objects.bulk_create(
        [
            Suggestion(suggestion_set=suggestion_set, expression_id=eid, raw_output=raw)
            for eid, _codes, raw in predictions
        ]
    )
    Suggestion.traits.through.objects.bulk_create(
        [
            Suggestion.traits.through(suggestion_id=suggestion.pk, trait_id=trait_ids[code])
            for suggestion, (_eid, codes, _raw) in zip(created, predictions, strict=True)
            for code in codes
        ]
    )
    return suggestion_set


def _pair_schedule(annotators: list, per_item: int, n_items: int, rng: random.Random) -> list[tuple]:
    """Which annotators review each item, so every group of `per_item` annotators
    gets an equal share (to within one item).

    Cycling through all combinations in a shuffled order balances pairwise
    overlap, which Fleiss' kappa and pairwise Cohen's kappa both need.
    """
    groups = list(itertools.combinations(annotators, per_item))
    rng.shuffle(groups)
    return [groups[i % len(groups)] for i in range(n_items)]


def round_settings_check(
    *,
    dataset: Dataset | None,
    annotators: list,
    annotators_per_item: int,
    suggestion_set: SuggestionSet | None = None,
    hide_suggestions_fraction: float = 0.0,
) -> None:
    """The rules a round's settings obey, as a ValidationError by field.

    ``round_create`` enforces them; the round form calls this too, to say each in its own words
    next to its own field before anything is sent.
    """
    errors = {}
    annotators = list(dict.fromkeys(annotators))
    if annotators_per_item < 1:
        errors["annotators_per_item"] = _("at least one annotator per item")
    elif len(annotators) < annotators_per_item:
        errors["annotators"] = _("pick at least %(n)s annotators") % {"n": annotators_per_item}
    if not 0.0 <= hide_suggestions_fraction <= 1.0:
        errors["hide_suggestions_fraction"] = _("a fraction between 0 and 1")
    elif hide_suggestions_fraction and suggestion_set is None:
        errors["hide_suggestions_fraction"] = _("hiding suggestions needs a suggestion set")
    if suggestion_set is not None and dataset is not None and suggestion_set.dataset_id != dataset.pk:
        errors["suggestion_set"] = _("the suggestion set belongs to another dataset")
    if errors:
        raise ValidationError(errors)


def round_create(
    *,
    name: str,
    dataset: Dataset,
    annotators: list,
    user=None,
    expressions: QuerySet[Expression] | None = None,
    item_filter: dict | None = None,
    suggestion_set: SuggestionSet | None = None,
    annotators_per_item: int = 2,
    hide_suggestions_fraction: float = 0.0,
    seed: int | None = None,
    idempotency_key: str | None = None,
) -> AnnotationRound:
    """Create a round over a dataset (or the given part of it) and hand out the items.

    Each annotator's queue comes in its own random order; the seed is stored so
    the assignment and the hidden-suggestion control can be reproduced.
    A second request with the same ``idempotency_key`` (a double submit, a retried API call)
    returns the round the first one created, with ``round.idempotent_repeat`` set, instead of
    refusing the name as taken.
    """
    round_ = idempotent_create(
        scope=ROUND_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=AnnotationRound,
        create=lambda: _round_create(
            name=name,
            dataset=dataset,
            annotators=annotators,
            user=user,
            expressions=expressions,
            item_filter=item_filter,
            suggestion_set=suggestion_set,
            annotators_per_item=annotators_per_item,
            hide_suggestions_fraction=hide_suggestions_fraction,
            seed=seed,
        ),
    )
    return round_


@transaction.atomic
def _round_create(
    *,
    name,
    dataset,
    annotators,
    user,
    expressions,
    item_filter,
    suggestion_set,
    annotators_per_item,
    hide_suggestions_fraction,
    seed,
) -> AnnotationRound:
    errors = {}
    name = (name or "").strip()
    if not name:
        errors["name"] = _("a round needs a name")
    elif AnnotationRound.objects.filter(name=name).exists():
        errors["name"] = _("a round named '%(name)s' already exists") % {"name": name}
    annotators = list(dict.fromkeys(annotators))
    try:
        round_settings_check(
            dataset=dataset,
            annotators=annotators,
            annotators_per_item=annotators_per_item,
            suggestion_set=suggestion_set,
            hide_suggestions_fraction=hide_suggestions_fraction,
        )
    except ValidationError as exc:
        errors.update({field: messages[0] for field, messages in exc.message_dict.items()})
    items = list(
        (expressions if expressions is not None else dataset.expressions.all())
        .filter(dataset=dataset)
        .order_by("id")
        .values_list("id", flat=True)
    )
    if not items:
        errors["items"] = _("the round would have no items")
    if errors:
        raise ValidationError(errors)

    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    round_ = AnnotationRound.objects.create(
        name=name,
        dataset=dataset,
        suggestion_set=suggestion_set,
        annotators_per_item=annotators_per_item,
        item_filter=item_filter or {},
        hide_suggestions_fraction=hide_suggestions_fraction,
        seed=seed,
        created_by=user,
    )
    round_.annotators.set(annotators)
    round_items_distribute(round=round_, expressions=items, annotators=annotators)
    return round_


def control_share(*, n_items: int, rate: float) -> int:
    """How many control items a queue of ``n_items`` items gets so that they make ``rate`` of it."""
    if rate <= 0 or n_items <= 0:
        return 0
    if rate >= 1:
        return n_items
    return int(builtins.round(rate * n_items / (1 - rate)))


def round_items_distribute(
    *,
    round: AnnotationRound,
    expressions: list[int],
    annotators: list,
    controls: list[ControlItem] = (),
    control_hidden: dict[int, bool] | None = None,
    excluded: dict[int, set[int]] | None = None,
) -> None:
    """Create a round's items and hand them out, from ``round.seed``: the same seed, items and
    annotators give the same queues, with or without control items.

    Nothing an annotator reads may set a control item (``controls``, hidden suggestions per control id
    in ``control_hidden``) apart from a regular one. The items are created in an order shuffled with
    the seed, controls among them, so an item's id says nothing about its expression's id (regular
    items made in expression order used to leave every control as the one id out of order). Each
    annotator's queue is a shuffle of its own, from the seed and the annotator, and gets
    ``control_share`` of the controls (minus ``excluded[annotator id]``), one at a random place in each
    equal stretch of the queue, so every drift window holds some.
    """
    rng = random.Random(round.seed)
    # Annotators in id order: the stored seed and the round's annotators alone reproduce the queues.
    annotators = sorted(annotators, key=lambda a: a.pk)
    fraction = round.hide_suggestions_fraction
    hidden = set(rng.sample(expressions, builtins.round(len(expressions) * fraction))) if fraction else set()
    regular = [RoundItem(round=round, expression_id=eid, suggestions_hidden=eid in hidden) for eid in expressions]
    control_items = [
        RoundItem(
            round=round,
            expression_id=control.expression_id,
            control=control,
            suggestions_hidden=(control_hidden or {}).get(control.pk, False),
        )
        for control in controls
    ]
    created = regular + control_items
    random.Random(f"{round.seed}:items").shuffle(created)
    suggested = round_suggested_codes(round=round, expressions=[item.expression_id for item in created])
    for item in created:
        item.suggested = suggested.get(item.expression_id)
    RoundItem.objects.bulk_create(created)
    schedule = _pair_schedule(annotators, round.annotators_per_item, len(regular), rng)
    queues: dict = {a.pk: [] for a in annotators}
    # Generators keyed by username, not id: a round rebuilt in another database (ids from another
    # sequence) gets the same queues.
    usernames = {a.pk: a.get_username() for a in annotators}
    for item, group in zip(regular, schedule, strict=True):
        for annotator in group:
            queues[annotator.pk].append(item)
    assignments = []
    for annotator_id, queue in queues.items():
        # Generators of the annotator's own, and apart for the controls: a queue keeps the order its
        # seed gave it whatever the other queues hold and whether controls were added since.
        random.Random(f"{round.seed}:queue:{usernames[annotator_id]}").shuffle(queue)
        control_rng = random.Random(f"{round.seed}:controls:{usernames[annotator_id]}")
        offered = [i for i in control_items if i.control.pk not in (excluded or {}).get(annotator_id, set())]
        k = min(control_share(n_items=len(queue), rate=round.control_rate), len(offered))
        chosen = control_rng.sample(offered, k)
        total = len(queue) + k
        # One slot drawn in each of k equal stretches of the final queue.
        slots = sorted(
            {
                int(i * total / k) + control_rng.randrange(max(int((i + 1) * total / k) - int(i * total / k), 1))
                for i in range(k)
            }
        )
        for slot, item in zip(slots, chosen, strict=False):
            queue.insert(slot, item)
        assignments.extend(
            Assignment(item=item, round=round, annotator_id=annotator_id, position=position)
            for position, item in enumerate(queue, 1)
        )
    Assignment.objects.bulk_create(assignments, batch_size=2000)
    round_item_counts_refresh(round=round)


def round_item_counts_refresh(*, round: AnnotationRound) -> None:
    """Store the round's counts of regular items (all, and those hiding their suggestions), after
    items are added: the pages read them from the round instead of counting its items."""
    regular = RoundItem.objects.filter(round=round, control__isnull=True)
    counts = regular.aggregate(n=Count("id"), n_hidden=Count("id", filter=Q(suggestions_hidden=True)))
    AnnotationRound.objects.filter(pk=round.pk).update(item_count=counts["n"], hidden_count=counts["n_hidden"])
    round.item_count, round.hidden_count = counts["n"], counts["n_hidden"]
    round_changed(round_id=round.pk)


def round_lock(*, round: AnnotationRound, user=None) -> AnnotationRound:
    """Close the round to annotators and open it to adjudication."""
    changed = AnnotationRound.objects.filter(pk=round.pk, status=RoundStatus.OPEN).update(status=RoundStatus.LOCKED)
    round.refresh_from_db()
    if not changed:
        raise ValidationError(_("the round is %(status)s, not open") % {"status": round.get_status_display().lower()})
    round_changed(round_id=round.pk)
    return round


def round_reopen(*, round: AnnotationRound, user=None) -> AnnotationRound:
    """Give the round back to annotators (before any version is frozen)."""
    changed = AnnotationRound.objects.filter(pk=round.pk, status=RoundStatus.LOCKED).update(status=RoundStatus.OPEN)
    round.refresh_from_db()
    if not changed:
        raise ValidationError(_("the round is %(status)s, not locked") % {"status": round.get_status_display().lower()})
    round_changed(round_id=round.pk)
    return round
