"""The migration that numbers run items, on a database filled before it: each run's items get
1..n in the order they were created, whatever ids other runs' items took in between."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from evaluation.models import RunItem, RunKind
from tests.evaluation.factories import builtin_prompt, labelled_csv, make_dataset

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

BEFORE = ("evaluation", "0013_judge_reply_reading")


def test_it_numbers_the_items_of_every_existing_run_from_one():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    # The runs' and models' tables are as they were too (the llm app came later): those three are
    # written through the models of then; the rest with today's.
    before = MigrationExecutor(connection).loader.project_state([BEFORE], at_end=True).apps
    Item = before.get_model("evaluation", "RunItem")
    OldRun = before.get_model("evaluation", "Run")
    OldModel = before.get_model("evaluation", "ModelConfig")
    dataset = make_dataset(name="Before the numbers", csv=labelled_csv(3))
    expressions = list(dataset.expressions.order_by("id"))
    model = OldModel.objects.create(name="before-the-numbers", provider="openai", model_id="m")
    prompt = builtin_prompt(RunKind.GENERATION, "zero-shot")
    runs = [
        OldRun.objects.create(kind=RunKind.GENERATION, model_id=model.pk, prompt_id=prompt.pk, dataset_id=dataset.pk)
        for _ in range(2)
    ]
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
