"""Two annotators submitting the same item at the same instant, on real concurrent connections.

Under PostgreSQL's READ COMMITTED each submit could miss the other's uncommitted
answer and leave the item pending with both answers stored. On SQLite the
IMMEDIATE transactions serialise the submits, so the test passes there too.
"""

import threading

import pytest
from django.db import connection

from annotation.models import AssignmentStatus, ItemStatus, RoundItem
from annotation.services import assignment_submit

from .factories import make_dataset, make_round, numbered_csv

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

N_ITEMS = 30


def _submit_together(pairs):
    """Start both annotators' submits of one item together, each on its own connection."""
    barrier = threading.Barrier(len(pairs))
    errors = []

    def submit(assignment, user, theme):
        try:
            barrier.wait()
            assignment_submit(assignment=assignment, user=user, theme=theme)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=pair) for pair in pairs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_it_never_leaves_an_item_pending_once_both_answers_are_stored(annotator_a, annotator_b):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")
    dataset = make_dataset(name="Concurrent", csv=numbered_csv(N_ITEMS, text="Câu đồng thời {n}"))
    round_ = make_round(dataset, [annotator_a, annotator_b], name="Race", seed=5)
    items = list(round_.items.order_by("id"))
    errors = []
    for n, item in enumerate(items):
        first, second = item.assignments.select_related("annotator").order_by("annotator__username")
        # Half agree (unanimous), half differ (needs adjudication): both outcomes must be reached.
        errors += _submit_together(
            [(first, first.annotator, "love"), (second, second.annotator, "love" if n % 2 else "other")]
        )
    assert errors == []
    stuck = [
        item.pk
        for item in RoundItem.objects.filter(round=round_, status=ItemStatus.PENDING)
        if item.assignments.filter(status=AssignmentStatus.SUBMITTED).count() == 2
    ]
    assert stuck == []
    statuses = dict.fromkeys(ItemStatus.values, 0) | {
        status: RoundItem.objects.filter(round=round_, status=status).count() for status in ItemStatus.values
    }
    assert statuses[ItemStatus.UNANIMOUS] == N_ITEMS // 2
    assert statuses[ItemStatus.NEEDS_ADJUDICATION] == N_ITEMS - N_ITEMS // 2
