"""Reads of the model and prompt registry."""

from django.db.models import Count, QuerySet

from ..models import ModelConfig, PromptTemplate


def model_list() -> QuerySet[ModelConfig]:
    return ModelConfig.objects.annotate(n_runs=Count("runs")).order_by("name")


def prompt_list(*, kind: str | None = None) -> QuerySet[PromptTemplate]:
    prompts = PromptTemplate.objects.all()
    return prompts.filter(kind=kind) if kind else prompts
