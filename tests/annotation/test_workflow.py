"""The validation workflow at the service level: rounds, review, disagreement, adjudication, freeze."""

import itertools
from collections import Counter

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation.models import (
    AssignmentStatus,
    DatasetVersionItem,
    ItemStatus,
    LabelChange,
    RoundStatus,
)
from annotation.selectors import annotator_next, annotator_progress, item_history, round_funnel
from annotation.services import (
    ConflictError,
    adjudication_remove,
    adjudication_resolve,
    assignment_draft_save,
    assignment_skip,
    assignment_submit,
    round_create,
    round_lock,
    version_freeze,
)
from tests.conftest import make_user

from .factories import alternating_traits, make_dataset, make_round, make_suggestions, numbered_csv, submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def numbered_dataset(db):
    """Twelve unlabelled expressions."""
    return make_dataset(name="Round corpus", csv=numbered_csv(12))


@pytest.fixture
def suggestions(numbered_dataset):
    return make_suggestions(numbered_dataset, traits=alternating_traits)


@pytest.fixture
def two_round(numbered_dataset, suggestions, annotator_a, annotator_b, researcher):
    return make_round(numbered_dataset, [annotator_a, annotator_b], suggestion_set=suggestions, user=researcher, seed=7)


def test_it_gives_every_item_to_exactly_two_annotators(two_round, annotator_a):
    items = two_round.items.all()
    assert items.count() == 12
    assert all(item.assignments.count() == 2 for item in items)
    assert annotator_progress(round=two_round, user=annotator_a) == {"total": 12, "done": 0, "skipped": 0, "percent": 0}


def test_it_spreads_items_so_each_pair_overlaps_evenly(numbered_dataset):
    annotators = [make_user(f"ann{n}") for n in range(4)]
    round_ = round_create(name="R4", dataset=numbered_dataset, annotators=annotators, seed=1)
    pairs = Counter(
        tuple(sorted(item.assignments.values_list("annotator__username", flat=True))) for item in round_.items.all()
    )
    assert set(pairs) == {tuple(sorted(p)) for p in itertools.combinations([a.username for a in annotators], 2)}
    assert max(pairs.values()) - min(pairs.values()) <= 1


def test_it_hides_suggestions_from_a_recorded_fraction(numbered_dataset, suggestions, annotator_a, annotator_b):
    round_ = round_create(
        name="Hidden",
        dataset=numbered_dataset,
        annotators=[annotator_a, annotator_b],
        suggestion_set=suggestions,
        hide_suggestions_fraction=0.25,
        seed=3,
    )
    hidden = sorted(round_.items.filter(suggestions_hidden=True).values_list("expression_id", flat=True))
    assert len(hidden) == 3
    again = round_create(
        name="Hidden again",
        dataset=numbered_dataset,
        annotators=[annotator_a, annotator_b],
        suggestion_set=suggestions,
        hide_suggestions_fraction=0.25,
        seed=3,
    )
    assert sorted(again.items.filter(suggestions_hidden=True).values_list("expression_id", flat=True)) == hidden


def test_it_refuses_a_round_with_too_few_annotators(numbered_dataset, annotator_a):
    with pytest.raises(ValidationError) as excinfo:
        round_create(name="Solo", dataset=numbered_dataset, annotators=[annotator_a])
    assert "annotators" in excinfo.value.message_dict


def test_it_accepts_unanimous_items_and_sends_disagreements_to_adjudication(two_round, annotator_a, annotator_b):
    item = two_round.items.first()
    first, second = item.assignments.order_by("annotator__username")
    submit(first, annotator_a)
    item.refresh_from_db()
    assert item.status == ItemStatus.PENDING
    submit(second, annotator_b)
    item.refresh_from_db()
    assert item.status == ItemStatus.UNANIMOUS and item.final_theme.code == "criticism"
    other = two_round.items.exclude(pk=item.pk).first()
    x, y = other.assignments.order_by("annotator__username")
    submit(x, annotator_a, theme="love")
    submit(y, annotator_b, theme="virtues")
    other.refresh_from_db()
    assert other.status == ItemStatus.NEEDS_ADJUDICATION and other.final_theme is None


def test_it_sends_unsure_and_flagged_items_to_adjudication(two_round, annotator_a, annotator_b):
    from annotation.services import suggested_codes

    item, flagged_item = two_round.items.all()[:2]
    x, y = item.assignments.order_by("annotator__username")
    decisions = {code: "unsure" for code in suggested_codes(item)}
    assignment_submit(assignment=x, user=annotator_a, theme="love", trait_decisions=decisions)
    assignment_submit(assignment=y, user=annotator_b, theme="love", trait_decisions=decisions)
    item.refresh_from_db()
    assert item.status == ItemStatus.NEEDS_ADJUDICATION
    x, y = flagged_item.assignments.order_by("annotator__username")
    submit(x, annotator_a, flagged=True)
    submit(y, annotator_b)
    flagged_item.refresh_from_db()
    assert flagged_item.status == ItemStatus.NEEDS_ADJUDICATION


def test_it_requires_a_decision_on_every_suggested_trait_and_a_theme(two_round, annotator_a):
    assignment = two_round.items.first().assignments.get(annotator=annotator_a)
    with pytest.raises(ValidationError) as excinfo:
        assignment_submit(assignment=assignment, user=annotator_a, theme="", trait_decisions={})
    assert set(excinfo.value.message_dict) == {"theme", "trait_decisions"}


def test_it_lets_an_annotator_edit_until_the_round_is_locked(two_round, annotator_a):
    assignment = two_round.items.first().assignments.get(annotator=annotator_a)
    submit(assignment, annotator_a, theme="love")
    submit(assignment, annotator_a, theme="virtues", revision=1)
    changes = LabelChange.objects.filter(assignment=assignment, field="theme").order_by("id")
    assert [(c.old_value, c.new_value) for c in changes] == [(None, "love"), ("love", "virtues")]
    round_lock(round=two_round)
    with pytest.raises(ValidationError, match="locked"):
        submit(assignment, annotator_a, theme="love")


def test_it_refuses_a_stale_second_tab_without_losing_the_first(two_round, annotator_a):
    assignment = two_round.items.first().assignments.get(annotator=annotator_a)
    submit(assignment, annotator_a, theme="love", revision=0)
    with pytest.raises(ConflictError):
        submit(assignment, annotator_a, theme="other", revision=0)
    assignment.refresh_from_db()
    assert assignment.theme.code == "love" and assignment.revision == 1


def test_it_keeps_drafts_and_refuses_other_annotators(two_round, annotator_a, annotator_b):
    assignment = two_round.items.first().assignments.get(annotator=annotator_a)
    assignment_draft_save(
        assignment=assignment, user=annotator_a, data={"theme": "love", "note": "half-way", "evil": 1}
    )
    assignment.refresh_from_db()
    assert assignment.draft == {"theme": "love", "note": "half-way"} and assignment.status == AssignmentStatus.DRAFT
    with pytest.raises(PermissionDenied):
        assignment_draft_save(assignment=assignment, user=annotator_b, data={"theme": "other"})


def test_it_serves_skipped_items_last(two_round, annotator_a):
    first = annotator_next(round=two_round, user=annotator_a)
    assignment_skip(assignment=first, user=annotator_a)
    following = annotator_next(round=two_round, user=annotator_a)
    assert following != first
    for item in two_round.items.all():
        mine = item.assignments.filter(annotator=annotator_a).first()
        if mine and mine.pk != first.pk:
            submit(mine, annotator_a)
    assert annotator_next(round=two_round, user=annotator_a) == first


def _disputed(round_, annotator_a, annotator_b):
    item = round_.items.first()
    x, y = item.assignments.order_by("annotator__username")
    submit(x, annotator_a, theme="love")
    submit(y, annotator_b, theme="virtues")
    item.refresh_from_db()
    return item


def test_it_lets_only_the_first_of_two_adjudicators_resolve(two_round, annotator_a, annotator_b, adjudicator):
    item = _disputed(two_round, annotator_a, annotator_b)
    second = make_user("adjudicator_2")
    with pytest.raises(ValidationError, match="locked"):
        adjudication_resolve(item=item, user=adjudicator, traits=[], theme="love", revision=item.revision)
    round_lock(round=two_round)
    seen_revision = item.revision
    adjudication_resolve(item=item, user=adjudicator, traits=["pragmatic"], theme="love", revision=seen_revision)
    with pytest.raises(ConflictError, match="adjudicator resolved this item first"):
        adjudication_remove(item=item, user=second, reason="inaccurate", revision=seen_revision)
    item.refresh_from_db()
    assert item.status == ItemStatus.ADJUDICATED and item.resolved_by == adjudicator
    assert [t.code for t in item.final_traits.all()] == ["pragmatic"]


def test_it_freezes_only_accepted_items_with_their_provenance(
    two_round, annotator_a, annotator_b, adjudicator, researcher
):
    items = list(two_round.items.order_by("id"))
    for n, item in enumerate(items):
        x, y = item.assignments.order_by("annotator__username")
        submit(x, annotator_a, theme="love")
        submit(y, annotator_b, theme="love" if n < 8 else "other")
    round_lock(round=two_round)
    for n, item in enumerate(items[8:]):
        item.refresh_from_db()
        if n < 2:
            adjudication_resolve(item=item, user=adjudicator, traits=[], theme="other", revision=item.revision)
        elif n == 2:
            adjudication_remove(item=item, user=adjudicator, reason="culturally_inappropriate", revision=item.revision)
    with pytest.raises(ValidationError, match="1 item"):
        version_freeze(round=two_round, name="v1", user=researcher)
    last = items[-1]
    last.refresh_from_db()
    adjudication_remove(item=last, user=adjudicator, reason="inaccurate", revision=last.revision)
    version = version_freeze(round=two_round, name="v1", user=researcher)
    assert version.funnel == {
        "imported": 12,
        "in_round": 12,
        "reviewed_by_all": 12,
        "unanimous": 8,
        "needs_adjudication": 0,
        "adjudicated": 2,
        "removed": 2,
        "pending": 0,
        "undecided": 0,
        "final": 10,
    }
    assert Counter(version.items.values_list("provenance", flat=True)) == {"unanimous": 8, "adjudicated": 2}
    two_round.refresh_from_db()
    assert two_round.status == RoundStatus.FROZEN
    frozen = DatasetVersionItem.objects.filter(version=version).first()
    frozen.expression.text = "changed later"
    frozen.expression.save()
    frozen.refresh_from_db()
    assert frozen.text.startswith("Câu số")
    assert round_funnel(round=two_round)["final"] == 10


def test_it_hides_the_other_annotators_history_until_locked(two_round, annotator_a, annotator_b, adjudicator):
    item = two_round.items.first()
    x, y = item.assignments.order_by("annotator__username")
    submit(x, annotator_a, theme="love")
    submit(y, annotator_b, theme="virtues")
    assert {c.actor for c in item_history(item=item, user=annotator_a)} == {annotator_a}
    assert not item_history(item=item, user=adjudicator).exists()
    round_lock(round=two_round)
    item.refresh_from_db()
    assert {c.actor for c in item_history(item=item, user=adjudicator)} == {annotator_a, annotator_b}
    assert {c.actor for c in item_history(item=item, user=annotator_a)} == {annotator_a}


def test_it_recomputes_cached_statistics_after_a_label_changes(two_round, annotator_a, annotator_b):
    from annotation.selectors.stats import round_agreement_stats

    for item in two_round.items.all():
        x, y = item.assignments.order_by("annotator__username")
        submit(x, annotator_a, theme="love")
        submit(y, annotator_b, theme="love")
    before = round_agreement_stats(round=two_round, n_resamples=50)
    assert before["theme"]["percent_agreement"] == 100
    assert round_agreement_stats(round=two_round, n_resamples=50) == before
    changed = two_round.items.first().assignments.get(annotator=annotator_b)
    submit(changed, annotator_b, theme="other", revision=changed.revision)
    after = round_agreement_stats(round=two_round, n_resamples=50)
    assert after["theme"]["percent_agreement"] < 100


def test_it_reads_the_suggestions_of_many_items_with_the_items(
    numbered_dataset, suggestions, annotator_a, annotator_b, django_assert_num_queries
):
    from annotation.selectors import suggested_codes_for

    round_ = round_create(
        name="Bulk",
        dataset=numbered_dataset,
        annotators=[annotator_a, annotator_b],
        suggestion_set=suggestions,
        hide_suggestions_fraction=0.25,
        seed=5,
    )
    items = list(round_.items.select_related("round"))
    # Copied onto each item when the round was made (a suggestion set never changes): no query.
    with django_assert_num_queries(0):
        codes = suggested_codes_for(items=items)
    for item in items:
        if item.suggestions_hidden:
            assert codes[item.pk] == []
        else:
            expected = ["pragmatic"] if item.expression_id % 2 else ["literal", "folk_knowledge"]
            assert codes[item.pk] == expected
