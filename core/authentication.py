"""Authentication: the sign-in backend's user read, and API tokens that expire ``API_TOKEN_TTL_DAYS``
after they were issued."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from core.compiled_reads import CompiledRead
from core.selectors.tokens import token_expires_at, token_is_expired

# The signed-in user is read on every request: compiled once (core.compiled_reads).
_USER_BY_ID = CompiledRead(lambda *, pk: get_user_model()._default_manager.filter(pk=pk))


class UserReadOnceBackend(ModelBackend):
    """Django's ModelBackend (passwords, permissions, the inactive refused), its per-request read of the
    session's user compiled once."""

    def get_user(self, user_id):
        if type(user_id) is not int:  # not the integer key the read is compiled for: the plain read
            return super().get_user(user_id)
        user = _USER_BY_ID.one(pk=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


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
