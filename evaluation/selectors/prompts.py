"""Reads of the prompt registry."""

from django.db.models import QuerySet

from ..models import PromptTemplate


def prompt_list(*, kind: str | None = None) -> QuerySet[PromptTemplate]:
    prompts = PromptTemplate.objects.all()
    return prompts.filter(kind=kind) if kind else prompts
