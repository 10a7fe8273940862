"""Annotation personas and objects built in code for the annotation tests.

Users hold their roles the way production gives them (groups, ``tests.conftest.make_user``).
Datasets go through the real corpus import, so keys, labels and metadata are stored exactly
as an upload stores them; suggestion sets and rounds go through their services, so a round
comes with its items and its annotators' assignments.

``CA_DAO`` is the labelled corpus behind the shared ``dataset`` fixture (tests/annotation/conftest.py);
``numbered_csv`` makes a corpus of any size whose content does not matter.
"""

import re
from html import unescape

from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import AnnotationRound, Assignment, Dataset, DatasetVersion, SuggestionSet
from annotation.services import (
    assignment_submit,
    expression_import,
    round_create,
    round_lock,
    suggested_codes,
    suggestion_set_create,
    version_freeze,
)
from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER
from tests.conftest import make_user

CA_DAO_ROWS = (
    "Ăn cháo đá bát,Vô ơn,idiom,pragmatic,criticism",
    "Ếch ngồi đáy giếng,Hiểu biết hẹp,idiom,pragmatic,criticism",
    "Tấc đất tấc vàng,Đất quý,proverb,uncommon_vocabulary,work_nature",
    "Xa mặt cách lòng,Xa nhau thì phai,idiom,,love",
    "Đồng cam cộng khổ,Chia sẻ,idiom,sino_vietnamese,social_relationships",
    "Có công mài sắt có ngày nên kim,Kiên trì,proverb,,life_lessons",
)
CA_DAO_HEADER = "expression,explanation,kind,traits,theme"
CA_DAO = CA_DAO_HEADER + "\n" + "".join(f"{row}\n" for row in CA_DAO_ROWS)


# --- Personas ---------------------------------------------------------------------------------


def make_researcher(username: str = "researcher", **extra):
    return make_user(username, RESEARCHER, **extra)


def make_annotator(username: str, **extra):
    return make_user(username, ANNOTATOR, **extra)


def make_adjudicator(username: str = "adjudicator", **extra):
    return make_user(username, ADJUDICATOR, **extra)


def add_role(user, role: str):
    """One more role for an existing persona (an annotator who also adjudicates, say)."""
    user.groups.add(Group.objects.get(name=role))
    return user


def client_for(user=None) -> Client:
    """A browser signed in as ``user`` (anonymous without one)."""
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def api_client_for(user=None, *, session: bool = True) -> APIClient:
    """An API client as ``user``: signed in with a session, or (``session=False``) authenticated directly."""
    client = APIClient()
    if user is not None:
        if session:
            client.force_login(user)
        else:
            client.force_authenticate(user)
    return client


def text_of(response) -> str:
    """A page's visible text, tags, scripts and styles removed and whitespace collapsed."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", response.content.decode(), flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


# --- Corpus -------------------------------------------------------------------------------------


def numbered_csv(n: int, *, text: str = "Câu số {n}", explanation: str = "Giải nghĩa {n}") -> str:
    """A corpus of ``n`` unlabelled expressions numbered from 0."""
    rows = "".join(f"{text.format(n=i)},{explanation.format(n=i)}\n" for i in range(n))
    return "expression,explanation\n" + rows


def make_dataset(
    *, name: str = "Ca dao", csv: str = CA_DAO, filename: str = "c.csv", user=None, description: str = ""
) -> Dataset:
    """A dataset imported from ``csv`` (the labelled Ca dao corpus unless told otherwise)."""
    expression_import(dataset_name=name, filename=filename, content=csv.encode(), user=user)
    dataset = Dataset.objects.get(name=name)
    if description:
        dataset.description = description
        dataset.save(update_fields=["description"])
    return dataset


def make_suggestions(
    dataset: Dataset, *, traits=("pragmatic",), name: str = "gpt", model_name: str = "gpt-4.1", raw: str = "raw"
) -> SuggestionSet:
    """A model's suggestions for every expression: ``traits`` (or ``traits(expression)``) for each."""
    predictions = [
        (e.pk, list(traits(e) if callable(traits) else traits), raw) for e in dataset.expressions.order_by("id")
    ]
    return suggestion_set_create(dataset=dataset, name=name, model_name=model_name, predictions=predictions)


def alternating_traits(expression) -> list[str]:
    """Suggestions that differ from item to item: one trait for odd ids, two for even ones."""
    return ["pragmatic"] if expression.pk % 2 else ["literal", "folk_knowledge"]


# --- Rounds and reviews -------------------------------------------------------------------------


def make_round(dataset: Dataset, annotators, *, name: str = "R1", seed: int = 7, **extra) -> AnnotationRound:
    """A round over ``dataset`` with its items handed out to ``annotators`` (two per item by default)."""
    return round_create(name=name, dataset=dataset, annotators=list(annotators), seed=seed, **extra)


def queue_of(round_: AnnotationRound, user) -> list[Assignment]:
    return list(Assignment.objects.filter(item__round=round_, annotator=user).order_by("position"))


def submit(assignment: Assignment, user, theme: str = "criticism", accept: bool = True, **extra) -> Assignment:
    """``user``'s answer: every suggested trait accepted (or rejected), and one theme."""
    decisions = {code: "accept" if accept else "reject" for code in suggested_codes(assignment.item)}
    return assignment_submit(assignment=assignment, user=user, theme=theme, trait_decisions=decisions, **extra)


def submit_disagreeing(round_: AnnotationRound, a, b) -> None:
    """``a`` answers their queue with four themes in turn; then ``b`` answers every item with another
    theme than ``a`` gave it: every shared item disagrees, so every pair window's kappa and the upper
    end of its interval are at most 0."""
    themes = ["love", "criticism", "other", "virtues"]
    given = {}
    for n, assignment in enumerate(queue_of(round_, a)):
        given[assignment.item_id] = themes[n % 4]
        submit(assignment, a, theme=given[assignment.item_id])
    for n, assignment in enumerate(queue_of(round_, b)):
        theme = themes[n % 4]
        if theme == given.get(assignment.item_id):
            theme = themes[(n + 1) % 4]
        submit(assignment, b, theme=theme)


def submit_all(round_: AnnotationRound, user, theme: str = "criticism") -> None:
    """``user`` answers every item of their queue the same way."""
    for assignment in Assignment.objects.filter(item__round=round_, annotator=user):
        submit(assignment, user, theme=theme)


def review_all(round_: AnnotationRound, annotator_a, annotator_b, disagree: int = 0) -> None:
    """Both annotators review every item; the first ``disagree`` items get different themes."""
    for n, item in enumerate(round_.items.order_by("id")):
        for assignment in item.assignments.select_related("annotator"):
            theme = "love" if (n < disagree and assignment.annotator == annotator_b) else "criticism"
            submit(assignment, assignment.annotator, theme=theme)


# The adjudication scenario: four items, two disputed, one unsure and flagged, one unanimous.
ADJUDICATION_CSV = (
    "expression,explanation\n"
    "Ăn quả nhớ kẻ trồng cây,Biết ơn người đi trước\n"
    "Có công mài sắt có ngày nên kim,Kiên trì thì thành công\n"
    "Nước chảy đá mòn,Bền bỉ thắng tất cả\n"
    "Gần mực thì đen,Môi trường ảnh hưởng con người\n"
)
A_NOTE = "A-secret-note-about-the-orchard"
B_NOTE = "B-secret-note-about-the-orchard"


def make_adjudication_round(annotator_a, annotator_b, researcher, *, lock: bool = True):
    """Four items: two disputed on theme/trait, one unsure and flagged, one unanimous.

    Returns the round and its items in queue order (by id).
    """
    dataset = make_dataset(name="Adjudication corpus", csv=ADJUDICATION_CSV)
    suggestions = make_suggestions(dataset, traits=("literal", "folk_knowledge"))
    round_ = make_round(
        dataset,
        [annotator_a, annotator_b],
        name="Adjudication round",
        suggestion_set=suggestions,
        user=researcher,
        seed=1,
    )
    items = list(round_.items.select_related("expression").order_by("id"))

    def answer(item, user, theme, decisions, **extra):
        assignment = item.assignments.get(annotator=user)
        assignment_submit(assignment=assignment, user=user, theme=theme, trait_decisions=decisions, **extra)

    both = {"literal": "accept", "folk_knowledge": "accept"}
    # Disputed: theme and folk knowledge differ; both notes are secret until the lock.
    answer(items[0], annotator_a, "love", {"literal": "accept", "folk_knowledge": "reject"}, note=A_NOTE)
    answer(items[0], annotator_b, "virtues", both, note=B_NOTE)
    # Same theme, but B is unsure of one trait and flags the item.
    answer(items[1], annotator_a, "love", both)
    answer(items[1], annotator_b, "love", {"literal": "accept", "folk_knowledge": "unsure"}, flagged=True)
    # Unanimous: accepted automatically, never in the queue.
    answer(items[2], annotator_a, "criticism", both)
    answer(items[2], annotator_b, "criticism", both)
    # A adds a trait the LLM missed.
    answer(items[3], annotator_a, "other", both, added_traits=["pragmatic"])
    answer(items[3], annotator_b, "other", both)
    if lock:
        round_lock(round=round_)
    for item in items:
        item.refresh_from_db()
    return round_, items


def make_version(round_: AnnotationRound, *annotators, name: str = "v1", user=None) -> DatasetVersion:
    """A frozen version of ``round_`` after every annotator agreed on every item."""
    for annotator in annotators:
        submit_all(round_, annotator)
    round_lock(round=round_)
    return version_freeze(round=round_, name=name, user=user)
