"""A frozen version whose labels are its corpus's: the harness tasks of the version and a
classification run over its dataset then score the same items against the same gold answers.

Used by tests/evaluation/test_harness_tasks.py and by benchmarks/interop.py.
"""

from annotation.models import Assignment, Dataset, DatasetVersion
from annotation.services import assignment_submit, round_create, round_lock, suggestion_set_create, version_freeze


def gold_version(dataset: Dataset, annotators, *, name: str, user=None) -> DatasetVersion:
    """Two annotators who both accept the corpus's traits as suggested and give its theme, then the freeze.

    Every expression of ``dataset`` needs a theme (a freeze keeps an item's final theme).
    """
    expressions = list(dataset.expressions.order_by("id").prefetch_related("traits"))
    predictions = [(e.pk, [t.code for t in e.traits.all()], "gold") for e in expressions]
    suggestions = suggestion_set_create(
        dataset=dataset, name=f"{name} gold", model_name="gold", predictions=predictions
    )
    round_ = round_create(
        name=f"{name} round", dataset=dataset, annotators=list(annotators), suggestion_set=suggestions, seed=1
    )
    assignments = Assignment.objects.filter(item__round=round_).select_related("annotator", "item__expression__theme")
    for assignment in assignments.prefetch_related("item__expression__traits"):
        expression = assignment.item.expression
        assignment_submit(
            assignment=assignment,
            user=assignment.annotator,
            theme=expression.theme.code,
            trait_decisions={t.code: "accept" for t in expression.traits.all()},
        )
    round_lock(round=round_)
    return version_freeze(round=round_, name=name, user=user)
