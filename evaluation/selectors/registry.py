"""Reads of the model and prompt registry."""

import os

from django.db.models import Count, QuerySet

from ..model_guard import api_key_env_problem
from ..models import ModelConfig, PromptTemplate


def api_key_state(name: str) -> bool | None:
    """Whether the named variable is set in the server's environment; the value itself never leaves it.
    A variable a model may not read reports unset, so the page cannot probe the server's environment."""
    if not name:
        return None
    return not api_key_env_problem(name) and bool(os.environ.get(name))


def model_list() -> QuerySet[ModelConfig]:
    return ModelConfig.objects.annotate(n_runs=Count("runs")).order_by("name")


def model_choices() -> QuerySet[ModelConfig]:
    """Every model by name, for a choice of model."""
    return ModelConfig.objects.order_by("name")


def model_get(*, name: str) -> ModelConfig | None:
    return ModelConfig.objects.filter(name=name).first()


def prompt_list(*, kind: str | None = None) -> QuerySet[PromptTemplate]:
    prompts = PromptTemplate.objects.all()
    return prompts.filter(kind=kind) if kind else prompts
