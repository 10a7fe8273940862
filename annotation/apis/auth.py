"""A token for scripts: POST username and password, get a token for `Authorization: Token <key>`."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken

from .common import VALIDATION_ERROR


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


class TokenApi(ObtainAuthToken):
    # Credentials come from the body only: no session, so no CSRF check either.
    authentication_classes = []

    @extend_schema(
        operation_id="token_create",
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(VALIDATION_ERROR.response, description="Wrong username or password."),
        },
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)
