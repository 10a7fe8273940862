"""Reads of the model registry."""

import os

from django.db.models import Count, QuerySet

from ..guard import api_key_env_problem
from ..kinds import work_kinds
from ..models import ModelConfig


def api_key_state(name: str) -> bool | None:
    """Whether the named variable is set in the server's environment; the value itself never leaves it.
    A variable a model may not read reports unset, so the page cannot probe the server's environment."""
    if not name:
        return None
    return not api_key_env_problem(name) and bool(os.environ.get(name))


def model_list() -> list[ModelConfig]:
    """Every model with ``n_runs``: the runs of every kind of work that name it, in any role."""
    models = list(ModelConfig.objects.order_by("name"))
    counts: dict[int, int] = {}
    for kind in work_kinds():
        for field in kind.model_fields:
            rows = kind.run_model.objects.exclude(**{field: None}).values(field).annotate(n=Count("id"))
            for row in rows:
                counts[row[field]] = counts.get(row[field], 0) + row["n"]
    for model in models:
        model.n_runs = counts.get(model.pk, 0)
    return models


def model_choices() -> QuerySet[ModelConfig]:
    """Every model by name, for a choice of model."""
    return ModelConfig.objects.order_by("name")


def model_get(*, name: str) -> ModelConfig | None:
    return ModelConfig.objects.filter(name=name).first()
