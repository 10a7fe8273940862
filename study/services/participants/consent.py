"""Consent: the group a participant belongs to, and the consent that fixes the session (quota place and draw)."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from ...models import Assignment, Participant, ParticipantStatus
from ...rules import study_open_to
from ...selectors.participants import participant_fresh, participant_places_taken, study_admission
from ...steps import participant_step
from ..results import study_results_changed
from .assignment import assignments_draw
from .entry import EntryError, participants_mark_returned, quota_lock
from .steps import StaleStep, StepError, page_visit_submitted, step_require_current


def group_choose(*, participant: Participant, group: str) -> Participant:
    step_require_current(participant=participant, step_key="group")
    if group not in participant.study.groups:
        raise StepError({"group": gettext_noop("Choose one of the listed groups.")})
    Participant.objects.filter(pk=participant.pk, group="").update(group=group, last_seen_at=timezone.now())
    page_visit_submitted(participant=participant, step_key="group", next_key="consent")
    study_results_changed(study_id=participant.study_id)
    return participant_fresh(participant=participant)


def consent_decline(*, participant: Participant) -> Participant:
    step_require_current(participant=participant, step_key="consent")
    Participant.objects.filter(pk=participant.pk, status=ParticipantStatus.ENTERED, plan=[]).update(
        status=ParticipantStatus.NO_CONSENT, finished_at=timezone.now()
    )
    page_visit_submitted(participant=participant, step_key="consent")
    study_results_changed(study_id=participant.study_id)
    return participant_fresh(participant=participant)


def consent_give(*, participant: Participant) -> Participant:
    """Consent fixes the session: a quota place, the artworks, the descriptions and the sides."""
    step_require_current(participant=participant, step_key="consent")
    study = participant.study
    counted = not participant.is_preview and not participant.is_test
    if counted:
        participants_mark_returned(study=study)
    # The draw reads exposure counts outside any lock: two simultaneous arrivals may draw from
    # the same counts; the next ones even it out.
    assignments, plan = assignments_draw(participant=participant, study=study)
    now = timezone.now()
    with transaction.atomic():
        # The session's claim and its rows come first, in parallel with other arrivals: nobody
        # else sees them before the commit. The claim's row lock turns a double click away.
        claimed = Participant.objects.filter(
            pk=participant.pk, plan=[], status__in=(ParticipantStatus.ENTERED, ParticipantStatus.RETURNED)
        ).update(
            plan=["instructions", *plan],
            step_index=0,
            status=ParticipantStatus.IN_PROGRESS,
            consented_at=now,
            last_seen_at=now,
        )
        if not claimed:
            raise StaleStep(participant_step(participant_fresh(participant=participant)))
        for assignment in assignments:
            assignment.participant = participant
        Assignment.objects.bulk_create(assignments)
        # Before the lock, in the transaction: one commit for the whole consent.
        page_visit_submitted(participant=participant, step_key="consent", next_key="instructions")
        if not participant.is_preview:
            # As stored now: a researcher may have paused the study or changed its quota meanwhile.
            study = study_admission(study=study)
            if not study_open_to(study, is_test=participant.is_test):
                raise EntryError(study.status)
        if counted:
            # Only the count waits for other arrivals, and only those of the same group: under the
            # lock it sees every place taken by an earlier holder (committed) and this session's
            # own claim, so it may not exceed the quota. Too many: the rollback undoes the claim.
            quota_lock(study=study, group=participant.group)
            if participant_places_taken(study=study, group=participant.group) > study.quota_per_group:
                raise EntryError("full")
        study_results_changed(study_id=participant.study_id)
    participant.plan = ["instructions", *plan]
    participant.step_index = 0
    participant.status = ParticipantStatus.IN_PROGRESS
    participant.consented_at = participant.last_seen_at = now
    return participant
