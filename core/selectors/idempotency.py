"""Reads of the idempotency keys: what an earlier request with a key created."""

from django.db import models

from core.models import IdempotencyKey


def idempotent_earlier(*, scope: str, key: str | None, user, model: type[models.Model]) -> models.Model | None:
    """The object a committed request with this key created, or None (no key, unknown key, object gone)."""
    if not key or user is None or not user.is_authenticated:
        return None
    object_id = (
        IdempotencyKey.objects.filter(scope=scope, user=user, key=key).values_list("object_id", flat=True).first()
    )
    return model._default_manager.filter(pk=object_id).first() if object_id else None
