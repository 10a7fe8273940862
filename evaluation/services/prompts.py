"""Researchers' own prompt templates."""

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from ..models import PromptKind, PromptTemplate


def prompt_add(*, name: str, kind: str, messages: list[dict], reference: str = "", user=None) -> PromptTemplate:
    """Add a researcher's own template; the same content twice is the same version."""
    from ..prompts import template_hash

    if kind not in PromptKind.values:
        raise ValidationError({"kind": _("one of %(values)s") % {"values": ", ".join(PromptKind.values)}})
    if not messages or not all(isinstance(m, dict) and m.get("role") and "content" in m for m in messages):
        raise ValidationError({"messages": _("a list of {role, content} messages")})
    content_hash = template_hash(messages)
    template, _created = PromptTemplate.objects.get_or_create(
        content_hash=content_hash,
        defaults={
            "name": name,
            "kind": kind,
            "messages": messages,
            "reference": reference,
            "ours": True,
            "created_by": user,
        },
    )
    return template
