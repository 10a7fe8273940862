"""Reads of the core app; the names callers use are re-exported here."""

from .idempotency import idempotent_earlier
from .tokens import token_expires_at, token_is_expired, user_token

__all__ = [
    "idempotent_earlier",
    "token_expires_at",
    "token_is_expired",
    "user_token",
]
