"""Steps: a page shown, and a page's answers stored in the transaction that moves the participant on."""

from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from ...forms import form_value, form_values
from ...models import Answer, Assignment, Criterion, PageVisit, Participant, Phase, Preference, Side
from ...rules import UNFINISHED, participant_counted_returned
from ...selectors.participants import assignment_for_step, participant_fresh
from ...steps import Step, participant_step, question_options
from ..results import study_results_changed
from .finish import participant_score


class StepError(ValueError):
    """A page's answers are incomplete or invalid; ``errors`` maps field names to messages."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


class StaleStep(Exception):
    """The page submitted is not the participant's current page (another tab or a replay): nothing is stored."""

    def __init__(self, current: Step):
        super().__init__(current.key)
        self.current = current


def participant_touch(*, participant: Participant, step: Step) -> None:
    """Record that a page was shown: the first view starts its timer, later views are counted."""
    now = timezone.now()
    # last_seen_at only drives the abandon timeout (minutes): a write per page view is not needed.
    if participant.last_seen_at is None or now - participant.last_seen_at > timedelta(seconds=30):
        Participant.objects.filter(pk=participant.pk).update(last_seen_at=now)
        # A view changes the results only when it brings back a session the abandon rule counted
        # as returned; the visit's row below is not in them until the page is submitted.
        if participant_counted_returned(participant=participant):
            study_results_changed(study_id=participant.study_id)
    # One statement whatever the history of the page (SQLite and PostgreSQL share this upsert syntax).
    table = PageVisit._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (participant_id, step, shown_at, views) VALUES (%s, %s, %s, 1) "
            f"ON CONFLICT (participant_id, step) DO UPDATE SET views = {table}.views + 1",
            [participant.pk, step.key, now],
        )


def page_visit_submitted(*, participant: Participant, step_key: str, next_key: str | None = None) -> None:
    """Stop the timer of a page (its answers were sent) and start the next page's, in one statement.

    A page sent without ever being shown (a replayed form) gets a zero-length visit; a page
    sent twice keeps its first time. The next page counts one more view, as a page shown does.
    """
    now = timezone.now()
    rows = [(participant.pk, step_key, now, now, 1)]
    if next_key is not None:
        rows.append((participant.pk, next_key, now, None, 1))
    table = PageVisit._meta.db_table
    values = ", ".join(["(%s, %s, %s, %s, %s)"] * len(rows))
    # Both upserts of a POST in one round trip (SQLite and PostgreSQL share the syntax).
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (participant_id, step, shown_at, submitted_at, views) VALUES {values} "
            f"ON CONFLICT (participant_id, step) DO UPDATE SET "
            f"submitted_at = COALESCE({table}.submitted_at, excluded.submitted_at), "
            f"views = {table}.views + CASE WHEN excluded.submitted_at IS NULL THEN 1 ELSE 0 END",
            [value for row in rows for value in row],
        )


def step_require_current(*, participant: Participant, step_key: str) -> Step:
    """The participant's current step, if it is ``step_key``; StaleStep otherwise."""
    step = participant_step(participant)
    if step.key != step_key:
        raise StaleStep(step)
    return step


def _claim(participant: Participant, step: Step) -> bool:
    """Move the participant past ``step`` if it is still the current one; False if another request did."""
    if step.kind == "group":
        return bool(Participant.objects.filter(pk=participant.pk, group="").update(last_seen_at=timezone.now()))
    index = participant.plan.index(step.key) if step.key in participant.plan else -1
    if index < 0:
        return False
    return bool(
        Participant.objects.filter(pk=participant.pk, step_index=index, status__in=UNFINISHED).update(
            step_index=index + 1, last_seen_at=timezone.now()
        )
    )


def step_submit(*, participant: Participant, step_key: str, data) -> Participant:
    """Store the answers of one page and move on. ``data`` is the page's POST data (a QueryDict or a dict of lists).

    The page the participant is on afterwards is counted as shown (like consent_give and
    group_choose): the view that answers with it does not touch it again.

    Raises StaleStep when the page is not the current one (nothing stored) and StepError
    when answers are missing (nothing stored).
    """
    step = step_require_current(participant=participant, step_key=step_key)
    if step.kind == "instructions":
        writes = _nothing
    elif step.kind in HANDLERS:
        assignment = assignment_for_step(participant=participant, order=step.order)
        writes = HANDLERS[step.kind](participant, assignment, step, data)
    else:
        raise StaleStep(step)
    index = participant.plan.index(step.key)
    last = index + 1 == len(participant.plan)
    with transaction.atomic():
        if not _claim(participant, step):
            raise StaleStep(participant_step(participant_fresh(participant=participant)))
        writes()
        if last:
            participant_score(participant=participant)
        # In the same transaction: one commit per page, not three. The next page is the one
        # this request shows, so its view is counted here too.
        page_visit_submitted(
            participant=participant, step_key=step.key, next_key=None if last else participant.plan[index + 1]
        )
        study_results_changed(study_id=participant.study_id)
    if last:
        participant = participant_fresh(participant=participant)
        step = participant_step(participant)
        if step.order is not None:
            # The score found a page without its answers: that page is shown again.
            participant_touch(participant=participant, step=step)
        return participant
    # The claim moved the session exactly one step on; no need to read it back.
    participant.step_index = index + 1
    return participant


def _submit_symbols(participant, assignment, step, data):
    names = {element["name"] for element in assignment.artwork.elements}
    picked = form_values(data, "symbols")
    none = form_value(data, "none") == "1"
    unknown = [name for name in picked if name not in names]
    if unknown:
        raise StepError({"symbols": gettext_noop("Unknown element.")})
    if not picked and not none:
        raise StepError({"symbols": gettext_noop("Select the culture symbols you see, or tick “None of these”.")})
    if picked and none:
        raise StepError({"symbols": gettext_noop("Either select symbols or tick “None of these”, not both.")})
    ordered = [element["name"] for element in assignment.artwork.elements if element["name"] in picked]
    field = "symbols_pre" if step.kind == "symbols" else "symbols_post"

    def writes():
        Assignment.objects.filter(pk=assignment.pk).update(**{field: ordered})
        # The copy this request may show next (the description page locks these symbols).
        setattr(assignment, field, ordered)

    return writes


def _submit_qa(participant, assignment, step, data):
    phase = Phase.PRE if step.kind == "qa" else Phase.POST
    errors: dict[str, str] = {}
    rows = []
    for question in assignment.artwork.questions.all():
        options = question_options(participant=participant, question=question)
        choice = form_value(data, f"q{question.pk}-choice")
        confidence = form_value(data, f"q{question.pk}-confidence")
        knew = form_value(data, f"q{question.pk}-knew")
        if choice not in options:
            errors[f"q{question.pk}-choice"] = gettext_noop("Choose an answer.")
        if confidence not in {"1", "2", "3", "4", "5"}:
            errors[f"q{question.pk}-confidence"] = gettext_noop("Say how confident you are.")
        # Asked only where the question names a symbol; elsewhere it stays unanswered (null), not "no".
        if question.symbol and knew not in {"yes", "no"}:
            errors[f"q{question.pk}-knew"] = gettext_noop("Say whether you knew this before.")
        rows.append((question, options, choice, confidence, knew))
    if errors:
        raise StepError(errors)

    def writes():
        Answer.objects.bulk_create(
            [
                Answer(
                    assignment=assignment,
                    question=question,
                    phase=phase,
                    options=options,
                    choice=choice,
                    is_correct=choice == question.answer,
                    confidence=int(confidence),
                    knew_before=(knew == "yes") if question.symbol else None,
                )
                for question, options, choice, confidence, knew in rows
            ]
        )

    return writes


def _submit_compare(participant, assignment, step, data):
    errors = {}
    choices = {}
    for criterion in Criterion.values:
        side = form_value(data, criterion)
        if side not in Side.values:
            errors[criterion] = gettext_noop("Choose the left or the right description.")
        choices[criterion] = side
    if errors:
        raise StepError(errors)

    def writes():
        Preference.objects.bulk_create(
            [
                Preference(
                    assignment=assignment,
                    criterion=criterion,
                    side=side,
                    chosen=assignment.left if side == Side.LEFT else assignment.right,
                )
                for criterion, side in choices.items()
            ]
        )

    return writes


def _nothing():
    pass


HANDLERS = {
    "symbols": _submit_symbols,
    "post_symbols": _submit_symbols,
    "qa": _submit_qa,
    "post_qa": _submit_qa,
    "compare": _submit_compare,
}
