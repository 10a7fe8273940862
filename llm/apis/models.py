"""Models over the API."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import MAX_INT32, ApiMixin, error_responses
from core.apis.idempotency import IDEMPOTENCY_KEY_HEADER, request_idempotency_key
from core.permissions import IsResearcher

from .. import selectors, services
from ..models import MAX_CONCURRENCY, REGISTRABLE_PROVIDERS, Provider


class ModelSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    provider = serializers.CharField(help_text=f"One of {', '.join(Provider.values)}.")
    model_id = serializers.CharField()
    base_url = serializers.CharField()
    api_key_env = serializers.CharField(
        help_text="The NAME of the environment variable holding the key; never the key."
    )
    api_key_set = serializers.SerializerMethodField(
        help_text="Whether that variable is set on the server; null when none is named."
    )
    max_concurrency = serializers.IntegerField()
    requests_per_minute = serializers.IntegerField(allow_null=True)
    timeout = serializers.FloatField()
    builtin = serializers.BooleanField()
    n_runs = serializers.IntegerField(required=False, default=0)
    supports_vision = serializers.BooleanField(allow_null=True, help_text="Takes image input; null when unknown.")
    supports_logprobs = serializers.BooleanField(
        allow_null=True, help_text="Returns token log-probabilities; null when unknown."
    )
    context_length = serializers.IntegerField(allow_null=True, help_text="Tokens of context; null when unknown.")
    probed_at = serializers.DateTimeField(allow_null=True, help_text="When `manage.py probe_model` last asked it.")
    probe = serializers.DictField(
        help_text="What each probe found: `{vision|logprobs|context_length: {result, detail}}`."
    )
    price_input = serializers.FloatField(allow_null=True, help_text="US dollars per million input tokens.")
    price_output = serializers.FloatField(allow_null=True, help_text="US dollars per million output tokens.")

    def get_api_key_set(self, model) -> bool | None:
        return selectors.api_key_state(model.api_key_env)


class ModelCreateSerializer(serializers.Serializer):
    name = serializers.SlugField(max_length=100)
    provider = serializers.ChoiceField(choices=REGISTRABLE_PROVIDERS)
    model_id = serializers.CharField(max_length=500)
    base_url = serializers.URLField(max_length=500, required=False, allow_blank=True, default="")
    api_key_env = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    max_concurrency = serializers.IntegerField(min_value=1, max_value=MAX_CONCURRENCY, default=4)
    requests_per_minute = serializers.IntegerField(
        min_value=1, max_value=MAX_INT32, required=False, allow_null=True, default=None
    )
    timeout = serializers.FloatField(min_value=0.1, default=60.0)
    supports_vision = serializers.BooleanField(required=False, allow_null=True, default=None)
    supports_logprobs = serializers.BooleanField(required=False, allow_null=True, default=None)
    context_length = serializers.IntegerField(
        min_value=1, max_value=MAX_INT32, required=False, allow_null=True, default=None
    )
    price_input = serializers.FloatField(
        min_value=0,
        max_value=999_999,
        required=False,
        allow_null=True,
        default=None,
        help_text="USD per million tokens.",
    )
    price_output = serializers.FloatField(
        min_value=0,
        max_value=999_999,
        required=False,
        allow_null=True,
        default=None,
        help_text="USD per million tokens.",
    )


class ModelListApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    # JSON only: a form has no spelling for a null rate limit.
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="evaluation_models_list", responses={200: ModelSerializer(many=True), **error_responses(401, 403)}
    )
    def get(self, request):
        return Response(ModelSerializer(selectors.model_list(), many=True).data)

    @extend_schema(
        operation_id="evaluation_models_create",
        request=ModelCreateSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: ModelSerializer,
            200: OpenApiResponse(
                ModelSerializer,
                description="A repeat of an earlier request's Idempotency-Key: the model that request registered.",
            ),
            **error_responses(400, 401, 403),
        },
        description="Register a model: an OpenAI-compatible endpoint (base URL, API key variable name) or a local "
        "transformers model (path). The API key itself is never sent or stored. Send an Idempotency-Key to retry "
        "safely: a repeat answers 200 with the model the first request registered.",
    )
    def post(self, request):
        serializer = ModelCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        model = services.model_add(
            **serializer.validated_data, user=request.user, idempotency_key=request_idempotency_key(request)
        )
        answer = status.HTTP_200_OK if model.idempotent_repeat else status.HTTP_201_CREATED
        return Response(ModelSerializer(model).data, status=answer)
