"""Writes every app shares."""

from .idempotency import KEY_PATTERN, idempotency_key_check, idempotent_create, idempotent_repeat_of
from .tokens import token_obtain, token_recreate, token_revoke

__all__ = [
    "KEY_PATTERN",
    "idempotency_key_check",
    "idempotent_create",
    "idempotent_repeat_of",
    "token_obtain",
    "token_recreate",
    "token_revoke",
]
