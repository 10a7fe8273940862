"""Consent: the group a participant belongs to, and the consent that fixes the session (quota place and draw)."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from ...models import Assignment, Participant, ParticipantStatus, Study
from ...selectors.participants import participant_fresh, participant_places_taken, participant_step
from .assignment import assignments_draw
from .entry import EntryError, participants_mark_returned, study_open_to
from .steps import StaleStep, StepError, page_visit_submitted, step_require_current


def group_choose(*, participant: Participant, group: str) -> Participant:
    step_require_current(participant=participant, step_key="group")
    if group not in participant.study.groups:
        raise StepError({"group": gettext_noop("Choose one of the listed groups.")})
    Participant.objects.filter(pk=participant.pk, group="").update(group=group, last_seen_at=timezone.now())
    page_visit_submitted(participant=participant, step_key="group")
    return participant_fresh(participant=participant)


def consent_decline(*, participant: Participant) -> Participant:
    step_require_current(participant=participant, step_key="consent")
    Participant.objects.filter(pk=participant.pk, status=ParticipantStatus.ENTERED, plan=[]).update(
        status=ParticipantStatus.NO_CONSENT, finished_at=timezone.now()
    )
    page_visit_submitted(participant=participant, step_key="consent")
    return participant_fresh(participant=participant)


def consent_give(*, participant: Participant) -> Participant:
    """Consent fixes the session: a quota place, the artworks, the descriptions and the sides."""
    step_require_current(participant=participant, step_key="consent")
    study = participant.study
    counted = not participant.is_preview and not participant.is_test
    if counted:
        participants_mark_returned(study=study)
    # The draw reads exposure counts outside the lock: arrivals queue only for the quota check
    # and the inserts, a few milliseconds, not for the whole draw. Two simultaneous arrivals
    # may draw from the same counts; the next ones even it out.
    assignments, plan = assignments_draw(participant=participant, study=study)
    with transaction.atomic():
        if counted:
            # One arrival at a time per study, so two arrivals cannot both take the last place.
            study = Study.objects.select_for_update().get(pk=study.pk)
        participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        if participant.plan:
            raise StaleStep(participant_step(participant))
        if not participant.is_preview:
            if not study_open_to(study, is_test=participant.is_test):
                raise EntryError(study.status)
            if counted and participant_places_taken(study=study, group=participant.group) >= study.quota_per_group:
                raise EntryError("full")
        for assignment in assignments:
            assignment.participant = participant
        Assignment.objects.bulk_create(assignments)
        participant.plan = ["instructions", *plan]
        participant.step_index = 0
        participant.status = ParticipantStatus.IN_PROGRESS
        participant.consented_at = timezone.now()
        participant.last_seen_at = participant.consented_at
        participant.save(update_fields=["plan", "step_index", "status", "consented_at", "last_seen_at"])
    page_visit_submitted(participant=participant, step_key="consent")
    return participant
