"""What every API view shares: authentication order, error conversion, error docs."""

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, routers, serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.negotiation import DefaultContentNegotiation

from ..authentication import ExpiringTokenAuthentication

# Token first: DRF takes the WWW-Authenticate header of the first class, and
# without one it answers 403 instead of 401 to an anonymous request.
API_AUTHENTICATION = [ExpiringTokenAuthentication, SessionAuthentication]


class ApiMixin:
    """Token or session authentication; services' Django ValidationErrors become 400s."""

    authentication_classes = API_AUTHENTICATION

    def handle_exception(self, exc):
        if isinstance(exc, DjangoValidationError):
            exc = exceptions.ValidationError(serializers.as_serializer_error(exc))
        return super().handle_exception(exc)


class IgnoreFormatParamNegotiation(DefaultContentNegotiation):
    """For views where ``?format=`` names a file format rather than a DRF renderer."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ErrorDetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


VALIDATION_ERROR = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description="Invalid input: an object mapping each field (or `non_field_errors`) to a list of messages.",
)
NOT_SIGNED_IN = OpenApiResponse(ErrorDetailSerializer, description="Not signed in (no session, no valid token).")
FORBIDDEN = OpenApiResponse(ErrorDetailSerializer, description="Signed in without the required role.")
NOT_FOUND = OpenApiResponse(ErrorDetailSerializer, description="No such object.")


def error_responses(*codes: int) -> dict:
    known = {400: VALIDATION_ERROR, 401: NOT_SIGNED_IN, 403: FORBIDDEN, 404: NOT_FOUND}
    return {code: known[code] for code in codes}


class ApiRootView(ApiMixin, routers.APIRootView):
    """The router's index of /api/, answering 401 (not 403) to anonymous requests like the rest.

    Use with ``router.APIRootView = apis.ApiRootView`` in annotation/urls.py.
    """
