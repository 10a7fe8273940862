"""Issue 29's migrations on a database filled before them: every round gets its item counts, every
dataset its expression count, every assignment its round and present traits, every item the traits
its round's suggestion set gave it (None where the set has no suggestion)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.models import AnnotationRound, Assignment, Dataset, RoundItem, Trait

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

BEFORE = ("annotation", "0004_annotator_quality")


def _state_before():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    return MigrationExecutor(connection).loader.project_state([BEFORE], at_end=True).apps


def _fill(apps) -> dict:
    User = apps.get_model("auth", "User")
    Trait = apps.get_model("annotation", "Trait")
    Theme = apps.get_model("annotation", "Theme")
    Dataset = apps.get_model("annotation", "Dataset")
    Expression = apps.get_model("annotation", "Expression")
    SuggestionSet = apps.get_model("annotation", "SuggestionSet")
    Suggestion = apps.get_model("annotation", "Suggestion")
    AnnotationRound = apps.get_model("annotation", "AnnotationRound")
    ControlItem = apps.get_model("annotation", "ControlItem")
    RoundItem = apps.get_model("annotation", "RoundItem")
    Assignment = apps.get_model("annotation", "Assignment")

    traits = {t.code: t for t in Trait.objects.all()}
    theme = Theme.objects.order_by("number").first()
    a, b = User.objects.create(username="mig_a"), User.objects.create(username="mig_b")
    dataset = Dataset.objects.create(name="Before the counts")
    expressions = [
        Expression.objects.create(
            dataset=dataset, text=f"Câu {n}", explanation=f"Giải nghĩa {n}", normalized_key=f"cau {n}"
        )
        for n in range(5)
    ]
    suggestions = SuggestionSet.objects.create(dataset=dataset, name="gpt", model_name="gpt")
    # Expressions 0 and 1 get traits, 2 a suggestion of none, 3 and 4 no suggestion at all.
    for expression, codes in (
        (expressions[0], ["pragmatic", "literal"]),
        (expressions[1], ["pragmatic"]),
        (expressions[2], []),
    ):
        suggestion = Suggestion.objects.create(suggestion_set=suggestions, expression=expression)
        suggestion.traits.set([traits[code] for code in codes])
    round_ = AnnotationRound.objects.create(name="Before", dataset=dataset, suggestion_set=suggestions)
    round_.annotators.set([a, b])
    items = [
        RoundItem.objects.create(round=round_, expression=expression, suggestions_hidden=n == 1)
        for n, expression in enumerate(expressions[:4])
    ]
    control = ControlItem.objects.create(round=round_, expression=expressions[4], traits=["literal"], theme=theme)
    control_item = RoundItem.objects.create(round=round_, expression=expressions[4], control=control)
    answered = Assignment.objects.create(
        item=items[0],
        annotator=a,
        position=1,
        status="submitted",
        theme=theme,
        trait_decisions={"pragmatic": "accept", "literal": "reject"},
        added_traits=["sino_vietnamese"],
    )
    unsure = Assignment.objects.create(
        item=items[0], annotator=b, position=1, status="submitted", theme=theme, trait_decisions={"pragmatic": "unsure"}
    )
    pending = Assignment.objects.create(item=control_item, annotator=a, position=2)
    return {
        "round": round_.pk,
        "dataset": dataset.pk,
        "items": [item.pk for item in items],
        "control_item": control_item.pk,
        "answered": answered.pk,
        "unsure": unsure.pk,
        "pending": pending.pk,
    }


def test_it_fills_the_new_columns_of_a_database_made_before_them():
    ids = _fill(_state_before())
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    round_ = AnnotationRound.objects.get(pk=ids["round"])
    assert (round_.item_count, round_.hidden_count) == (4, 1)  # the control item is no part of them
    assert Dataset.objects.get(pk=ids["dataset"]).expression_count == 5
    suggested = dict(RoundItem.objects.filter(pk__in=ids["items"]).values_list("pk", "suggested"))
    # In the traits' order (literal is trait 1), as the review page lists them.
    assert [suggested[pk] for pk in ids["items"]] == [["literal", "pragmatic"], ["pragmatic"], [], None]
    assignments = {a.pk: a for a in Assignment.objects.filter(round=round_)}
    assert set(assignments) == {ids["answered"], ids["unsure"], ids["pending"]}
    numbers = dict(Trait.objects.values_list("code", "number"))
    assert assignments[ids["answered"]].present_traits == (1 << numbers["pragmatic"] - 1) | (
        1 << numbers["sino_vietnamese"] - 1
    )
    assert assignments[ids["unsure"]].present_traits == 0 and assignments[ids["pending"]].present_traits == 0
