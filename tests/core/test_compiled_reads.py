"""A compiled read gives what iterating its queryset gives, compiles once, and refuses what it cannot keep."""

import threading

import pytest
from django.db import connection, connections, transaction
from django.db.models import Count, Q
from django.db.models.sql.compiler import SQLCompiler
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, AssignmentStatus, RoundItem
from core.compiled_reads import CompiledRead, CompiledReadError
from study.models import Assignment as StudyAssignment
from tests.annotation.factories import (
    alternating_traits,
    make_dataset,
    make_round,
    make_suggestions,
    numbered_csv,
    submit,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def review_round(annotator_a, annotator_b, researcher):
    dataset = make_dataset(name="Compiled reads", csv=numbered_csv(6))
    suggestions = make_suggestions(dataset, traits=alternating_traits)
    round_ = make_round(dataset, [annotator_a, annotator_b], suggestion_set=suggestions, user=researcher, seed=5)
    for assignment in Assignment.objects.filter(round=round_, annotator=annotator_a).order_by("position")[:2]:
        submit(assignment, annotator_a, theme="love")
    return round_


def queue_after(*, round_id, user_id, position):
    return (
        Assignment.objects.filter(round_id=round_id, annotator_id=user_id, position__gt=position)
        .select_related("item__round", "item__expression", "theme")
        .order_by("position")[:3]
    )


def as_seen(assignment) -> tuple:
    item = assignment.item
    return (
        assignment.pk,
        assignment.position,
        assignment.status,
        assignment.trait_decisions,
        assignment.theme.code if assignment.theme else None,
        item.expression.text,
        item.round.name,
        item.round.suggestion_set_id,
    )


def compiles_counted(monkeypatch) -> list:
    calls = []
    as_sql = SQLCompiler.as_sql

    def counted(self, *args, **kwargs):
        calls.append(self.query.model)
        return as_sql(self, *args, **kwargs)

    monkeypatch.setattr(SQLCompiler, "as_sql", counted)
    return calls


def test_it_reads_the_rows_and_related_objects_the_queryset_reads(review_round, annotator_a, annotator_b):
    read = CompiledRead(queue_after)
    for user in (annotator_a, annotator_b):
        for round_id in (review_round.pk, review_round.pk + 1):
            for position in range(-1, 8):
                arguments = {"round_id": round_id, "user_id": user.pk, "position": position}
                expected = list(queue_after(**arguments))
                got = read(**arguments)
                assert [type(row) for row in got] == [Assignment] * len(expected)
                assert [as_seen(row) for row in got] == [as_seen(row) for row in expected]
    assert any(row.theme for row in read(round_id=review_round.pk, user_id=annotator_a.pk, position=-1))


def test_it_brings_the_related_rows_with_no_query_more(review_round, annotator_a, django_assert_num_queries):
    read = CompiledRead(queue_after)
    with django_assert_num_queries(1):
        rows = read(round_id=review_round.pk, user_id=annotator_a.pk, position=-1)
        [as_seen(row) for row in rows]
    assert len(rows) == 3


def test_it_reads_values_lists_and_string_arguments_as_the_queryset_does(review_round, annotator_a):
    def counts(*, round_id, user_id):
        return (
            Assignment.objects.filter(round_id=round_id, annotator_id=user_id)
            .order_by()
            .values_list("status")
            .annotate(n=Count("id"))
            .values_list("status", "n")
        )

    def with_status(*, status):
        return Assignment.objects.filter(status=status).order_by("pk").values_list("pk", flat=True)

    def as_dicts(*, status, round_id):
        return RoundItem.objects.filter(round_id=round_id, assignments__status=status).order_by("pk").values("pk")

    read_counts, read_status, read_dicts = CompiledRead(counts), CompiledRead(with_status), CompiledRead(as_dicts)
    for _ in range(2):
        arguments = {"round_id": review_round.pk, "user_id": annotator_a.pk}
        assert dict(read_counts(**arguments)) == dict(counts(**arguments)) == {"submitted": 2, "pending": 4}
        for status in (*AssignmentStatus.values, "no such status", "it's; DROP TABLE"):
            assert read_status(status=status) == list(with_status(status=status))
            assert read_dicts(status=status, round_id=review_round.pk) == list(
                as_dicts(status=status, round_id=review_round.pk)
            )
    assert read_status(status=AssignmentStatus.SUBMITTED.value)
    # A choices member is its value, as the queryset's lookup reads it.
    assert read_status(status=AssignmentStatus.SUBMITTED) == read_status(status=AssignmentStatus.SUBMITTED.value)


def test_it_compiles_once_and_runs_one_statement_a_call(review_round, annotator_a, monkeypatch):
    compiles = compiles_counted(monkeypatch)
    read = CompiledRead(queue_after)
    read(round_id=review_round.pk, user_id=annotator_a.pk, position=0)
    assert len(compiles) == 2  # with each set of stand-ins
    for position in range(6):
        with CaptureQueriesContext(connection) as statements:
            read(round_id=review_round.pk, user_id=annotator_a.pk, position=position)
        assert len(statements) == 1
    assert len(compiles) == 2


def test_it_runs_on_the_calling_threads_own_connection(review_round, annotator_a):
    read = CompiledRead(queue_after)
    read(round_id=review_round.pk, user_id=annotator_a.pk, position=0)
    seen = {}

    def elsewhere():
        try:
            with CaptureQueriesContext(connections["default"]) as statements:
                read(round_id=review_round.pk, user_id=annotator_a.pk, position=0)
            seen["statements"] = len(statements)
            seen["connection"] = connections["default"]
        finally:
            connections.close_all()

    with CaptureQueriesContext(connection) as here:
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    assert seen["statements"] == 1 and seen["connection"] is not connection
    assert len(here) == 0


def test_it_refuses_a_build_whose_statement_depends_on_the_values():
    def branching(*, pk):
        return Assignment.objects.filter(pk=pk) if pk < 20_500 else Assignment.objects.filter(pk__gte=pk)

    with pytest.raises(CompiledReadError, match="depends on the arguments' values"):
        CompiledRead(branching)(pk=1)


@pytest.mark.parametrize(
    "build",
    [
        lambda *, pk, position: Assignment.objects.filter(pk=pk),
        lambda *, pk, position: Assignment.objects.filter(pk=pk + 1, position=position),
        lambda *, pk, position: Assignment.objects.filter(pk=pk, position=position + 1_009),
        lambda *, pk, position: Assignment.objects.filter(pk=pk + 1_009, position=position),
    ],
    ids=["unused", "transformed", "transformed-onto-another-stand-in", "transformed-onto-another-stand-in-too"],
)
def test_it_refuses_an_argument_that_is_not_a_parameter_as_given(build):
    with pytest.raises(CompiledReadError):
        CompiledRead(build)(pk=1, position=2)


@pytest.mark.parametrize("value", [True, None, 1.5, [1], b"1"])
def test_it_takes_only_int_and_str_arguments(value):
    with pytest.raises(CompiledReadError, match="int or str"):
        CompiledRead(lambda *, pk: Assignment.objects.filter(pk=pk))(pk=value)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_locks_rows_only_inside_a_transaction_as_the_queryset_does():
    def locked(*, pk):
        return RoundItem.objects.select_for_update().filter(pk=pk)

    read = CompiledRead(locked)
    with transaction.atomic():
        assert read(pk=1) == list(locked(pk=1)) == []
    try:
        list(locked(pk=1))
    except TransactionManagementError:
        with pytest.raises(TransactionManagementError):
            read(pk=1)
    else:
        assert read(pk=1) == []  # a database without row locks ignores the clause, outside a transaction too


def test_it_puts_an_argument_used_twice_in_both_places(review_round, annotator_a, annotator_b):
    def either(*, user_id, position):
        return (
            Assignment.objects.filter(Q(annotator_id=user_id, position=position) | Q(position=position + 0))
            .exclude(item__round__created_by_id=user_id)
            .order_by("pk")
            .values_list("pk", flat=True)
        )

    read = CompiledRead(either)
    for user in (annotator_a, annotator_b, review_round.created_by):
        for position in range(4):
            assert read(user_id=user.pk, position=position) == list(either(user_id=user.pk, position=position))
    assert read(user_id=annotator_a.pk, position=1)
    assert read(user_id=review_round.created_by_id, position=1) == []


def test_it_reads_small_integer_columns_and_many_arguments(review_round):
    def step_of(*, order, confidence, a, b, c, d, e, f, text):
        return (
            StudyAssignment.objects.filter(order=order, answers__confidence=confidence)
            .filter(pk__in=[a, b, c, d, e, f])
            .exclude(participant__study__slug=text)
        )

    read = CompiledRead(step_of)
    arguments = dict(order=1, confidence=3, a=1, b=2, c=3, d=4, e=5, f=6, text="x")
    assert read(**arguments) == list(step_of(**arguments)) == []
    with pytest.raises(CompiledReadError, match="at most 8"):
        CompiledRead(lambda **ids: StudyAssignment.objects.filter(pk__in=list(ids.values())))(
            **{f"pk_{n}": n for n in range(9)}
        )


def test_it_reads_one_row_or_none_by_a_unique_key(review_round, annotator_a, annotator_b):
    read = CompiledRead(lambda *, pk, user_id: Assignment.objects.filter(pk=pk, annotator_id=user_id))
    own = Assignment.objects.filter(round=review_round, annotator=annotator_a).first()

    assert read.one(pk=own.pk, user_id=annotator_a.pk) == own
    assert read.one(pk=own.pk, user_id=annotator_b.pk) is None
