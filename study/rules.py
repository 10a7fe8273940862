"""The rules of a session and a study, as pure functions of their stored fields: whether a study
takes answers or may still change its stimuli, when an unfinished session counts as returned, which
ids come from Prolific, which redirect ends a session, which translation a group reads, which
consent details a package leaves out.

No query and no write: the selectors and services decide by these, and the results count by
the same rules the participant flow applies.
"""

import re
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.urls import Resolver404, resolve
from django.utils import timezone

from .models import TRANSLATION, Culture, Participant, ParticipantStatus, Study, StudyStatus

UNFINISHED = (ParticipantStatus.ENTERED, ParticipantStatus.IN_PROGRESS)
FINISHED = (ParticipantStatus.COMPLETED, ParticipantStatus.EXCLUDED_QC, ParticipantStatus.NO_CONSENT)

# A session has sent its first page of answers once past the instructions (step 0) and the first
# artwork page (step 1) that consent puts first in its plan.
FIRST_ANSWER_STEP = 2

# Only while a study is a draft or paused may its stimuli (pairs, terms, glosses) change: never
# under a running session.
STIMULI_EDITABLE = (StudyStatus.DRAFT, StudyStatus.PAUSED)

# The package translation each group reads; English needs none.
GROUP_TRANSLATIONS = {Culture.CHINESE: TRANSLATION}

# Prolific's PROLIFIC_PID, STUDY_ID and SESSION_ID (the submission's id) are 24 hexadecimal digits
# (MongoDB object ids). Any other value did not come from Prolific: refused before a session exists.
PROLIFIC_ID_PATTERN = re.compile(r"^[0-9a-fA-F]{24}$")


def prolific_id_valid(value: str) -> bool:
    return bool(PROLIFIC_ID_PATTERN.match(value or ""))


def study_stimuli_editable(study: Study) -> bool:
    return study.status in STIMULI_EDITABLE


def group_translation(group: str) -> str | None:
    """The package translation a group's participants read, if any (the pages and the launch checklist)."""
    return GROUP_TRANSLATIONS.get(group)


def study_open_to(study: Study, *, is_test: bool) -> bool:
    """Live studies take everyone; test responses may also be generated before launch or while paused."""
    if study.status == StudyStatus.LIVE:
        return True
    return is_test and study.status in (StudyStatus.DRAFT, StudyStatus.PAUSED)


def participant_accepts_answers(participant: Participant) -> bool:
    return participant.is_preview or study_open_to(participant.study, is_test=participant.is_test)


def participant_abandon_cutoff():
    """Unfinished sessions with answers not seen since this moment count as returned (STUDY_ABANDON_MINUTES)."""
    return timezone.now() - timedelta(minutes=settings.STUDY_ABANDON_MINUTES)


def participant_hold_cutoff():
    """Unfinished sessions without answers not seen since this moment count as returned (STUDY_HOLD_MINUTES):
    a place taken by a consent alone is held only that long."""
    return timezone.now() - timedelta(minutes=min(settings.STUDY_HOLD_MINUTES, settings.STUDY_ABANDON_MINUTES))


def participant_idle_after(*, step_index: int) -> timedelta:
    """How long an unfinished session at ``step_index`` may stay unseen before it counts as returned."""
    minutes = settings.STUDY_ABANDON_MINUTES
    if step_index < FIRST_ANSWER_STEP:
        minutes = min(minutes, settings.STUDY_HOLD_MINUTES)
    return timedelta(minutes=minutes)


def participant_counted_returned(*, participant: Participant) -> bool:
    """Whether the results count this unfinished session as returned (idle past STUDY_HOLD_MINUTES before
    its first answers, STUDY_ABANDON_MINUTES after)."""
    return (
        participant.status in UNFINISHED
        and participant.last_seen_at is not None
        and participant.last_seen_at + participant_idle_after(step_index=participant.step_index) < timezone.now()
    )


def finish_url_leaves_study(url: str) -> bool:
    """Whether a redirect is a finish: Prolific's completion URL or the local done page."""
    parts = urlsplit(url)
    if url.startswith(settings.PROLIFIC_COMPLETE_URL.split("{code}", 1)[0]) or parts.netloc.endswith("prolific.com"):
        return True
    try:
        return resolve(parts.path).view_name == "study:done"
    except Resolver404:
        return False


# The consent page details a package should give (the launch checklist warns of each one missing).
CONSENT_FIELDS = ("consent", "estimated_minutes", "reward", "contact", "ethics_reference")


def study_consent_missing(study: Study) -> list[str]:
    """The consent page details the package leaves out; participants and ethics boards expect each of them."""
    package = study.package if isinstance(study.package, dict) else {}
    return [field for field in CONSENT_FIELDS if not package.get(field)]
