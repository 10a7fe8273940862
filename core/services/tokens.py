"""Writes of scripts' API tokens: issue, revoke, re-create.

A user holds at most one token (DRF's Token is one per user). A token expires
``API_TOKEN_TTL_DAYS`` after it was created; asking for one then issues a new key.
"""

import logging

from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from core.selectors.tokens import token_is_expired

log = logging.getLogger(__name__)


def token_obtain(*, user) -> Token:
    """The user's token, or a new one when there is none or it has expired."""
    token = Token.objects.filter(user=user).first()
    if token is not None and not token_is_expired(token=token):
        return token
    if token is not None:
        # Delete this very key only: a concurrent request may already have replaced it.
        Token.objects.filter(pk=token.pk).delete()
        log.info("API token of user %s expired; issuing a new one", user.pk)
    try:
        with transaction.atomic():
            return Token.objects.create(user=user)
    except IntegrityError:
        # Another request for the same user created it first.
        return Token.objects.get(user=user)


def token_revoke(*, user) -> bool:
    """Delete the user's token; False when there was none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    if deleted:
        log.info("API token of user %s revoked", user.pk)
    return bool(deleted)


def token_recreate(*, user) -> Token:
    """A new key for the user; the old one stops working at once."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        token = Token.objects.create(user=user)
    log.info("API token of user %s re-created", user.pk)
    return token
