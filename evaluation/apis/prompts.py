"""Prompt templates over the API."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses, string_enum
from core.permissions import IsResearcher

from .. import selectors, services
from ..models import PromptKind


class MessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["system", "user", "assistant"])
    content = serializers.CharField(trim_whitespace=False)


class PromptSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text=f"One of {', '.join(PromptKind.values)}.")
    messages = MessageSerializer(many=True)
    content_hash = serializers.CharField(help_text="Identifies this version of the template.")
    reference = serializers.CharField()
    ours = serializers.BooleanField(help_text="Written by us, not quoted from the paper.")
    builtin = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class PromptCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    # A plain string in the schema: a "kind" enum here would collide with the corpus's own "kind".
    kind = string_enum(PromptKind.values, help_text=f"One of {', '.join(PromptKind.values)}.")
    messages = serializers.ListField(child=MessageSerializer(), min_length=1)
    reference = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")

    def validate_kind(self, value):
        if value not in PromptKind.values:
            raise serializers.ValidationError(f"One of {', '.join(PromptKind.values)}.")
        return value


class PromptListApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    # Nested lists and nulls have no form encoding: JSON only, so the schema promises no other body.
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="evaluation_prompts_list",
        parameters=[
            OpenApiParameter(
                "kind", OpenApiTypes.STR, enum=[*PromptKind.values, ""], required=False, description="Empty for all."
            )
        ],
        responses={200: PromptSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        kind = request.query_params.get("kind") or None
        if kind is not None and kind not in PromptKind.values:
            raise ValidationError({"kind": [f"One of {', '.join(PromptKind.values)}."]})
        return Response(PromptSerializer(selectors.prompt_list(kind=kind), many=True).data)

    @extend_schema(
        operation_id="evaluation_prompts_create",
        request=PromptCreateSerializer,
        responses={201: PromptSerializer, **error_responses(400, 401, 403)},
        description="Add your own template; the same messages again return the existing version (same content hash).",
    )
    def post(self, request):
        serializer = PromptCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        prompt = services.prompt_add(
            name=data["name"],
            kind=data["kind"],
            messages=[dict(m) for m in data["messages"]],
            reference=data["reference"],
            user=request.user,
        )
        return Response(PromptSerializer(prompt).data, status=status.HTTP_201_CREATED)
