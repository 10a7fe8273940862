"""The steps of a session: the keys of ``Participant.plan``, the page a participant is on, and the
order a participant sees a page's choices in.

Pure functions of a participant's stored fields: no query, no write. The selectors, the
services that store a page and the pages that draw it all read a step the same way here.
"""

import random
from dataclasses import dataclass

from .models import Artwork, Participant, ParticipantStatus


@dataclass(frozen=True)
class Step:
    key: str
    kind: str  # group | consent | instructions | symbols | qa | post_symbols | post_qa | compare | done
    order: int | None = None  # the assignment's order for artwork steps


def step_parse(key: str) -> Step:
    if ":" in key:
        order, kind = key.split(":", 1)
        return Step(key=key, kind=kind, order=int(order))
    return Step(key=key, kind=key)


def participant_step(participant: Participant) -> Step:
    """The page this participant is on now."""
    if participant.status in (ParticipantStatus.COMPLETED, ParticipantStatus.EXCLUDED_QC):
        return Step(key="done", kind="done")
    if participant.status == ParticipantStatus.NO_CONSENT:
        return Step(key="declined", kind="declined")
    if not participant.group:
        return Step(key="group", kind="group")
    if not participant.plan:
        return Step(key="consent", kind="consent")
    if participant.step_index >= len(participant.plan):
        return Step(key="finish", kind="finish")
    return step_parse(participant.plan[participant.step_index])


def question_options(*, participant: Participant, question) -> list[str]:
    """The answer and its distractors in this participant's own order, the same on every visit."""
    options = [question.answer, *question.distractors]
    random.Random(f"{participant.seed}:{question.pk}").shuffle(options)
    return options


def element_order(*, participant: Participant, artwork: Artwork) -> list[str]:
    names = [element["name"] for element in artwork.elements]
    random.Random(f"{participant.seed}:elements:{artwork.pk}").shuffle(names)
    return names
