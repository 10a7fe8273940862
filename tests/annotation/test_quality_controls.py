"""Control items: placed blind in every queue, scored against their known labels, and kept out of
the agreement statistics, the funnel and versions (README "Annotator quality")."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.models import Assignment, ControlItem, RoundItem
from annotation.selectors import annotator_progress, round_funnel
from annotation.selectors.quality import round_quality
from annotation.selectors.stats import round_agreement_stats
from annotation.services import (
    control_item_create,
    control_items_from_version,
    round_lock,
    round_quality_update,
    version_freeze,
)

from .factories import (
    api_client_for,
    client_for,
    make_annotator,
    make_dataset,
    make_researcher,
    make_round,
    make_suggestions,
    make_version,
    numbered_csv,
    queue_of,
    submit,
)


@pytest.fixture
def people(db):
    return make_researcher(), make_annotator("ann_a"), make_annotator("ann_b")


@pytest.fixture
def version(people):
    """A frozen version of 12 items (theme criticism, no trait), to draw controls from."""
    researcher, a, b = people
    source = make_dataset(name="Gold", csv=numbered_csv(12, text="Mẫu số {n}", explanation="Mẫu {n}"))
    return make_version(make_round(source, [a, b], name="Gold round"), a, b, name="gold-v1", user=researcher)


@pytest.fixture
def round_with_controls(people, version):
    researcher, a, b = people
    big = make_dataset(name="Big", csv=numbered_csv(40))
    round_ = make_round(big, [a, b], name="R-controls", seed=11)
    round_quality_update(
        round=round_, user=researcher, control_rate=0.2, quality_window=10, quality_threshold=0.4, fast_seconds=3
    )
    control_items_from_version(round=round_, version=version, user=researcher)
    return round_


def test_it_puts_controls_in_every_queue_at_the_rate(round_with_controls, people):
    _researcher, a, b = people
    assert ControlItem.objects.filter(round=round_with_controls).count() == 12
    for user in (a, b):
        queue = queue_of(round_with_controls, user)
        controls = [x for x in queue if x.item.control_id]
        # 40 regular items at 20%: 10 controls, so that they make a fifth of the queue of 50.
        assert len(queue) == 50 and len(controls) == 10
        assert [x.position for x in queue] == list(range(1, 51))
        # Spread through the queue: one in each stretch of five.
        assert all((x.position - 1) // 5 == n for n, x in enumerate(controls))


def test_it_gives_controls_ids_and_positions_that_do_not_set_them_apart(round_with_controls, people):
    _researcher, a, _b = people
    items = list(RoundItem.objects.filter(round=round_with_controls).order_by("id"))
    control_ids = [i.pk for i in items if i.control_id]
    regular_ids = [i.pk for i in items if not i.control_id]
    # Created among the regular items, not after them.
    assert min(control_ids) < max(regular_ids) and max(control_ids) > min(regular_ids)
    queue = queue_of(round_with_controls, a)
    # The assignment ids follow the queue order, controls included.
    assert [x.pk for x in queue] == sorted(x.pk for x in queue)


def test_it_keeps_controls_out_of_the_funnel_statistics_and_versions(round_with_controls, people, version):
    researcher, a, b = people
    for user in (a, b):
        for assignment in queue_of(round_with_controls, user):
            submit(assignment, user, theme="criticism")
    funnel = round_funnel(round=round_with_controls)
    assert funnel["in_round"] == 40 and funnel["unanimous"] == 40 and funnel["undecided"] == 0
    stats = round_agreement_stats(round=round_with_controls, n_resamples=50)
    assert stats["n_items"] == 40 and stats["n_labelled"] == 40
    assert stats["theme"]["n"] == 40
    round_lock(round=round_with_controls)
    frozen = version_freeze(round=round_with_controls, name="big-v1", user=researcher)
    texts = set(frozen.items.values_list("text", flat=True))
    assert len(texts) == 40 and not any(t.startswith("Mẫu") for t in texts)
    quality = round_quality(round=round_with_controls)
    # The controls were answered as they are known (criticism, no trait): all right.
    assert quality["annotators"]["ann_a"]["control_accuracy"] == 1.0
    assert quality["annotators"]["ann_a"]["n"] == 40


def test_it_counts_controls_in_the_annotators_own_progress(round_with_controls, people):
    _researcher, a, _b = people
    assert annotator_progress(round=round_with_controls, user=a)["total"] == 50


def _skeleton(html: str, assignment) -> str:
    """The page without what differs from item to item: text, explanation, ids and numbers."""
    html = html.replace(assignment.item.expression.text, "TEXT").replace(assignment.item.expression.explanation, "EXPL")
    html = re.sub(r"csrfmiddlewaretoken\" value=\"[^\"]+\"", "", html)
    html = re.sub(r"\"X-CSRFToken\": \"[^\"]+\"", "", html)
    return re.sub(r"\d+", "N", html)


def test_it_shows_a_control_exactly_like_any_other_item(round_with_controls, people):
    _researcher, a, _b = people
    queue = queue_of(round_with_controls, a)
    control = next(x for x in queue if x.item.control_id)
    regular = next(x for x in queue if not x.item.control_id)
    client = client_for(a)
    pages = []
    for assignment in (control, regular):
        url = reverse("annotation:review_item", args=[round_with_controls.pk, assignment.pk])
        full = client.get(url)
        fragment = client.get(url, headers={"HX-Request": "true"})
        assert full.status_code == fragment.status_code == 200
        pages.append((_skeleton(full.content.decode(), assignment), _skeleton(fragment.content.decode(), assignment)))
    assert pages[0] == pages[1]


def test_it_serves_a_control_over_the_api_like_any_other_item(round_with_controls, people):
    _researcher, a, _b = people
    api = api_client_for(a)
    rows = api.get(f"/api/rounds/{round_with_controls.pk}/assignments/?page_size=100").json()["results"]
    assert len(rows) == 50
    keys = {frozenset(row) for row in rows}
    assert len(keys) == 1 and not any("control" in key for key in next(iter(keys)))
    assert {row["suggestions_shown"] for row in rows} == {False}


def test_it_adds_a_control_by_hand_from_the_dataset(people):
    researcher, a, b = people
    dataset = make_dataset(name="Hand", csv=numbered_csv(10))
    expressions = list(dataset.expressions.order_by("id"))
    round_ = make_round(
        dataset, [a, b], name="R-hand", expressions=dataset.expressions.filter(pk__in=[e.pk for e in expressions[:8]])
    )
    control = control_item_create(
        round=round_, user=researcher, expression=expressions[9].text, traits=["pragmatic"], theme="love"
    )
    assert control.traits == ["pragmatic"] and control.theme.code == "love"
    with pytest.raises(ValidationError, match="already an item of this round"):
        control_item_create(round=round_, user=researcher, expression=expressions[0].text, traits=[], theme="love")
    with pytest.raises(ValidationError) as error:
        control_item_create(round=round_, user=researcher, expression="Không có", traits=[], theme="love")
    assert "expression" in error.value.message_dict


def test_it_refuses_controls_once_an_annotator_has_answered(round_with_controls, people, version):
    researcher, a, _b = people
    submit(queue_of(round_with_controls, a)[0], a)
    with pytest.raises(ValidationError, match="has started"):
        control_item_create(round=round_with_controls, user=researcher, expression="Câu số 1", traits=[], theme="love")
    with pytest.raises(ValidationError) as error:
        round_quality_update(
            round=round_with_controls,
            user=researcher,
            control_rate=0.1,
            quality_window=10,
            quality_threshold=0.4,
            fast_seconds=3,
        )
    assert "control_rate" in error.value.message_dict


def test_it_refuses_a_control_without_suggestions_when_every_item_shows_them(people):
    researcher, a, b = people
    dataset = make_dataset(name="Sugg", csv=numbered_csv(10))
    first_eight = dataset.expressions.order_by("id")[:8]
    suggestions = make_suggestions(dataset)
    # The suggestion of the tenth expression is missing.
    suggestions.suggestions.filter(expression=dataset.expressions.order_by("id")[9]).delete()
    round_ = make_round(
        dataset,
        [a, b],
        name="R-sugg",
        suggestion_set=suggestions,
        expressions=dataset.expressions.filter(pk__in=[e.pk for e in first_eight]),
    )
    with pytest.raises(ValidationError, match="would notice"):
        control_item_create(round=round_, user=researcher, expression="Câu số 9", traits=[], theme="love")
    control = control_item_create(round=round_, user=researcher, expression="Câu số 8", traits=[], theme="love")
    item = RoundItem.objects.get(control=control)
    assert not item.suggestions_hidden
    assert Assignment.objects.filter(item=item).count() <= 2


def test_it_counts_a_rounds_items_with_the_readers_own_controls(round_with_controls, people):
    researcher, a, _b = people
    from annotation.selectors import round_get

    # Everyone reviews every item here: the count an annotator reads matches their queue of 50.
    assert round_get(pk=round_with_controls.pk, user=a).n_items == 50
    assert api_client_for(a).get(f"/api/rounds/{round_with_controls.pk}/").json()["n_items"] == 50
    assert round_get(pk=round_with_controls.pk, user=researcher).n_items == 40


def test_it_keeps_each_queue_in_its_seeded_order_when_controls_arrive(people, version):
    researcher, a, b = people
    big = make_dataset(name="Order", csv=numbered_csv(30))
    round_ = make_round(big, [b, a], name="R-order", seed=99)
    before = {u.pk: [x.item.expression_id for x in queue_of(round_, u)] for u in (a, b)}
    control_items_from_version(round=round_, version=version, user=researcher, count=4)
    after = {u.pk: [x.item.expression_id for x in queue_of(round_, u) if not x.item.control_id] for u in (a, b)}
    assert after == before


def test_it_deletes_a_round_with_its_controls(round_with_controls):
    round_with_controls.delete()
    assert not ControlItem.objects.exists()
