"""Labels made outside VIVID Studio, imported into a round (``manage.py import_annotations``).

Long format, one row per item and annotator: ``expression``, ``annotator``,
``theme`` (code or number), ``traits`` (the codes or numbers that annotator
marked present, comma-separated, possibly empty) and an optional ``note``.
All or nothing: any bad row aborts the import with every error named by row
and column, and nothing is written.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.contrib.auth.models import Group, User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.roles import ANNOTATOR
from core.tables import ImportReport, ImportValidationError, RowError, TableError, cell, read_table

from ...models import (
    AnnotationRound,
    Assignment,
    AssignmentStatus,
    Dataset,
    Expression,
    ItemStatus,
    LabelChange,
    RoundItem,
    RoundStatus,
    Theme,
    normalize_key,
)
from ...selectors.corpus import present_traits_mask
from ...selectors.workflow import round_suggested_codes
from ..changes import round_changed
from ..review import item_status_refresh
from ..rounds import round_item_counts_refresh
from .taxonomy import parse_traits, theme_tokens, trait_tokens, unknown_trait_params

REQUIRED_COLUMNS = ("expression", "annotator", "theme", "traits")
OPTIONAL_COLUMNS = ("note",)

# Codes the corpus import has no message for; RowError looks messages up in
# core.tables, which this app does not own.
MESSAGES = {
    "theme_empty": _("the theme is empty (use codes %(codes)s or numbers 1-%(count)s)"),
    "already_submitted": _(
        "annotator '%(annotator)s' already submitted a review of this expression in round '%(round)s'"
    ),
    "bad_annotator": _("'%(annotator)s' is not a valid user name (letters, digits and @ . + - _ only, at most 150)"),
    "no_rows": _("'%(filename)s' has no data rows."),
}


class AnnotationRowError(RowError):
    @property
    def message(self) -> str:
        if self.code in MESSAGES:
            return str(MESSAGES[self.code]) % (self.params or {})
        return super().message


@dataclass
class AnnotationsImportResult:
    round: AnnotationRound
    round_created: bool
    items: int
    annotations: int
    unanimous: int
    needs_adjudication: int
    pending: int
    accounts_created: list[str] = field(default_factory=list)

    @property
    def summary(self) -> str:
        return (
            f"round {self.round.name}: items {self.items}, annotations {self.annotations}, "
            f"unanimous {self.unanimous}, needs_adjudication {self.needs_adjudication}"
        )


@dataclass
class _Row:
    row: int
    expression_id: int
    annotator: str
    theme: Theme
    traits: list[str]
    note: str


def _round_for(round_name: str, dataset: Dataset) -> AnnotationRound | None:
    round_name = (round_name or "").strip()
    if not round_name:
        raise ValidationError({"round": "a round name is required"})
    existing = AnnotationRound.objects.filter(name=round_name).first()
    if existing is not None:
        if existing.dataset_id != dataset.pk:
            raise ValidationError(
                {"round": f"the round '{round_name}' belongs to the dataset '{existing.dataset.name}'"}
            )
        if existing.status == RoundStatus.FROZEN:
            raise ValidationError({"round": f"the round '{round_name}' is frozen; its labels can no longer change"})
    return existing


def _parse(*, dataset, round_, filename, content, report) -> list[_Row]:
    def fail(row, column, code, **params):
        report.errors.append(AnnotationRowError(row, column, code, params))

    try:
        columns, records, first_row = read_table(filename, content)
    except TableError as exc:
        report.errors.append(exc.error)
        raise ImportValidationError(report) from None
    report.columns = columns
    by_lower = {}
    for column in columns:
        by_lower.setdefault(column.strip().lower(), column)
    for required in REQUIRED_COLUMNS:
        if required not in by_lower:
            fail(None, required, "required_column_missing", columns=", ".join(columns) or "-")
    if report.errors:
        raise ImportValidationError(report)

    traits, traits_by_token = trait_tokens()
    themes, themes_by_token = theme_tokens()
    expressions = dict(Expression.objects.filter(dataset=dataset).values_list("normalized_key", "id"))
    already = set()
    if round_ is not None:
        already = set(
            Assignment.objects.filter(item__round=round_, status=AssignmentStatus.SUBMITTED).values_list(
                "item__expression_id", "annotator__username"
            )
        )
    validate_username = UnicodeUsernameValidator()
    col = {name: by_lower[name] for name in REQUIRED_COLUMNS}
    note_column = by_lower.get("note")
    seen: dict[tuple[int, str], int] = {}
    rows = []
    for offset, record in enumerate(records):
        row = first_row + offset
        if record is None:
            continue
        report.rows += 1
        ok = True
        annotator = cell(record.get(col["annotator"]))
        if not annotator:
            fail(row, col["annotator"], "annotator_missing")
            ok = False
        else:
            try:
                validate_username(annotator)
                if len(annotator) > 150:
                    raise ValidationError("too long")
            except ValidationError:
                fail(row, col["annotator"], "bad_annotator", annotator=annotator)
                ok = False
        text = cell(record.get(col["expression"]))
        expression_id = expressions.get(normalize_key(text)) if text else None
        if not text:
            fail(row, col["expression"], "expression_empty")
            ok = False
        elif expression_id is None:
            fail(row, col["expression"], "unknown_expression", value=text)
            ok = False
        theme_raw = cell(record.get(col["theme"])).lower()
        theme = themes_by_token.get(theme_raw)
        theme_params = {"codes": ", ".join(t.code for t in themes), "count": len(themes)}
        if not theme_raw:
            fail(row, col["theme"], "theme_empty", **theme_params)
            ok = False
        elif theme is None:
            fail(row, col["theme"], "unknown_theme", value=theme_raw, **theme_params)
            ok = False
        found, unknown = parse_traits(record.get(col["traits"]), traits_by_token)
        if unknown:
            fail(
                row,
                col["traits"],
                "unknown_trait",
                **unknown_trait_params(unknown, traits),
            )
            ok = False
        if expression_id is not None and annotator:
            key = (expression_id, annotator)
            if key in seen:
                fail(row, col["annotator"], "unknown_annotator_item", annotator=annotator, first_row=seen[key])
                ok = False
            else:
                seen[key] = row
            if key in already:
                fail(row, col["annotator"], "already_submitted", annotator=annotator, round=round_.name)
                ok = False
        if ok:
            note = cell(record.get(note_column)) if note_column else ""
            rows.append(_Row(row, expression_id, annotator, theme, sorted(t.code for t in found), note))
    if not report.rows and not report.errors:
        fail(None, None, "no_rows", filename=filename)
    if report.errors:
        raise ImportValidationError(report)
    return rows


def _ensure_annotators(usernames: list[str]) -> tuple[dict[str, User], list[str]]:
    """Existing accounts are used as they are; missing ones are created inactive, unable to sign in."""
    users = {u.username: u for u in User.objects.filter(username__in=usernames)}
    group = Group.objects.get(name=ANNOTATOR)
    created = []
    for username in usernames:
        if username in users:
            continue
        user = User(username=username, is_active=False)
        user.set_unusable_password()
        user.save()
        user.groups.add(group)
        users[username] = user
        created.append(username)
    return users, created


@transaction.atomic
def annotations_import(
    *, dataset: Dataset, round_name: str, filename: str, content: bytes, user=None
) -> AnnotationsImportResult:
    """Import externally made labels into a round (created when missing), all or nothing.

    Each row becomes a SUBMITTED assignment whose ``added_traits`` are the
    traits and whose theme is the row's theme; the items' statuses are then
    derived as for reviews made here (unanimous or needs adjudication).
    """
    round_ = _round_for(round_name, dataset)
    report = ImportReport(dataset_name=dataset.name, filename=filename, dry_run=False)
    rows = _parse(dataset=dataset, round_=round_, filename=filename, content=content, report=report)

    usernames = list(dict.fromkeys(r.annotator for r in rows))
    users, accounts_created = _ensure_annotators(usernames)
    per_item = Counter(r.expression_id for r in rows)
    round_created = round_ is None
    if round_created:
        round_ = AnnotationRound.objects.create(
            name=round_name.strip(),
            dataset=dataset,
            annotators_per_item=max(per_item.values()),
            item_filter={"imported_from": filename},
            created_by=user,
        )
    round_.annotators.add(*users.values())

    items = {i.expression_id: i for i in RoundItem.objects.filter(round=round_, expression_id__in=per_item)}
    missing = [eid for eid in per_item if eid not in items]
    suggested = round_suggested_codes(round=round_, expressions=missing)
    new_items = [RoundItem(round=round_, expression_id=eid, suggested=suggested.get(eid)) for eid in missing]
    for item in RoundItem.objects.bulk_create(new_items):
        items[item.expression_id] = item

    existing = {
        (a.item_id, a.annotator_id): a
        for a in Assignment.objects.filter(
            item__round=round_, item__expression_id__in=per_item, annotator__in=users.values()
        )
    }
    next_position = defaultdict(int)
    next_position.update(
        Assignment.objects.filter(item__round=round_)
        .values("annotator_id")
        .annotate(last=Max("position"))
        .values_list("annotator_id", "last")
    )
    now = timezone.now()
    to_create, to_update, changes = [], [], []
    for r in rows:
        item, annotator = items[r.expression_id], users[r.annotator]
        assignment = existing.get((item.pk, annotator.pk))
        if assignment is None:
            next_position[annotator.pk] += 1
            assignment = Assignment(item=item, round=round_, annotator=annotator, position=next_position[annotator.pk])
            to_create.append(assignment)
        else:
            to_update.append(assignment)
        assignment.status = AssignmentStatus.SUBMITTED
        assignment.trait_decisions = {}
        assignment.added_traits = r.traits
        assignment.present_traits = present_traits_mask(r.traits)
        assignment.theme = r.theme
        assignment.flagged = False
        assignment.note = r.note
        assignment.draft = {}
        assignment.revision += 1
        assignment.submitted_at = now
        assignment.updated_at = now
    Assignment.objects.bulk_create(to_create, batch_size=1000)
    Assignment.objects.bulk_update(
        to_update,
        [
            "status",
            "trait_decisions",
            "added_traits",
            "present_traits",
            "theme",
            "flagged",
            "note",
            "draft",
            "revision",
            "submitted_at",
            "updated_at",
        ],
        batch_size=1000,
    )
    # The history records who brought the labels in (the importing user) and what they were.
    by_key = {(a.item_id, a.annotator_id): a for a in [*to_create, *to_update]}
    for r in rows:
        assignment = by_key[(items[r.expression_id].pk, users[r.annotator].pk)]
        for fieldname, value in (("theme", r.theme.code), ("added_traits", r.traits), ("note", r.note)):
            if value or fieldname != "note":
                changes.append(
                    LabelChange(
                        item=assignment.item,
                        assignment=assignment,
                        actor=user,
                        field=fieldname,
                        old_value=None,
                        new_value=value,
                    )
                )
    LabelChange.objects.bulk_create(changes, batch_size=2000)

    # Control items sit in every queue: they say nothing of how many annotators review an item.
    largest = max(
        Counter(
            Assignment.objects.filter(item__round=round_, item__control__isnull=True).values_list("item_id", flat=True)
        ).values(),
        default=0,
    )
    to_refresh = list(items.values())
    if largest > round_.annotators_per_item:
        AnnotationRound.objects.filter(pk=round_.pk).update(annotators_per_item=largest)
        round_.annotators_per_item = largest
        # Items accepted with fewer reviews than a round now expects wait for the rest.
        to_refresh = list(RoundItem.objects.filter(round=round_))

    statuses = Counter()
    for item in to_refresh:
        item = item_status_refresh(item=item)
        if item.expression_id in per_item:
            statuses[item.status] += 1
    if missing:
        round_item_counts_refresh(round=round_)
    round_changed(round_id=round_.pk)
    return AnnotationsImportResult(
        round=round_,
        round_created=round_created,
        items=len(items),
        annotations=len(rows),
        unanimous=statuses[ItemStatus.UNANIMOUS],
        needs_adjudication=statuses[ItemStatus.NEEDS_ADJUDICATION],
        pending=statuses[ItemStatus.PENDING],
        accounts_created=accounts_created,
    )
