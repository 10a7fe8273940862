"""Datasets, expressions and the fixed taxonomy (traits, themes)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from core.apis.common import ApiMixin, IgnoreFormatParamNegotiation, error_responses, query_validate
from core.apis.idempotency import IDEMPOTENCY_KEY_HEADER, request_idempotency_key
from core.http import DOWNLOAD_CONTENT_TYPES, download, file_stem
from core.permissions import HasAnyRole, ReadAnyRoleWriteResearcher

from .. import selectors, services
from ..models import Dataset, Expression, ExpressionKind
from ..selectors.visibility import GOLD_FILTER_KEYS, GOLD_KEYS, gold_labels_visible

WRITE_METHODS = ["get", "post", "patch", "delete", "head", "options"]
# The media types the schema lists (the responses add the charset).
EXPORT_CONTENT_TYPES = {fmt: DOWNLOAD_CONTENT_TYPES[fmt].split(";")[0] for fmt in services.EXPORT_FORMATS}
EXPORT_DESCRIPTION = "The file, as an attachment (UTF-8, CSV or JSON Lines by `format`)."


# --- Datasets ---------------------------------------------------------------


class DatasetSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    description = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True, help_text="Username.")
    created_at = serializers.DateTimeField()
    n_expressions = serializers.IntegerField(help_text="Number of expressions in the dataset.")


class DatasetCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")


class DatasetUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(required=False, allow_blank=True)


class DatasetExportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(
        choices=services.EXPORT_FORMATS,
        default="csv",
        help_text="csv: traits as a comma-separated list, metadata as extra columns; jsonl: one JSON object a line.",
        error_messages={
            "invalid_choice": f"“{{input}}” is not an export format; use one of {', '.join(services.EXPORT_FORMATS)}."
        },
    )


class DatasetViewSet(ApiMixin, viewsets.GenericViewSet):
    """Datasets: every role reads, researchers create, rename and delete."""

    permission_classes = [HasAnyRole, ReadAnyRoleWriteResearcher]
    http_method_names = WRITE_METHODS
    serializer_class = DatasetSerializer

    def get_queryset(self):
        return selectors.dataset_list()

    def _output(self, dataset: Dataset) -> dict:
        return DatasetSerializer(selectors.dataset_detail_get(pk=dataset.pk)).data

    @extend_schema(responses={200: DatasetSerializer(many=True), **error_responses(401, 403, 404)})
    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(DatasetSerializer(page, many=True).data)

    @extend_schema(responses={200: DatasetSerializer, **error_responses(401, 403, 404)})
    def retrieve(self, request, pk=None):
        return Response(DatasetSerializer(self.get_object()).data)

    @extend_schema(
        request=DatasetCreateSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: DatasetSerializer,
            200: OpenApiResponse(
                DatasetSerializer, description="A repeat of an Idempotency-Key: the dataset it created."
            ),
            **error_responses(400, 401, 403),
        },
        description="Create an empty dataset owned by the caller. Researchers only. A request repeating an earlier "
        "one's Idempotency-Key creates nothing and answers 200 with that dataset.",
    )
    def create(self, request):
        serializer = DatasetCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        dataset = services.dataset_create(
            **serializer.validated_data, user=request.user, idempotency_key=request_idempotency_key(request)
        )
        code = status.HTTP_200_OK if dataset.idempotent_repeat else status.HTTP_201_CREATED
        return Response(self._output(dataset), status=code)

    @extend_schema(
        request=DatasetUpdateSerializer,
        responses={200: DatasetSerializer, **error_responses(400, 401, 403, 404)},
        description="Rename a dataset or change its description. Researchers only.",
    )
    def partial_update(self, request, pk=None):
        dataset = self.get_object()
        serializer = DatasetUpdateSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        dataset = services.dataset_update(dataset=dataset, data=serializer.validated_data)
        return Response(self._output(dataset))

    @extend_schema(
        responses={204: None, **error_responses(400, 401, 403, 404)},
        description="Delete a dataset with all its expressions. Researchers only.",
    )
    def destroy(self, request, pk=None):
        services.dataset_delete(dataset=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        parameters=[DatasetExportSerializer],
        responses={
            (200, EXPORT_CONTENT_TYPES["csv"]): OpenApiResponse(OpenApiTypes.STR, description=EXPORT_DESCRIPTION),
            (200, EXPORT_CONTENT_TYPES["jsonl"]): OpenApiResponse(OpenApiTypes.STR, description=EXPORT_DESCRIPTION),
            **error_responses(400, 401, 403, 404),
        },
        description="Download the dataset as a file that `POST /api/imports/` (and the import command) read back.",
    )
    @action(
        detail=True,
        methods=["get"],
        renderer_classes=[JSONRenderer],
        content_negotiation_class=IgnoreFormatParamNegotiation,
    )
    def export(self, request, pk=None, **kwargs):
        dataset = self.get_object()
        fmt = query_validate(DatasetExportSerializer, request)["format"]
        try:
            content = services.dataset_export(dataset=dataset, fmt=fmt, gold=gold_labels_visible(user=request.user))
        except services.ExportError as exc:
            raise serializers.ValidationError({"format": [str(exc)]}) from None
        filename = f"{file_stem(dataset.name, fallback=f'dataset-{dataset.pk}')}.{fmt}"
        return download(content, filename=filename, fmt=fmt)


# --- Expressions -------------------------------------------------------------


class ExpressionSerializer(serializers.ModelSerializer):
    # Declared: as a read-only model field DRF drops allow_blank, and the schema then left "" out.
    kind = serializers.ChoiceField(choices=ExpressionKind.choices, allow_blank=True, read_only=True)
    # Built by hand: many=True drops allow_null, and the list itself is what the blindness rule nulls.
    traits = serializers.ManyRelatedField(
        child_relation=serializers.SlugRelatedField(read_only=True, slug_field="code"),
        read_only=True,
        allow_null=True,
        help_text="Gold trait codes; null when hidden from the caller (annotators without another role).",
    )
    theme = serializers.SlugRelatedField(
        read_only=True,
        slug_field="code",
        allow_null=True,
        help_text="Gold theme code; null when there is none or when it is hidden from the caller.",
    )
    metadata = serializers.DictField(read_only=True, help_text="Columns of the import that have no field of their own.")

    class Meta:
        model = Expression
        fields = [
            "id",
            "dataset",
            "text",
            "explanation",
            "kind",
            "source",
            "external_id",
            "traits",
            "theme",
            "metadata",
            "created_at",
        ]
        read_only_fields = fields


class _ExpressionFieldsSerializer(serializers.Serializer):
    """The writable fields of an expression; traits and theme are given by code."""

    text = serializers.CharField()
    explanation = serializers.CharField()
    kind = serializers.ChoiceField(choices=ExpressionKind.choices, allow_blank=True, required=False)
    source = serializers.CharField(max_length=300, allow_blank=True, required=False)
    external_id = serializers.CharField(max_length=200, allow_blank=True, required=False)
    traits = serializers.SlugRelatedField(
        many=True, slug_field="code", queryset=selectors.trait_list(), required=False, help_text="Trait codes."
    )
    theme = serializers.SlugRelatedField(
        slug_field="code", queryset=selectors.theme_list(), allow_null=True, required=False, help_text="Theme code."
    )
    metadata = serializers.DictField(required=False)


class ExpressionCreateSerializer(_ExpressionFieldsSerializer):
    dataset = serializers.PrimaryKeyRelatedField(queryset=selectors.dataset_choices())


class ExpressionUpdateSerializer(_ExpressionFieldsSerializer):
    """Every field optional; an expression cannot move to another dataset."""

    text = serializers.CharField(required=False)
    explanation = serializers.CharField(required=False)


# Query filters: empty means no filter (as a form sends it), and a query string has no null.
@extend_schema_field({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 0}]})
class _IdFilterField(serializers.PrimaryKeyRelatedField):
    pass


@extend_schema_field({"type": "string"})
class _CodeFilterField(serializers.SlugRelatedField):
    pass


class ExpressionFilterSerializer(serializers.Serializer):
    dataset = _IdFilterField(
        queryset=selectors.dataset_choices(), required=False, allow_null=True, help_text="Dataset id; empty for all."
    )
    search = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Substring of the text or the explanation."
    )
    trait = _CodeFilterField(
        slug_field="code",
        queryset=selectors.trait_list(),
        required=False,
        allow_null=True,
        help_text="Trait code; empty for all.",
    )
    theme = _CodeFilterField(
        slug_field="code",
        queryset=selectors.theme_list(),
        required=False,
        allow_null=True,
        help_text="Theme code; empty for all.",
    )
    kind = serializers.ChoiceField(choices=ExpressionKind.choices, required=False, allow_blank=True, default="")


class ExpressionViewSet(ApiMixin, viewsets.GenericViewSet):
    """Expressions: every role reads, researchers add, edit and delete one at a time."""

    permission_classes = [HasAnyRole, ReadAnyRoleWriteResearcher]
    http_method_names = WRITE_METHODS
    # JSON only: a form has no spelling for the trait list, a null theme or the metadata object.
    parser_classes = [JSONParser]
    serializer_class = ExpressionSerializer

    def get_queryset(self):
        return selectors.expression_list()

    def _output(self, expression) -> dict:
        return ExpressionSerializer(selectors.expression_get(pk=expression.pk)).data

    def _visible(self, data):
        """Serialised expressions with the gold labels hidden from annotators (the blindness rule)."""
        if gold_labels_visible(user=self.request.user):
            return data
        rows = data if isinstance(data, list) else [data]
        for row in rows:
            row.update(dict.fromkeys(GOLD_KEYS))
        return data

    @extend_schema(
        parameters=[ExpressionFilterSerializer],
        responses={200: ExpressionSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
    def list(self, request):
        filters = ExpressionFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        hidden = [key for key in GOLD_FILTER_KEYS if data.get(key) and not gold_labels_visible(user=request.user)]
        if hidden:
            raise PermissionDenied(
                f"Filtering by {' or '.join(hidden)} would reveal the gold labels, which annotators do not see."
            )
        expressions = selectors.expression_list(
            dataset=data.get("dataset"),
            search=data["search"],
            trait=data["trait"].code if data.get("trait") else "",
            theme=data["theme"].code if data.get("theme") else "",
            kind=data["kind"],
        )
        page = self.paginate_queryset(expressions)
        return self.get_paginated_response(self._visible(ExpressionSerializer(page, many=True).data))

    @extend_schema(responses={200: ExpressionSerializer, **error_responses(401, 403, 404)})
    def retrieve(self, request, pk=None):
        return Response(self._visible(ExpressionSerializer(self.get_object()).data))

    @extend_schema(
        request=ExpressionCreateSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: ExpressionSerializer,
            200: OpenApiResponse(
                ExpressionSerializer, description="A repeat of an Idempotency-Key: the expression it added."
            ),
            **error_responses(400, 401, 403),
        },
        description="Add one expression. A text already in the dataset (compared after Unicode "
        "normalisation, case folding and whitespace collapsing) is a 400 on `text`. Researchers only. "
        "A request repeating an earlier one's Idempotency-Key adds nothing and answers 200 with that expression.",
    )
    def create(self, request):
        serializer = ExpressionCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        expression = services.expression_create(
            **serializer.validated_data, user=request.user, idempotency_key=request_idempotency_key(request)
        )
        code = status.HTTP_200_OK if expression.idempotent_repeat else status.HTTP_201_CREATED
        return Response(self._output(expression), status=code)

    @extend_schema(
        request=ExpressionUpdateSerializer,
        responses={200: ExpressionSerializer, **error_responses(400, 401, 403, 404)},
        description="Change some fields; `traits` replaces the whole list. Researchers only.",
    )
    def partial_update(self, request, pk=None):
        expression = self.get_object()
        serializer = ExpressionUpdateSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        expression = services.expression_update(expression=expression, data=serializer.validated_data)
        return Response(self._output(expression))

    @extend_schema(responses={204: None, **error_responses(400, 401, 403, 404)}, description="Researchers only.")
    def destroy(self, request, pk=None):
        services.expression_delete(expression=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Taxonomy ---------------------------------------------------------------


class TraitSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    code = serializers.SlugField()
    aspect = serializers.CharField()
    name_en = serializers.CharField()
    name_vi = serializers.CharField()
    description_en = serializers.CharField()
    description_vi = serializers.CharField()


class ThemeSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    code = serializers.SlugField()
    name_en = serializers.CharField()
    name_vi = serializers.CharField()
    description_en = serializers.CharField()
    description_vi = serializers.CharField()


@extend_schema_view(
    list=extend_schema(responses={200: TraitSerializer(many=True), **error_responses(401, 403)}),
    retrieve=extend_schema(responses={200: TraitSerializer, **error_responses(401, 403, 404)}),
)
class TraitViewSet(ApiMixin, viewsets.ReadOnlyModelViewSet):
    """The five complexity traits, in prompt order. Not paginated: the taxonomy is fixed."""

    serializer_class = TraitSerializer
    lookup_field = "code"
    pagination_class = None

    def get_queryset(self):
        return selectors.trait_list()


@extend_schema_view(
    list=extend_schema(responses={200: ThemeSerializer(many=True), **error_responses(401, 403)}),
    retrieve=extend_schema(responses={200: ThemeSerializer, **error_responses(401, 403, 404)}),
)
class ThemeViewSet(ApiMixin, viewsets.ReadOnlyModelViewSet):
    """The seven semantic themes, in prompt order. Not paginated: the taxonomy is fixed."""

    serializer_class = ThemeSerializer
    lookup_field = "code"
    pagination_class = None

    def get_queryset(self):
        return selectors.theme_list()
