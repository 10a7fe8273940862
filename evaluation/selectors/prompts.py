"""Reads of the prompt registry."""

from django.db.models import QuerySet

from ..models import PromptTemplate


def prompt_list(*, kind: str | None = None) -> QuerySet[PromptTemplate]:
    prompts = PromptTemplate.objects.all()
    return prompts.filter(kind=kind) if kind else prompts


def prompt_in_use(*, kind: str, name: str) -> PromptTemplate | None:
    """The template a new run of ``kind``/``name`` uses: the built-in one, else the newest."""
    return PromptTemplate.objects.filter(kind=kind, name=name).order_by("-builtin", "-created_at").first()
