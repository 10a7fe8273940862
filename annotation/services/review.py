"""Review, adjudication and curation: the human side of the VIVID validation.

An annotator's labels are blind to the other annotator until the round is
locked. An item is unanimous when every annotator submitted the same traits
and theme with nothing unsure or flagged; otherwise it needs adjudication.
Only unanimous and adjudicated items enter a frozen version.
"""

import math

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from core.compiled_reads import CompiledRead

from ..models import (
    UNDECIDED_STATUSES,
    AnnotationRound,
    AnnotatorPause,
    Assignment,
    AssignmentStatus,
    ItemStatus,
    LabelChange,
    RemovalReason,
    RoundItem,
    RoundStatus,
    Theme,
    Trait,
    TraitDecision,
)
from ..selectors.corpus import present_traits_mask, theme_codes, theme_ids, trait_codes
from ..selectors.workflow import assignment_labels, item_assignments
from .changes import round_changed

MAX_ANSWER_SECONDS = 1800.0


def answer_seconds_clean(value) -> float | None:
    """The review page's own timing of an answer: a finite number of seconds >= 0, capped
    (an answer left open for an hour was not read for an hour)."""
    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValidationError({"seconds": _("a number of seconds")}) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValidationError({"seconds": _("a number of seconds, 0 or more")})
    return min(seconds, MAX_ANSWER_SECONDS)


DRAFT_KEYS = ("trait_decisions", "added_traits", "theme", "flagged", "note")


class ConflictError(Exception):
    """Someone else changed the record first; the caller's input was not saved."""

    def __init__(self, message: str, *, current=None):
        super().__init__(message)
        self.current = current


def suggested_codes(item: RoundItem) -> list[str]:
    """The suggested traits an annotator must decide on ([] when hidden or no set)."""
    from ..selectors.workflow import suggested_codes_for

    return suggested_codes_for(items=[item])[item.pk]


def _log(*, item, actor, field, old, new, assignment=None):
    if old != new:
        LabelChange.objects.create(
            item=item, assignment=assignment, actor=actor, field=field, old_value=old, new_value=new
        )


def _round_status(round_id: int) -> str:
    # Read fresh: the caller's round object may predate a lock.
    return AnnotationRound.objects.filter(pk=round_id).values_list("status", flat=True).get()


def _check_annotator(assignment: Assignment, user) -> None:
    if assignment.annotator_id != user.pk:
        raise PermissionDenied(_("This item is not in your queue."))
    if _round_status(assignment.item.round_id) != RoundStatus.OPEN:
        raise ValidationError(_("The round is locked; answers can no longer change."))


def assignment_draft_save(*, assignment: Assignment, user, data: dict) -> Assignment:
    """Keep unsubmitted input as it is typed (only known keys, never validated: it is a draft)."""
    _check_annotator(assignment, user)
    draft = {key: data[key] for key in DRAFT_KEYS if key in data}
    Assignment.objects.filter(pk=assignment.pk).update(draft=draft, updated_at=timezone.now())
    if assignment.status == AssignmentStatus.PENDING:
        Assignment.objects.filter(pk=assignment.pk, status=AssignmentStatus.PENDING).update(
            status=AssignmentStatus.DRAFT
        )
    assignment.refresh_from_db()
    return assignment


def assignment_skip(*, assignment: Assignment, user) -> Assignment:
    """Put an item at the back of the queue; its draft is kept."""
    _check_annotator(assignment, user)
    skipped = Assignment.objects.filter(
        pk=assignment.pk, status__in=[AssignmentStatus.PENDING, AssignmentStatus.DRAFT]
    ).update(status=AssignmentStatus.SKIPPED)
    if skipped:
        round_changed(round_id=assignment.item.round_id)
    assignment.refresh_from_db()
    return assignment


@transaction.atomic
def assignment_submit(
    *,
    assignment: Assignment,
    user,
    theme: str,
    trait_decisions: dict[str, str] | None = None,
    added_traits: list[str] | None = None,
    flagged: bool = False,
    note: str = "",
    revision: int | None = None,
    suggested: list[str] | None = None,
    seconds: float | None = None,
) -> Assignment:
    """Record an annotator's review. Submitting again edits it, until the round is locked.

    ``revision`` is the revision the form was loaded with; if another tab
    submitted in between, ConflictError is raised and nothing changes.
    ``suggested`` is the item's ``suggested_codes`` when the caller already read them
    (the review page builds its form from them): they are not read a second time.
    ``seconds`` is the time the answer took by the page's own clock (checked, capped, kept with it).
    """
    # Lock the item before the answer: under READ COMMITTED two annotators
    # submitting at once would each miss the other's uncommitted answer and
    # leave the item pending; the second now waits and then reads the first.
    # The statement reads only what may have changed since the caller's copy of the item (its status,
    # its round's status, whether a researcher paused this annotator's queue); the rest is that copy's.
    locked = _ITEM_LOCKED_FOR_ANSWER.one(item_id=assignment.item_id, user_id=user.pk)
    if locked is None:
        raise RoundItem.DoesNotExist("RoundItem matching query does not exist.")
    item_status, final_theme_id, control_id, round_status, per_item, queue_paused = locked
    item = assignment.item
    item.status, item.final_theme_id, item.control_id = item_status, final_theme_id, control_id
    if assignment.annotator_id != user.pk:
        raise PermissionDenied(_("This item is not in your queue."))
    # The round's status came with the locked item, read by that statement (no staler than a separate
    # read: a round lock takes no item lock, so neither read is atomic with it).
    if round_status != RoundStatus.OPEN:
        raise ValidationError(_("The round is locked; answers can no longer change."))
    if queue_paused:
        raise ValidationError(_("A researcher has paused your queue in this round; answers wait until it resumes."))
    if revision is not None and revision != assignment.revision:
        # The caller's copy is older than the lock: the locked row has the last word.
        assignment = _assignment_locked(pk=assignment.pk, item=item)
        if revision != assignment.revision:
            raise _saved_elsewhere(assignment)

    errors = {}
    try:
        seconds = answer_seconds_clean(seconds)
    except ValidationError as exc:
        errors.update({field: messages[0] for field, messages in exc.message_dict.items()})
    known_traits = trait_codes()
    theme_id = theme_ids().get(theme) if theme else None
    if theme_id is None:
        errors["theme"] = _("choose one theme")
    if suggested is None:
        suggested = suggested_codes(assignment.item)
    decisions = {code: d for code, d in (trait_decisions or {}).items() if d}
    unknown = set(decisions) - set(suggested)
    if unknown:
        errors["trait_decisions"] = _("not suggested for this item: %(codes)s") % {"codes": ", ".join(sorted(unknown))}
    missing = [code for code in suggested if code not in decisions]
    if missing:
        errors["trait_decisions"] = _("accept, reject or mark unsure: %(codes)s") % {"codes": ", ".join(missing)}
    if any(d not in TraitDecision.values for d in decisions.values()):
        errors["trait_decisions"] = _("a decision is accept, reject or unsure")
    added = sorted(set(added_traits or []))
    if set(added) - known_traits:
        errors["added_traits"] = _("unknown trait %(codes)s") % {"codes": ", ".join(sorted(set(added) - known_traits))}
    if set(added) & set(suggested):
        errors["added_traits"] = _("a suggested trait is decided above, not added")
    if errors:
        raise ValidationError(errors)

    note = note.strip()
    now = timezone.now()
    present = present_traits_mask([code for code, d in decisions.items() if d == TraitDecision.ACCEPT] + added)
    answer = {
        "theme_id": theme_id,
        "trait_decisions": decisions,
        "added_traits": added,
        "present_traits": present,
        "flagged": flagged,
        "note": note,
        "status": AssignmentStatus.SUBMITTED,
        "submitted_at": now,
        "seconds": seconds,
        "draft": {},
        "updated_at": now,
    }
    if not _answer_write(assignment, answer):
        # Changed since the caller read it (a submit from another tab, a skip): the locked row decides,
        # and being locked it takes the write.
        assignment = _assignment_locked(pk=assignment.pk, item=item)
        if revision is not None and revision != assignment.revision:
            raise _saved_elsewhere(assignment)
        _answer_write(assignment, answer)
    # The row as it was before the write: the copy whose revision the guarded write matched (every
    # change of an answer's labels or of a submitted status moves the revision).
    before = assignment_labels(assignment) if assignment.status == AssignmentStatus.SUBMITTED else None
    old = {
        "theme": theme_codes().get(assignment.theme_id),
        "trait_decisions": assignment.trait_decisions,
        "added_traits": assignment.added_traits,
        "flagged": assignment.flagged,
        "note": assignment.note,
    }
    for field, value in answer.items():
        setattr(assignment, field, value)  # the cached theme object is dropped with its id
    assignment.revision += 1
    new = {
        "theme": theme,
        "trait_decisions": decisions,
        "added_traits": added,
        "flagged": flagged,
        "note": assignment.note,
    }
    changes = []
    for key in old:
        previous = old[key] if before else None
        if previous is None and new[key] in ("", [], {}, False):
            continue  # an empty field on a first submit is not a change worth a history row
        if previous != new[key]:
            changes.append(
                LabelChange(
                    item=item, assignment=assignment, actor=user, field=key, old_value=previous, new_value=new[key]
                )
            )
    # One INSERT for the answer's history rows (same rows, same order, as one _log call each).
    LabelChange.objects.bulk_create(changes)
    if item.control_id is None:
        # A control item is never decided: its labels are known, and it is no part of the funnel.
        _item_status_derive(item, annotators_per_item=per_item)
    round_changed(round_id=item.round_id)
    return assignment


# Run on every answer: compiled once (core.compiled_reads).
_ITEM_LOCKED_FOR_ANSWER = CompiledRead(
    lambda *, item_id, user_id: (
        RoundItem.objects.select_for_update(of=("self",))
        .filter(pk=item_id)
        .annotate(
            queue_paused=Exists(AnnotatorPause.objects.filter(round_id=OuterRef("round_id"), annotator_id=user_id))
        )
        .values_list(
            "status", "final_theme_id", "control_id", "round__status", "round__annotators_per_item", "queue_paused"
        )
    )
)


def _saved_elsewhere(current: Assignment) -> ConflictError:
    return ConflictError(
        _("This item was saved from another tab or window; reload it to see the saved answer."), current=current
    )


def _assignment_locked(*, pk: int, item: RoundItem) -> Assignment:
    # With its theme: a conflict shows the saved answer, theme and all.
    assignment = Assignment.objects.select_for_update(of=("self",)).select_related("theme").get(pk=pk)
    assignment.item = item
    return assignment


def _answer_write(assignment: Assignment, answer: dict) -> bool:
    """Write ``answer`` over the row if it still has ``assignment``'s revision; whether it did."""
    return bool(
        Assignment.objects.filter(pk=assignment.pk, revision=assignment.revision).update(
            revision=assignment.revision + 1, **answer
        )
    )


@transaction.atomic
def item_status_refresh(*, item: RoundItem) -> RoundItem:
    """Derive an item's status from its submitted reviews (while nobody has adjudicated it)."""
    # Locked and read afresh, so a submit committing meanwhile is seen (see assignment_submit).
    locked = RoundItem.objects.select_for_update(of=("self",)).select_related("round").get(pk=item.pk)
    if locked.control_id is not None:
        return locked
    # The caller says round_changed once for all the items it refreshes.
    return _item_status_derive(locked, annotators_per_item=locked.round.annotators_per_item)


def _item_status_derive(item: RoundItem, *, annotators_per_item: int) -> RoundItem:
    """The status update itself; the caller holds the item's row lock."""
    if item.status in (ItemStatus.ADJUDICATED, ItemStatus.REMOVED):
        return item
    assignments = item_assignments(item_id=item.pk)
    # One annotator agrees with themselves: an item needs the round's full
    # number of reviews (imports may bring fewer) before it can be unanimous.
    if len(assignments) < annotators_per_item or any(a.status != AssignmentStatus.SUBMITTED for a in assignments):
        status = ItemStatus.PENDING
    else:
        labels = [assignment_labels(a) for a in assignments]
        agree = len({(lab.traits, lab.theme) for lab in labels}) == 1
        clean = not any(lab.unsure or lab.flagged for lab in labels)
        status = ItemStatus.UNANIMOUS if agree and clean else ItemStatus.NEEDS_ADJUDICATION
    if status == ItemStatus.PENDING and item.status == ItemStatus.PENDING and item.final_theme_id is None:
        # Still awaiting a review (the first of two answers): nothing to write. A pending item
        # has no final traits either: they are set only with UNANIMOUS and ADJUDICATED.
        return item
    # Final traits are set only with a final theme, by a decision: an item with neither has none to clear.
    had_final_traits = item.final_theme_id is not None or item.status in (ItemStatus.UNANIMOUS, ItemStatus.ADJUDICATED)
    item.status = status
    if status == ItemStatus.UNANIMOUS:
        item.final_theme_id = assignments[0].theme_id
        item.save(update_fields=["status", "final_theme"])
        item.final_traits.set(Trait.objects.filter(code__in=labels[0].traits))
    else:
        item.final_theme = None
        item.save(update_fields=["status", "final_theme"])
        if had_final_traits:
            item.final_traits.clear()
    return item


def _claim_for_adjudication(item: RoundItem, user, revision: int, new_status: str) -> tuple[RoundItem, str]:
    """Take an undecided item with a guarded update; returns the item and the status it had."""
    if _round_status(item.round_id) != RoundStatus.LOCKED:
        raise ValidationError(_("Adjudication happens while the round is locked."))
    if item.control_id is not None:
        raise ValidationError(_("A control item has known labels: it is not adjudicated."))
    # The revision pins the row as the adjudicator saw it, so this is the status it had when claimed.
    before = RoundItem.objects.filter(pk=item.pk, revision=revision).values_list("status", flat=True).first()
    # An item still awaiting a review at the lock is decided here too, or the round could never be frozen.
    claimed = RoundItem.objects.filter(pk=item.pk, status__in=UNDECIDED_STATUSES, revision=revision).update(
        status=new_status, revision=F("revision") + 1, resolved_by=user, resolved_at=timezone.now()
    )
    if not claimed:
        current = RoundItem.objects.select_related("resolved_by").get(pk=item.pk)
        who = current.resolved_by.get_username() if current.resolved_by else _("someone else")
        raise ConflictError(
            _("%(who)s resolved this item first (%(status)s); your decision was not saved.")
            % {"who": who, "status": current.get_status_display().lower()},
            current=current,
        )
    return RoundItem.objects.get(pk=item.pk), before


@transaction.atomic
def adjudication_resolve(
    *, item: RoundItem, user, traits: list[str], theme: str, note: str = "", revision: int
) -> RoundItem:
    """Record the final traits and theme of a disputed item. The first adjudicator wins."""
    theme_obj = Theme.objects.filter(code=theme).first()
    trait_objs = list(Trait.objects.filter(code__in=traits))
    errors = {}
    if theme_obj is None:
        errors["theme"] = _("choose one theme")
    if len(trait_objs) != len(set(traits)):
        errors["traits"] = _("unknown trait code")
    if errors:
        raise ValidationError(errors)
    item, before = _claim_for_adjudication(item, user, revision, ItemStatus.ADJUDICATED)
    item.final_theme = theme_obj
    item.resolution_note = note.strip()
    item.save(update_fields=["final_theme", "resolution_note"])
    item.final_traits.set(trait_objs)
    _log(item=item, actor=user, field="status", old=before, new=ItemStatus.ADJUDICATED)
    _log(item=item, actor=user, field="final_theme", old=None, new=theme)
    _log(item=item, actor=user, field="final_traits", old=None, new=sorted(t.code for t in trait_objs))
    round_changed(round_id=item.round_id)
    return item


@transaction.atomic
def adjudication_remove(*, item: RoundItem, user, reason: str, note: str = "", revision: int) -> RoundItem:
    """Drop an item from the final dataset (inaccurate or culturally inappropriate), with a reason."""
    if reason not in RemovalReason.values:
        raise ValidationError({"reason": _("one of %(reasons)s") % {"reasons": ", ".join(RemovalReason.values)}})
    if reason == RemovalReason.OTHER and not note.strip():
        raise ValidationError({"note": _("say why the item is removed")})
    item, before = _claim_for_adjudication(item, user, revision, ItemStatus.REMOVED)
    item.removal_reason = reason
    item.resolution_note = note.strip()
    item.save(update_fields=["removal_reason", "resolution_note"])
    _log(item=item, actor=user, field="status", old=before, new=ItemStatus.REMOVED)
    _log(item=item, actor=user, field="removal_reason", old=None, new=reason)
    round_changed(round_id=item.round_id)
    return item
