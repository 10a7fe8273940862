"""The study's own wording: the questions of Pragmatics Meets Culture as participants read them.

Translatable (the Chinese group reads them in Simplified Chinese); the msgids are the paper's
text, so a change here is a change to the study, not to a page.
"""

from django.utils.translation import gettext_lazy

from .models import Criterion

CONFIDENCE_SCALE = [
    ("1", gettext_lazy("Not confident at all")),
    ("2", gettext_lazy("Slightly confident")),
    ("3", gettext_lazy("Moderately confident")),
    ("4", gettext_lazy("Very confident")),
    ("5", gettext_lazy("Completely confident")),
]
# The exact questions of the paper's section 5.2.
CRITERIA = [
    (
        Criterion.COMPREHENSION,
        gettext_lazy(
            "Comprehension: which description better helps you understand the main meaning of the artwork "
            "(and its symbolism)?"
        ),
    ),
    (
        Criterion.KNOWLEDGE_GAIN,
        gettext_lazy(
            "Knowledge gain: which description provides more explanation of cultural symbols in the artwork "
            "that you did not already know?"
        ),
    ),
    (
        Criterion.PRIOR_KNOWLEDGE,
        gettext_lazy(
            "Prior knowledge: which description provides more explanation of cultural symbols in the artwork "
            "that you were already familiar with?"
        ),
    ),
]
