"""Reads of scripts' API tokens: whose token, and when it stops working."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework.authtoken.models import Token


def token_expires_at(*, token: Token) -> datetime:
    return token.created + timedelta(days=settings.API_TOKEN_TTL_DAYS)


def token_is_expired(*, token: Token) -> bool:
    return token_expires_at(token=token) <= timezone.now()


def user_token(*, user) -> Token | None:
    return Token.objects.filter(user=user).first()
