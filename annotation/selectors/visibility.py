"""Who may see what: the blindness rule in one place, for pages, fragments, the API and exports.

Two rules, both about annotators:

* While a round is open, a person who annotates it learns nothing about how
  the others labelled it: no funnel (its ``needs_adjudication`` count tells,
  after each submit, whether the other annotator agreed), no statistics, no
  adjudication data, nobody else's progress. This holds whatever other roles
  they hold: the README recommends that annotators adjudicate together, and a
  researcher may annotate their own round.
* The gold traits and theme of a dataset are hidden from a person whose only
  role is Annotator, and from anyone while they annotate an open round, on every
  channel (dataset page, expressions API, exports, round filters), since they are
  the answers annotators are asked to give.
"""

from core.roles import ADJUDICATOR, RESEARCHER, has_role

from ..models import AnnotationRound, RoundStatus

# Field names of the gold labels in serialised expressions, and keys of a round's item filter.
GOLD_KEYS = ("traits", "theme")
GOLD_FILTER_KEYS = ("trait", "theme")


def round_annotated_by(*, round: AnnotationRound, user) -> bool:
    if not user.is_authenticated:
        return False
    return round.annotators.filter(pk=user.pk).exists()


def round_blind_for(*, round: AnnotationRound, user) -> bool:
    """True while ``user`` annotates ``round`` and the round is still open."""
    return round.status == RoundStatus.OPEN and round_annotated_by(round=round, user=user)


def round_overview_visible(*, round: AnnotationRound, user) -> bool:
    """The funnel, everyone's progress, the statistics and the adjudication counts of a round."""
    return has_role(user, RESEARCHER, ADJUDICATOR) and not round_blind_for(round=round, user=user)


def round_seed_visible(*, round: AnnotationRound, user, annotated: set[int] | None = None) -> bool:
    """Whether ``user`` may read the round's seed: it lays every queue out again, controls and hidden
    suggestions included, so nobody reads it who annotates the round before it is frozen (an
    annotator would find their controls as the items the seed does not put in their queue).
    ``annotated``: the rounds the reader annotates, when a list has read them once for all rounds."""
    if not has_role(user, RESEARCHER, ADJUDICATOR):
        return False
    if round.status == RoundStatus.FROZEN:
        return True
    if annotated is None:
        return not round_annotated_by(round=round, user=user)
    return round.pk not in annotated


def blind_round_ids(*, user) -> set[int]:
    """The open rounds ``user`` annotates, for list pages that show many rounds at once."""
    if not user.is_authenticated:
        return set()
    return set(user.annotation_rounds.filter(status=RoundStatus.OPEN).values_list("pk", flat=True))


def gold_labels_visible(*, user) -> bool:
    # An adjudicator or researcher who annotates an open round would otherwise read the answers
    # of that round's items on the dataset page: they see no gold labels until it is locked.
    return has_role(user, RESEARCHER, ADJUDICATOR) and not blind_round_ids(user=user)


def item_filter_visible(*, item_filter: dict, user, gold: bool | None = None) -> dict:
    """A round's item filter without the gold-label keys for someone who may not see gold labels:
    "theme: love" would tell an annotator the gold theme of every item of the round. ``gold``: the
    reader's ``gold_labels_visible``, when a list of rounds has read it once for all of them."""
    if gold_labels_visible(user=user) if gold is None else gold:
        return dict(item_filter or {})
    return {key: value for key, value in (item_filter or {}).items() if key not in GOLD_FILTER_KEYS}


__all__ = [
    "GOLD_FILTER_KEYS",
    "GOLD_KEYS",
    "blind_round_ids",
    "gold_labels_visible",
    "item_filter_visible",
    "round_annotated_by",
    "round_blind_for",
    "round_overview_visible",
    "round_seed_visible",
]
