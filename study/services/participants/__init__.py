"""A participant's way through a study: entry, consent, assignment, each page's answers, the finish.

Every page is a step of ``Participant.plan``. A page's answers are stored in the same
transaction that claims the step (``step_index`` moves on only if it still points at
that step), so a double submit, a second tab or a replayed back-button form stores
nothing twice and overwrites nothing.

- ``entry``: the Prolific link starts or resumes a session, previews, synthetic entry tokens;
- ``consent``: the group choice and the consent that fixes the session;
- ``assignment``: the draw of artworks, descriptions and sides;
- ``steps``: a page shown, a page's answers stored;
- ``finish``: the quality-control score and Prolific's redirect (or the local done page);
- ``pages``: what a request to the run page does with these, apart from drawing the page.
"""

from .assignment import ARTWORK_STEPS, assignments_draw
from .consent import consent_decline, consent_give, group_choose
from .entry import (
    SYNTHETIC_ENTRY_SALT,
    VERIFIABLE,
    EntryError,
    entry_refusal_status,
    participant_enter,
    participant_release,
    participants_exclude_unverified,
    participants_mark_returned,
    preview_start,
    prolific_id_for,
    quota_lock,
    synthetic_entry_token,
    synthetic_entry_token_valid,
)
from .finish import (
    finish_code_status,
    participant_finish,
    participant_finish_url,
    participant_score,
    prolific_complete_url,
)
from .pages import PageOutcome, participant_page_show, participant_page_submit
from .steps import (
    HANDLERS,
    StaleStep,
    StepError,
    page_visit_submitted,
    participant_touch,
    step_require_current,
    step_submit,
)

__all__ = [
    "ARTWORK_STEPS",
    "EntryError",
    "HANDLERS",
    "PageOutcome",
    "SYNTHETIC_ENTRY_SALT",
    "StaleStep",
    "StepError",
    "VERIFIABLE",
    "assignments_draw",
    "consent_decline",
    "consent_give",
    "entry_refusal_status",
    "finish_code_status",
    "group_choose",
    "page_visit_submitted",
    "participant_enter",
    "participant_finish",
    "participant_finish_url",
    "participant_page_show",
    "participant_page_submit",
    "participant_release",
    "participant_score",
    "participant_touch",
    "participants_exclude_unverified",
    "participants_mark_returned",
    "preview_start",
    "prolific_complete_url",
    "prolific_id_for",
    "quota_lock",
    "step_require_current",
    "step_submit",
    "synthetic_entry_token",
    "synthetic_entry_token_valid",
]
