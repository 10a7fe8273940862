"""Bonus batches, paid exactly once.

Prolific's pay endpoint is not idempotent: paying a bulk bonus twice pays the participants twice.
So a batch moves to SENDING in one guarded UPDATE, committed before the pay request leaves; only
the caller whose UPDATE changed the row sends it. A batch in SENDING or SENT is never sent again,
whatever happens next (the command run twice, a worker's task delivered twice, the answer lost):
a pay whose answer is unknown stays SENDING for a person to check in Prolific's web app.
Only a refusal (a 4xx: nothing was paid) moves it to FAILED, from which it may be paid again.

The page never calls Prolific itself (the client may wait minutes on a rate limit): Pay moves the
batch CREATED (or FAILED) -> QUEUED and a worker's task claims it QUEUED -> SENDING and pays it.
A task claims only a QUEUED batch, so a late redelivery never sends a batch again, nor retries one
Prolific refused. ``prolific_bonus --pay`` pays in its own process, from CREATED, FAILED or QUEUED.
"""

import hashlib
import json
import logging
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.csv_writer import csv_text
from core.tables import TableError, cell, read_table
from study.models import Study

from ..client import ProlificApiError, ProlificClient, ProlificError, ProlificNotConfigured
from ..models import BonusBatch, BonusBatchStatus
from ..selectors.studies import submissions_by_participant

logger = logging.getLogger(__name__)

COLUMNS = ("participant_id", "amount")
# What the page may queue and what ``prolific_bonus --pay`` may pay; a task pays only QUEUED.
PAYABLE = (BonusBatchStatus.CREATED, BonusBatchStatus.FAILED)
COMMAND_PAYABLE = (*PAYABLE, BonusBatchStatus.QUEUED)
CENT = Decimal("0.01")


class BonusFileError(ProlificError):
    """The bonus file cannot be used; ``errors`` name each row and column. Nothing was created."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors[:10]))


def _content(file_or_text) -> tuple[str, bytes]:
    if isinstance(file_or_text, bytes):
        return "bonuses.csv", file_or_text
    if isinstance(file_or_text, str):
        return "bonuses.csv", file_or_text.encode("utf-8")
    name = getattr(file_or_text, "name", None) or "bonuses.csv"
    if hasattr(file_or_text, "seek"):
        file_or_text.seek(0)
    data = file_or_text.read()
    return str(name), data.encode("utf-8") if isinstance(data, str) else data


def bonus_rows_validate(*, study: Study, file_or_text) -> dict:
    """The file's rows, checked all at once: {"prolific_study", "rows", "total"}; raises BonusFileError.

    Each participant must have a submission to one of this study's Prolific studies (run a sync
    first), each amount positive, at most PROLIFIC_BONUS_CAP and in whole cents; one row per participant.
    """
    filename, content = _content(file_or_text)
    if not filename.lower().endswith((".csv", ".tsv", ".xlsx", ".json", ".jsonl")):
        filename = "bonuses.csv"
    try:
        columns, records, first = read_table(filename, content)
    except TableError as exc:
        raise BonusFileError([str(exc.error)]) from None
    missing = [column for column in COLUMNS if column not in columns]
    if missing:
        raise BonusFileError(
            [
                _("column '%(column)s' is missing (the file has: %(columns)s)")
                % {"column": column, "columns": ", ".join(columns) or "-"}
                for column in missing
            ]
        )
    known = submissions_by_participant(study=study)
    cap = Decimal(str(settings.PROLIFIC_BONUS_CAP))
    errors, rows, seen, studies = [], [], {}, {}
    for number, record in enumerate(records, start=first):
        if record is None:
            continue
        pid, text = cell(record.get("participant_id")), cell(record.get("amount"))

        def error(column, message, number=number):
            errors.append(
                _("row %(row)s, column '%(column)s': %(message)s")
                % {"row": number, "column": column, "message": message}
            )

        if not pid:
            error("participant_id", _("the participant id is empty"))
        elif pid in seen:
            error("participant_id", _("%(pid)s already has a bonus in row %(row)s") % {"pid": pid, "row": seen[pid]})
        elif pid not in known:
            error(
                "participant_id",
                _("%(pid)s has no submission to this study on Prolific (sync first if they took part)") % {"pid": pid},
            )
        try:
            amount = Decimal(text.replace(",", ".")) if text else None
        except InvalidOperation:
            amount = None
        if amount is None or not amount.is_finite():
            error("amount", _("'%(value)s' is not an amount") % {"value": text})
        elif amount <= 0:
            error("amount", _("the amount must be more than zero, got %(value)s") % {"value": text})
        elif amount > cap:
            error("amount", _("%(value)s is more than the cap of %(cap)s") % {"value": text, "cap": cap})
        elif amount != amount.quantize(CENT):
            error("amount", _("%(value)s has more than two decimals") % {"value": text})
        if pid and pid not in seen:
            seen[pid] = number
        if pid in known and amount is not None and amount.is_finite():
            studies.setdefault(known[pid].prolific_study, []).append(number)
            rows.append({"participant_id": pid, "amount": str(amount.quantize(CENT))})
    if not errors and not rows:
        errors.append(_("the file has no bonus rows"))
    if not errors and len(studies) > 1:
        errors.append(
            _("the participants belong to several Prolific studies (%(which)s): one file per Prolific study")
            % {
                "which": "; ".join(
                    f"{ps.group or _('all groups')}: rows {', '.join(map(str, numbers))}"
                    for ps, numbers in studies.items()
                )
            }
        )
    if errors:
        raise BonusFileError(errors)
    rows.sort(key=lambda row: row["participant_id"])
    return {
        "prolific_study": next(iter(studies)),
        "rows": rows,
        "total": sum((Decimal(row["amount"]) for row in rows), Decimal("0")),
    }


def bonus_csv(rows: list[dict]) -> str:
    """Prolific's csv_bonuses: '<participant_id>,<amount>' lines, amounts in the major unit (no header)."""
    return csv_text(None, ([row["participant_id"], row["amount"]] for row in rows))


def bonus_batch_create(*, study: Study, file_or_text, user=None) -> BonusBatch:
    """Validate the file and create the bulk bonus record on Prolific (nothing is paid); the same file
    twice gives back the same batch."""
    checked = bonus_rows_validate(study=study, file_or_text=file_or_text)
    prolific_study, rows = checked["prolific_study"], checked["rows"]
    fingerprint = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    client = ProlificClient(study=study)
    try:
        with transaction.atomic():
            batch = BonusBatch.objects.create(
                prolific_study=prolific_study,
                rows=rows,
                fingerprint=fingerprint,
                amount=checked["total"],
                created_by=user,
            )
    except IntegrityError:
        batch = BonusBatch.objects.get(prolific_study=prolific_study, fingerprint=fingerprint)
    if batch.prolific_id:
        return batch
    # A bulk bonus record pays nothing: one created twice by a race or a retry is harmless, and
    # only the first one stored here can ever be paid.
    answer = client.post(
        "submissions/bonus-payments/",
        {"study_id": prolific_study.prolific_id, "csv_bonuses": bonus_csv(rows)},
        retry_unsafe=True,
    )
    if not isinstance(answer, dict) or not answer.get("id"):
        raise ProlificApiError(None, _("Prolific's answer to the bonus request has no id."))
    BonusBatch.objects.filter(pk=batch.pk, prolific_id="").update(
        prolific_id=answer["id"], **bonus_answer_money(answer, file_total=batch.amount)
    )
    batch.refresh_from_db()
    return batch


def bonus_answer_money(answer: dict, *, file_total: Decimal | None = None) -> dict:
    """A bulk bonus record's money as stored here, in the currency's major unit.

    Prolific answers ``amount``, ``fees``, ``vat`` and ``total_amount`` in the minor unit (its
    documentation: two bonuses of 4.25 answer ``"amount": 850, "fees": 283.34``; its own client
    divides by 100), while the csv it was sent is in the major unit. A field it leaves out is the
    file's total (``amount``), zero (``fees``, ``vat``) or their sum (``total_amount``).
    """
    amount = minor_to_major(answer.get("amount"))
    if amount is None:
        amount = file_total if file_total is not None else Decimal("0.00")
    fees = minor_to_major(answer.get("fees")) or Decimal("0.00")
    vat = minor_to_major(answer.get("vat")) or Decimal("0.00")
    total = minor_to_major(answer.get("total_amount"))
    return {
        "amount": amount,
        "fees": fees,
        "vat": vat,
        "total_amount": total if total is not None else amount + fees + vat,
    }


def minor_to_major(value) -> Decimal | None:
    """850 (pence) -> Decimal("8.50"); 283.34 -> 2.83 (Prolific's fee carries fractions of a penny). None when
    the value is missing or not a number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        minor = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    if not minor.is_finite():
        return None
    return (minor / 100).quantize(CENT, rounding=ROUND_HALF_UP)


def bonus_batch_pay(*, batch: BonusBatch) -> BonusBatch:
    """Pay a batch once, in this process (``prolific_bonus --pay``): the SENDING claim is committed before
    the pay request; a batch already SENDING or SENT is returned unchanged, never sent again.

    Call it outside any transaction: the claim must be committed before the request leaves.
    """
    return _pay(batch=batch, claimable=COMMAND_PAYABLE)


def _pay(*, batch: BonusBatch, claimable: tuple[str, ...]) -> BonusBatch:
    batch.refresh_from_db()
    if not batch.prolific_id:
        raise ProlificError(_("This bonus batch has no Prolific record yet: create it again from its file."))
    client = ProlificClient(study=batch.prolific_study.study)
    claimed = (
        BonusBatch.objects.filter(pk=batch.pk, status__in=claimable)
        .exclude(prolific_id="")
        .update(status=BonusBatchStatus.SENDING, sent_at=timezone.now(), error="")
    )
    if not claimed:
        batch.refresh_from_db()
        return batch
    try:
        # 429 is retried (Prolific refused before paying); a 5xx or a lost connection is not.
        client.post(f"bulk-bonus-payments/{batch.prolific_id}/pay/", None, retry_unsafe=False)
    except ProlificApiError as exc:
        if exc.definite:
            BonusBatch.objects.filter(pk=batch.pk, status=BonusBatchStatus.SENDING).update(
                status=BonusBatchStatus.FAILED, error=exc.message[:2000]
            )
        else:
            _answer_unknown(batch, str(exc))
        batch.refresh_from_db()
        raise
    except BaseException as exc:
        # A time limit or a shutdown while the request was out: it may have been paid.
        _answer_unknown(batch, type(exc).__name__)
        raise
    BonusBatch.objects.filter(pk=batch.pk, status=BonusBatchStatus.SENDING).update(status=BonusBatchStatus.SENT)
    batch.refresh_from_db()
    return batch


def _answer_unknown(batch: BonusBatch, error: str) -> None:
    BonusBatch.objects.filter(pk=batch.pk, status=BonusBatchStatus.SENDING).update(
        error=_(
            "The pay request got no clear answer (%(error)s): it may have been paid. Check the bonuses in "
            "Prolific's web app; this batch is never sent again from here."
        )
        % {"error": error}
    )


def bonus_batch_pay_request(*, batch: BonusBatch) -> bool:
    """Pay from the page: queue the batch for a worker's task (CREATED or FAILED -> QUEUED), sending nothing
    here. False when it was not payable (a double click or a second tab: already queued, sending or paid)."""
    if not batch.prolific_id:
        raise ProlificError(_("This bonus batch has no Prolific record yet: create it again from its file."))
    with transaction.atomic():
        queued = (
            BonusBatch.objects.filter(pk=batch.pk, status__in=PAYABLE)
            .exclude(prolific_id="")
            .update(status=BonusBatchStatus.QUEUED, queued_at=timezone.now(), error="")
        )
        if queued:
            transaction.on_commit(lambda: bonus_batch_pay_enqueue(batch.pk))
    batch.refresh_from_db()
    return bool(queued)


def bonus_batch_pay_enqueue(batch_id: int) -> None:
    from ..tasks import prolific_bonus_pay_task

    prolific_bonus_pay_task.delay(batch_id)


def bonus_batch_pay_queued(*, batch_id: int) -> BonusBatch | None:
    """The worker's side of ``bonus_batch_pay_request``: pays the batch if it is still QUEUED, once.

    Prolific's refusal, or an answer that never came, is recorded on the batch for the page, not raised.
    """
    batch = BonusBatch.objects.filter(pk=batch_id).select_related("prolific_study__study").first()
    if batch is None or batch.status != BonusBatchStatus.QUEUED:
        return batch
    try:
        return _pay(batch=batch, claimable=(BonusBatchStatus.QUEUED,))
    except ProlificNotConfigured as exc:
        # The worker's environment lacks the token the web server has: nothing was sent.
        BonusBatch.objects.filter(pk=batch.pk, status=BonusBatchStatus.QUEUED).update(
            status=BonusBatchStatus.FAILED, error=str(exc)
        )
    except ProlificError as exc:
        logger.warning("Prolific bonus batch %s: %s", batch.pk, exc)
    batch.refresh_from_db()
    return batch
