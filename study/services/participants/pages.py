"""Pages: what a participant's request to the run page does, apart from drawing it.

The run view (``study.views.participant``) draws what these return; synthetic participants
(``study.services.simulation``) read the same answer without a template, so both go through
exactly the same services in the same order.
"""

from dataclasses import dataclass

from django.utils.translation import gettext_noop

from ...forms import form_value
from ...models import Participant, ParticipantStatus
from ...rules import FINISHED, UNFINISHED, participant_accepts_answers
from ...steps import Step, participant_step
from .consent import consent_decline, consent_give, group_choose
from .entry import EntryError
from .finish import participant_finish
from .steps import StaleStep, StepError, participant_touch, step_submit


@dataclass(frozen=True)
class PageOutcome:
    """What the request ends in: a step's page (``step``, with ``errors`` and the ``values`` sent
    when answers were refused), a message page (``message``: a reason of the entry messages or a
    study status), the finish (``finished``: Prolific's redirect), or the run page again (``again``)."""

    participant: Participant
    step: Step | None = None
    status: int = 200
    errors: dict | None = None
    values: object = None
    message: str = ""
    finished: bool = False
    again: bool = False


def participant_page_show(*, participant: Participant) -> PageOutcome:
    """A GET of the run page: the current page, counted as shown."""
    if participant.status == ParticipantStatus.UNVERIFIED:
        return PageOutcome(participant, message="unverified", status=403)
    if participant.status in UNFINISHED and not participant_accepts_answers(participant):
        # Paused or closed: answers so far are kept; the participant may come back when it is live again.
        return PageOutcome(participant, message=participant.study.status)
    step = participant_step(participant)
    if step.kind == "finish":
        participant = participant_finish(participant=participant)
        step = participant_step(participant)
    if step.kind in ("done", "declined"):
        return PageOutcome(participant, finished=True)
    participant_touch(participant=participant, step=step)
    return PageOutcome(participant, step=step)


def participant_page_submit(*, participant: Participant, data) -> PageOutcome:
    """A POST of the run page: store the page's answers, then the page that comes next.

    ``data`` is the form as sent (a QueryDict, or a dict of lists). The next page comes in the
    same answer, not after a redirect; the service that stored the page has counted it as shown.
    """
    step_key = form_value(data, "step")
    if participant.status == ParticipantStatus.UNVERIFIED:
        # Released and left out of the results: nothing it sends is stored.
        return PageOutcome(participant, message="unverified", status=403)
    try:
        if step_key == "group":
            participant = group_choose(participant=participant, group=form_value(data, "group"))
        elif step_key == "consent":
            consent = form_value(data, "consent")
            if consent == "yes":
                participant = consent_give(participant=participant)
            elif consent == "no":
                participant = consent_decline(participant=participant)
            else:
                raise StepError({"consent": gettext_noop("Please choose whether you agree to take part.")})
        else:
            if participant.status in UNFINISHED and not participant_accepts_answers(participant):
                return PageOutcome(participant, message=participant.study.status)
            participant = step_submit(participant=participant, step_key=step_key, data=data)
    except StaleStep:
        # Another tab or a double click already stored this page: show the current page, store nothing.
        return PageOutcome(participant, again=True)
    except EntryError as exc:
        return PageOutcome(participant, message=exc.reason, status=403)
    except StepError as exc:
        return PageOutcome(participant, step=participant_step(participant), errors=exc.errors, values=data, status=422)
    if participant.status in FINISHED:
        return PageOutcome(participant, finished=True)
    return PageOutcome(participant, step=participant_step(participant))
