"""A token for scripts: POST username and password, get a token for `Authorization: Token <key>`.

Sign-in goes through django-axes like the login page (authenticate() gets the request),
so wrong passwords count towards the same lockout.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.response import Response

from core.apis.common import UNSUPPORTED_MEDIA_TYPE, VALIDATION_ERROR
from core.selectors.tokens import token_expires_at
from core.services.tokens import token_obtain
from core.signin import lockout_response


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")
    expires = serializers.DateTimeField(help_text="After this moment the token is refused; ask for a new one.")


class LockoutSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why, and when to try again.")
    retry_at = serializers.DateTimeField()


class TokenApi(ObtainAuthToken):
    # Credentials come from the body only: no session, so no CSRF check either.
    authentication_classes = []

    @extend_schema(
        operation_id="token_create",
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(VALIDATION_ERROR.response, description="Wrong username or password."),
            429: OpenApiResponse(
                LockoutSerializer,
                description="Too many failed sign-ins for this user from this address, or from this address; "
                "the `Retry-After` header gives the seconds to wait.",
            ),
            # Not an ApiMixin view (no authentication), so ApiAutoSchema does not add it.
            415: UNSUPPORTED_MEDIA_TYPE,
        },
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            if getattr(request, "axes_locked_out", False):
                return lockout_response(request)
            raise exceptions.ValidationError(serializer.errors)
        token = token_obtain(user=serializer.validated_data["user"])
        return Response(TokenSerializer({"token": token.key, "expires": token_expires_at(token=token)}).data)
