"""Token authentication whose tokens expire ``API_TOKEN_TTL_DAYS`` after they were issued."""

from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from core.selectors.tokens import token_expires_at, token_is_expired


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing (401) a token older than the TTL."""

    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if token_is_expired(token=token):
            raise exceptions.AuthenticationFailed(
                _("This token expired on %(date)s. Get a new one with POST /api/token/ or on your API token page.")
                % {"date": token_expires_at(token=token).isoformat(timespec="seconds")}
            )
        return user, token
