"""The migration that numbers run items, on a database filled before it: each run's items get
1..n in the order they were created, whatever ids other runs' items took in between."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from evaluation.models import Run, RunItem, RunKind
from tests.evaluation.factories import builtin_prompt, labelled_csv, make_dataset, make_model

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

BEFORE = ("evaluation", "0013_judge_reply_reading")


def test_it_numbers_the_items_of_every_existing_run_from_one():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    # Only the items' table is as it was: the rest is written with today's models.
    Item = (
        MigrationExecutor(connection)
        .loader.project_state([BEFORE], at_end=True)
        .apps.get_model("evaluation", "RunItem")
    )
    dataset = make_dataset(name="Before the numbers", csv=labelled_csv(3))
    expressions = list(dataset.expressions.order_by("id"))
    model, prompt = make_model(), builtin_prompt(RunKind.GENERATION, "zero-shot")
    runs = [Run.objects.create(kind=RunKind.GENERATION, model=model, prompt=prompt, dataset=dataset) for _ in range(2)]
    # Interleaved: the second run's items take the ids between the first run's.
    ids = {run.pk: [] for run in runs}
    for expression in expressions:
        for run in runs:
            ids[run.pk].append(Item.objects.create(run_id=run.pk, expression_id=expression.pk).pk)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    for run in runs:
        numbers = dict(RunItem.objects.filter(run_id=run.pk).values_list("pk", "number"))
        assert [numbers[pk] for pk in ids[run.pk]] == [1, 2, 3]
