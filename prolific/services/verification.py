"""Sessions Prolific does not know: an entry link anyone can type is checked against Prolific's own list.

Prolific lists a submission from the moment its participant starts the study there, before our link
opens, so a consented session whose PROLIFIC_PID and SESSION_ID no submission carries once
PROLIFIC_VERIFY_SECONDS have passed was not opened from Prolific: a script took a place with made-up
ids. The sync releases such sessions and the results leave them out (study's
``participants_exclude_unverified``). Only after a complete listing of every Prolific study of the
local study, and only for the groups those Prolific studies recruit.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef

from study.models import Participant, Study
from study.services.participants import participants_exclude_unverified

from ..models import ProlificStudy, ProlificSubmission


def prolific_sessions_verify(*, study: Study, listed_from) -> int:
    """Release the study's consented sessions that no submission listed from ``listed_from`` on carries,
    if they consented PROLIFIC_VERIFY_SECONDS before it; the number released.

    ``listed_from``: when the listing of every submission of the study's Prolific studies began.
    """
    published = list(ProlificStudy.objects.filter(study=study).exclude(prolific_id="").values_list("group", flat=True))
    if not published:
        return 0
    known = ProlificSubmission.objects.filter(
        prolific_study__study=study,
        submission_id=OuterRef("prolific_session_id"),
        prolific_pid=OuterRef("prolific_pid"),
    )
    candidates = Participant.objects.filter(
        study=study,
        is_preview=False,
        is_test=False,
        consented_at__lte=listed_from - timedelta(seconds=settings.PROLIFIC_VERIFY_SECONDS),
    ).exclude(Exists(known))
    if "" not in published:
        # One Prolific study per group: a group without one is recruited elsewhere, not checked here.
        candidates = candidates.filter(group__in=published)
    return participants_exclude_unverified(study=study, participant_ids=candidates.values_list("pk", flat=True))
