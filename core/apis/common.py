"""What every API view shares: authentication order, error conversion, error docs."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files.uploadedfile import UploadedFile
from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import exceptions, routers, serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.negotiation import DefaultContentNegotiation

from core.authentication import ExpiringTokenAuthentication

# Token first: DRF takes the WWW-Authenticate header of the first class, and
# without one it answers 403 instead of 401 to an anonymous request.
API_AUTHENTICATION = [ExpiringTokenAuthentication, SessionAuthentication]


def _nul_errors(value, path: str) -> dict[str, list[str]]:
    if isinstance(value, str):
        return {path or "non_field_errors": [str(ProhibitNullCharactersValidator.message)]} if "\x00" in value else {}
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return {}
    errors = {}
    for key, child in items:
        if isinstance(key, str) and "\x00" in key:
            errors[path or "non_field_errors"] = [str(ProhibitNullCharactersValidator.message)]
        errors.update(_nul_errors(child, f"{path}.{key}" if path else str(key)))
    return errors


def reject_nul_characters(request) -> None:
    """A 400 naming the field for a NUL anywhere in the query or the body.

    PostgreSQL refuses NUL in text and JSON, so one reaching a lookup or a
    write would be a 500; checking here covers every field of every API.
    """
    errors = _nul_errors({key: request.query_params.getlist(key) for key in request.query_params}, "")
    data = request.data
    if hasattr(data, "lists"):
        data = {key: [v for v in values if not isinstance(v, UploadedFile)] for key, values in data.lists()}
    errors.update(_nul_errors(data, ""))
    if errors:
        # A field given once reads better as "name" than "name.0".
        raise exceptions.ValidationError({key.removesuffix(".0"): value for key, value in errors.items()})


def text_fields_take_only_text() -> None:
    """Every DRF CharField (SlugField, URLField, RegexField... too) refuses a JSON number.

    DRF turns ``{"name": 0}`` into the text "0", where the schema promises a string and a client
    that sent a number has made a mistake; a form body carries nothing but text, so only JSON
    changes. Set once for every serializer, none can forget it (called from CoreConfig.ready).
    """
    if getattr(serializers.CharField, "_vivid_text_only", False):
        return
    lenient = serializers.CharField.to_internal_value

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return lenient(self, data)

    serializers.CharField.to_internal_value = to_internal_value
    serializers.CharField._vivid_text_only = True


def query_validate(serializer_class: type[serializers.Serializer], request) -> dict:
    """The query string read through a serializer: a value of the wrong type is a 400 naming the
    parameter (``?include_test=maybe`` is not quietly false)."""
    # A plain dict (a repeated parameter's last value), not the QueryDict: DRF reads an empty value
    # in a QueryDict as "not given", like a form's unticked box, where ``?include_test=`` names no
    # boolean and ``?format=`` no format.
    params = {key: request.query_params.get(key) for key in request.query_params}
    serializer = serializer_class(data=params)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ApiMixin:
    """Token or session authentication; services' Django ValidationErrors become 400s; NUL characters are refused."""

    authentication_classes = API_AUTHENTICATION

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        reject_nul_characters(request)

    def handle_exception(self, exc):
        if isinstance(exc, DjangoValidationError):
            exc = exceptions.ValidationError(serializers.as_serializer_error(exc))
        return super().handle_exception(exc)


class ApiAutoSchema(AutoSchema):
    """Answers every operation of an ApiMixin view can give, declared once here rather than on each view.

    A 400: the NUL refusal applies to any query or body. A 415 wherever a body is read: DRF
    refuses a body in a media type the view has no parser for.
    """

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if not isinstance(self.view, ApiMixin):
            return responses
        if "400" not in responses:
            responses["400"] = self._get_response_for_code(VALIDATION_ERROR, "400", direction=direction)
        if self.method in ("POST", "PUT", "PATCH") and "415" not in responses:
            responses["415"] = self._get_response_for_code(UNSUPPORTED_MEDIA_TYPE, "415", direction=direction)
        return responses


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
NOT_FOUND = OpenApiResponse(ErrorDetailSerializer, description="No such object (or, for a list, no such page).")
UNSUPPORTED_MEDIA_TYPE = OpenApiResponse(
    ErrorDetailSerializer, description="The body is not in a media type this operation reads."
)


# Integer inputs stored in 32-bit columns: larger ones are a 400, not a database error.
MAX_INT32 = 2**31 - 1


def string_enum(choices, **kwargs) -> serializers.CharField:
    """A string field documented with its allowed values inline (a named enum would collide between apps)."""
    # Annotated on a class of its own: DRF rebuilds declared fields from their class on every bind.
    field_class = type("StringEnumField", (serializers.CharField,), {})
    return extend_schema_field({"type": "string", "enum": list(choices)})(field_class)(**kwargs)


def paginated(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The page envelope of DRF's PageNumberPagination, for views that paginate by hand."""
    return type(
        f"Paginated{serializer_class.__name__.removesuffix('Serializer')}ListSerializer",
        (serializers.Serializer,),
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
        },
    )


def error_responses(*codes: int) -> dict:
    known = {400: VALIDATION_ERROR, 401: NOT_SIGNED_IN, 403: FORBIDDEN, 404: NOT_FOUND}
    return {code: known[code] for code in codes}


class ApiRootView(ApiMixin, routers.APIRootView):
    """The router's index of /api/, answering 401 (not 403) to anonymous requests like the rest.

    Use with ``router.APIRootView = apis.ApiRootView`` in annotation/urls.py.
    """
