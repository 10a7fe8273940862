"""Annotator quality: control items, quality settings, pausing a queue, notes and second reviews.

Control items are blind: they reach queues as ordinary round items created among the others
(their ids and positions say nothing), so they can be added only before anyone has answered.
The statistics are in selectors/quality.py.
"""

import json
import random
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.csv_writer import csv_records_text
from core.stamps import forget

from ..models import (
    AnnotationRound,
    AnnotatorPause,
    Assignment,
    AssignmentStatus,
    ControlItem,
    DatasetVersion,
    Expression,
    ItemStatus,
    LabelChange,
    RecalibrationNote,
    RoundItem,
    RoundStatus,
    Suggestion,
    normalize_key,
)
from ..selectors.corpus import theme_ids, trait_codes
from ..selectors.quality import recalibration_key
from .changes import round_changed
from .review import item_status_refresh
from .rounds import round_items_distribute

NOTE_MAX_LENGTH = 4000


# --- Settings ---------------------------------------------------------------------------------


def round_quality_update(
    *,
    round: AnnotationRound,
    user,
    control_rate: float,
    quality_window: int,
    quality_threshold: float,
    fast_seconds: float,
) -> AnnotationRound:
    """The control rate, the drift window, the warning threshold and the fast-answer time."""
    errors = {}
    if not 0 <= control_rate <= 0.5:
        errors["control_rate"] = _("a share between 0 and 0.5")
    if quality_window < 5:
        errors["quality_window"] = _("at least 5 items")
    if not -1 <= quality_threshold <= 1:
        errors["quality_threshold"] = _("a kappa between -1 and 1")
    if not 0 <= fast_seconds <= 600:
        errors["fast_seconds"] = _("between 0 and 600 seconds")
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        locked = AnnotationRound.objects.select_for_update().get(pk=round.pk)
        rate_changed = abs(locked.control_rate - control_rate) > 1e-9
        if rate_changed and locked.controls.exists():
            _check_untouched(locked, field="control_rate")
        AnnotationRound.objects.filter(pk=round.pk).update(
            control_rate=control_rate,
            quality_window=quality_window,
            quality_threshold=quality_threshold,
            fast_seconds=fast_seconds,
        )
        if rate_changed and locked.controls.exists():
            locked.refresh_from_db()
            _queues_rebuild(locked)
        # The drift window and the threshold decide the round page's warnings.
        round_changed(round_id=round.pk)
    round.refresh_from_db()
    return round


# --- Control items ----------------------------------------------------------------------------


def _check_untouched(round: AnnotationRound, *, field: str | None = None) -> None:
    """Queues are rebuilt to place control items: only while nobody has started on them."""
    if round.status != RoundStatus.OPEN:
        message = _("The round is %(status)s: control items change only while it is open.") % {
            "status": round.get_status_display().lower()
        }
    elif Assignment.objects.filter(item__round=round).exclude(status=AssignmentStatus.PENDING).exists():
        message = _(
            "An annotator has started this round: control items (and their rate) are set before the first answer, "
            "or the new items' places in the queues would tell annotators which they are."
        )
    else:
        return
    raise ValidationError({field: message} if field else message)


def _control_hidden(round: AnnotationRound, controls: list[ControlItem]) -> dict[int, bool]:
    """Whether each control's suggestions are hidden: as for a regular item of the round."""
    if round.suggestion_set_id is None:
        return {c.pk: False for c in controls}
    with_suggestion = set(
        Suggestion.objects.filter(
            suggestion_set_id=round.suggestion_set_id, expression_id__in=[c.expression_id for c in controls]
        ).values_list("expression_id", flat=True)
    )
    rng = random.Random(f"{round.seed}:control-suggestions")
    return {
        c.pk: c.expression_id not in with_suggestion or rng.random() < round.hide_suggestions_fraction
        for c in sorted(controls, key=lambda c: c.pk)
    }


def _queues_rebuild(round: AnnotationRound) -> None:
    """Recreate the round's items and queues from its seed with every control item placed."""
    expressions = list(
        RoundItem.objects.filter(round=round, control__isnull=True)
        .order_by("expression_id")
        .values_list("expression_id", flat=True)
    )
    controls = list(ControlItem.objects.filter(round=round).order_by("id"))
    excluded: dict[int, set[int]] = {}
    for annotator_id, examples in RecalibrationNote.objects.filter(round=round).values_list("annotator_id", "examples"):
        excluded.setdefault(annotator_id, set()).update(e.get("control") for e in examples)
    Assignment.objects.filter(item__round=round).delete()
    RoundItem.objects.filter(round=round).delete()
    round_items_distribute(
        round=round,
        expressions=expressions,
        annotators=list(round.annotators.all()),
        controls=controls,
        control_hidden=_control_hidden(round, controls),
        excluded=excluded,
    )


def _entry_problems(round: AnnotationRound, entries: list[dict]) -> list[str]:
    known_traits, themes = trait_codes(), theme_ids()
    in_round = set(RoundItem.objects.filter(round=round).values_list("expression_id", flat=True))
    suggested = set()
    if round.suggestion_set_id is not None:
        suggested = set(
            Suggestion.objects.filter(
                suggestion_set_id=round.suggestion_set_id, expression_id__in=[e["expression"].pk for e in entries]
            ).values_list("expression_id", flat=True)
        )
    problems, seen = [], set()
    for entry in entries:
        expression, label = entry["expression"], entry["expression"].text
        if expression.pk in in_round or expression.pk in seen:
            problems.append(_("“%(text)s” is already an item of this round") % {"text": label})
        seen.add(expression.pk)
        unknown = sorted(set(entry["traits"]) - known_traits)
        if unknown:
            problems.append(_("“%(text)s”: unknown trait %(codes)s") % {"text": label, "codes": ", ".join(unknown)})
        if entry["theme"] not in themes:
            problems.append(_("“%(text)s”: unknown theme “%(theme)s”") % {"text": label, "theme": entry["theme"]})
        if (
            round.suggestion_set_id is not None
            and not round.hide_suggestions_fraction
            and expression.pk not in suggested
        ):
            # Every other item shows suggestions: one without them would stand out.
            problems.append(
                _("“%(text)s” has no suggestion in the round's suggestion set, so annotators would notice it")
                % {"text": label}
            )
    return problems


@transaction.atomic
def control_items_add(
    *, round: AnnotationRound, user, entries: list[dict], source_version: DatasetVersion | None = None
) -> list[ControlItem]:
    """Add control items, each ``{"expression": Expression, "traits": [codes], "theme": code}``,
    and rebuild the queues so every annotator meets ``round.control_rate`` of them."""
    round = AnnotationRound.objects.select_for_update().get(pk=round.pk)
    _check_untouched(round)
    if not entries:
        raise ValidationError(_("No control item to add."))
    problems = _entry_problems(round, entries)
    if problems:
        raise ValidationError(problems)
    themes = theme_ids()
    created = ControlItem.objects.bulk_create(
        [
            ControlItem(
                round=round,
                expression=entry["expression"],
                traits=sorted(set(entry["traits"])),
                theme_id=themes[entry["theme"]],
                source_version=source_version,
                created_by=user,
            )
            for entry in entries
        ]
    )
    _queues_rebuild(round)
    return created


def control_items_from_version(
    *, round: AnnotationRound, version: DatasetVersion, user, count: int | None = None
) -> list[ControlItem]:
    """Controls from a frozen version's items (their frozen traits and theme), ``count`` of them drawn
    with the round's seed (all that fit by default): items already in the round or, when every item
    of the round shows suggestions, items without one are passed over."""
    if count is not None and count < 1:
        raise ValidationError({"count": _("at least one item")})
    in_round = set(RoundItem.objects.filter(round=round).values_list("expression_id", flat=True))
    rows = [
        row
        for row in version.items.filter(expression__isnull=False)
        .order_by("id")
        .values("expression_id", "traits", "theme")
        if row["expression_id"] not in in_round
    ]
    if round.suggestion_set_id is not None and not round.hide_suggestions_fraction:
        suggested = set(
            Suggestion.objects.filter(suggestion_set_id=round.suggestion_set_id).values_list("expression_id", flat=True)
        )
        rows = [row for row in rows if row["expression_id"] in suggested]
    if not rows:
        raise ValidationError(
            {
                "version": _("Version “%(name)s” has no item that can be a control of this round.")
                % {"name": version.name}
            }
        )
    if count is not None and count < len(rows):
        rows = sorted(random.Random(f"{round.seed}:{version.pk}").sample(rows, count), key=lambda r: r["expression_id"])
    expressions = Expression.objects.in_bulk([row["expression_id"] for row in rows])
    entries = [
        {"expression": expressions[row["expression_id"]], "traits": row["traits"], "theme": row["theme"]}
        for row in rows
    ]
    return control_items_add(round=round, user=user, entries=entries, source_version=version)


def control_item_create(*, round: AnnotationRound, user, expression: str, traits: list[str], theme: str) -> ControlItem:
    """A control entered by hand: an expression of the round's dataset (its text or external id) with the
    traits and theme the researcher knows it has."""
    key = (expression or "").strip()
    if not key:
        raise ValidationError({"expression": _("name an expression of the dataset (its text or external id)")})
    found = (
        Expression.objects.filter(dataset=round.dataset, normalized_key=normalize_key(key)).first()
        or Expression.objects.filter(dataset=round.dataset, external_id=key).first()
    )
    if found is None:
        raise ValidationError(
            {"expression": _("“%(key)s” is not in dataset “%(dataset)s”") % {"key": key, "dataset": round.dataset.name}}
        )
    if not theme:
        raise ValidationError({"theme": _("choose the theme the item has")})
    return control_items_add(round=round, user=user, entries=[{"expression": found, "traits": traits, "theme": theme}])[
        0
    ]


# --- Recalibration ----------------------------------------------------------------------------


def _check_annotator_of(round: AnnotationRound, annotator) -> None:
    if not round.annotators.filter(pk=annotator.pk).exists():
        raise ValidationError(
            {"annotator": _("%(user)s does not annotate this round") % {"user": annotator.get_username()}}
        )


def annotator_queue_pause(*, round: AnnotationRound, annotator, user) -> AnnotatorPause:
    """Stop one annotator's queue: they can read their items but submit nothing until it resumes."""
    _check_annotator_of(round, annotator)
    pause, _created = AnnotatorPause.objects.get_or_create(
        round=round, annotator=annotator, defaults={"paused_by": user}
    )
    forget(key=recalibration_key(round_id=round.pk, annotator_id=annotator.pk))
    return pause


def annotator_queue_resume(*, round: AnnotationRound, annotator, user) -> int:
    _check_annotator_of(round, annotator)
    deleted, _rows = AnnotatorPause.objects.filter(round=round, annotator=annotator).delete()
    forget(key=recalibration_key(round_id=round.pk, annotator_id=annotator.pk))
    return deleted


def recalibration_note_create(
    *, round: AnnotationRound, annotator, user, note: str, examples: list[ControlItem] = ()
) -> RecalibrationNote:
    """A note with example items (control items, with their known labels) shown on the annotator's next item.

    An example is a control the annotator will not meet later in their queue (one still to come would
    be answered with the answer in sight, and would show which items are controls).
    """
    _check_annotator_of(round, annotator)
    note = (note or "").strip()
    errors = {}
    if not note:
        errors["note"] = _("write what the annotator should know")
    elif len(note) > NOTE_MAX_LENGTH:
        errors["note"] = _("at most %(n)s characters") % {"n": NOTE_MAX_LENGTH}
    ahead = set(
        Assignment.objects.filter(item__round=round, annotator=annotator, item__control__isnull=False)
        .exclude(status=AssignmentStatus.SUBMITTED)
        .values_list("item__control_id", flat=True)
    )
    bad = [c for c in examples if c.round_id != round.pk or c.pk in ahead]
    if bad:
        errors["examples"] = _("still to come in %(user)s's queue, or not a control of this round: %(items)s") % {
            "user": annotator.get_username(),
            "items": ", ".join(f"“{c.expression.text}”" for c in bad),
        }
    if errors:
        raise ValidationError(errors)
    copies = [
        {
            "control": c.pk,
            "text": c.expression.text,
            "explanation": c.expression.explanation,
            "traits": list(c.traits),
            "theme": c.theme.code,
        }
        for c in examples
    ]
    created = RecalibrationNote.objects.create(
        round=round, annotator=annotator, note=note, examples=copies, created_by=user
    )
    forget(key=recalibration_key(round_id=round.pk, annotator_id=annotator.pk))
    return created


def recalibration_note_seen(*, note: RecalibrationNote, user) -> None:
    if note.annotator_id == user.pk:
        RecalibrationNote.objects.filter(pk=note.pk, seen_at__isnull=True).update(seen_at=timezone.now())
        forget(key=recalibration_key(round_id=note.round_id, annotator_id=note.annotator_id))


def assignments_review_again(*, round: AnnotationRound, annotator, user, since: datetime) -> int:
    """Send the annotator's answers submitted since ``since`` back to their queue for another review.

    Each previous answer is kept whole in the item's history (a LabelChange ``answer`` row), and the
    next submit writes its own rows: the history holds both answers. Returns how many went back.
    """
    _check_annotator_of(round, annotator)
    if round.status != RoundStatus.OPEN:
        raise ValidationError(_("Answers go back for review only while the round is open."))
    sent = 0
    assignments = (
        Assignment.objects.filter(
            item__round=round, annotator=annotator, status=AssignmentStatus.SUBMITTED, submitted_at__gte=since
        )
        .exclude(item__status__in=[ItemStatus.ADJUDICATED, ItemStatus.REMOVED])
        .select_related("theme", "item")
        .order_by("position")
    )
    for assignment in assignments:
        with transaction.atomic():
            item = RoundItem.objects.select_for_update(of=("self",)).get(pk=assignment.item_id)
            previous = {
                "theme": assignment.theme.code if assignment.theme_id else None,
                "trait_decisions": assignment.trait_decisions,
                "added_traits": assignment.added_traits,
                "flagged": assignment.flagged,
                "note": assignment.note,
                "seconds": assignment.seconds,
                "submitted_at": assignment.submitted_at.isoformat() if assignment.submitted_at else None,
            }
            changed = Assignment.objects.filter(
                pk=assignment.pk, status=AssignmentStatus.SUBMITTED, revision=assignment.revision
            ).update(
                status=AssignmentStatus.PENDING,
                theme=None,
                trait_decisions={},
                added_traits=[],
                present_traits=0,
                flagged=False,
                note="",
                draft={},
                seconds=None,
                submitted_at=None,
                revision=assignment.revision + 1,
                updated_at=timezone.now(),
            )
            if not changed:
                continue  # answered again meanwhile: that answer stands
            LabelChange.objects.create(
                item=item, assignment=assignment, actor=user, field="answer", old_value=previous, new_value=None
            )
            if item.control_id is None:
                item_status_refresh(item=item)
            sent += 1
    if sent:
        round_changed(round_id=round.pk)
    return sent


# --- Export -----------------------------------------------------------------------------------

QUALITY_FORMATS = ("json", "csv")
QUALITY_CSV_COLUMNS = [
    "row",
    "a",
    "b",
    "start",
    "end",
    "n",
    "theme_kappa",
    "median_seconds",
    "fast_share",
    "control_accuracy",
    "kappa_vs_final",
    "theme_kappa_low",
    "theme_kappa_high",
]


def _window_row(window: dict) -> dict:
    """A window's CSV cells: its interval in two columns."""
    low, high = window.get("theme_kappa_ci") or (None, None)
    return {**window, "theme_kappa_low": low, "theme_kappa_high": high}


def round_quality_export(*, summary: dict, fmt: str) -> str:
    """The CLI's output of ``quality_summary``: JSON with exactly its keys, or one CSV row per annotator,
    pair and window (``row`` says which; empty cells where a figure does not apply or is undefined)."""
    if fmt not in QUALITY_FORMATS:
        raise ValidationError({"format": _("one of %(formats)s") % {"formats": ", ".join(QUALITY_FORMATS)}})
    if fmt == "json":
        return json.dumps(summary, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    rows = []
    for name, entry in summary["annotators"].items():
        rows.append({"row": "annotator", "a": name, **{k: entry[k] for k in QUALITY_CSV_COLUMNS[5:] if k in entry}})
        rows.extend({"row": "annotator_window", "a": name, **_window_row(window)} for window in entry["windows"])
    for pair in summary["pairs"]:
        rows.append({"row": "pair", "a": pair["a"], "b": pair["b"], "n": pair["n"], "theme_kappa": pair["theme_kappa"]})
        rows.extend(
            {"row": "pair_window", "a": pair["a"], "b": pair["b"], **_window_row(window)} for window in pair["windows"]
        )
    return csv_records_text(QUALITY_CSV_COLUMNS, rows)
