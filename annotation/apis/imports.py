"""Import a file of expressions into a dataset, synchronously."""

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses
from core.permissions import HasAnyRole, IsResearcher
from core.tables import SUPPORTED_EXTENSIONS, ImportValidationError

from .. import services
from ..models import ExpressionKind


class ImportInputSerializer(serializers.Serializer):
    dataset = serializers.CharField(
        max_length=200,
        help_text="Dataset name, matched exactly; the dataset is created if missing "
        "(a dry run says so in `new_dataset` and lists look-alike names in `near_matches`).",
    )
    file = serializers.FileField(help_text=f"One of {', '.join(SUPPORTED_EXTENSIONS)}, UTF-8.")
    map = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="Column map as for the import command, e.g. `expression=Idiom,explanation=Meaning`.",
    )
    dry_run = serializers.BooleanField(default=False, help_text="Validate and report without writing anything.")

    def validate_file(self, upload):
        # Refused before it is read into memory; the service applies the same limit.
        limit = settings.VIVID_IMPORT_MAX_BYTES
        if upload.size > limit:
            raise serializers.ValidationError(
                f"'{upload.name}' is {upload.size:,} bytes; the limit is {limit:,} bytes."
            )
        return upload

    def validate_map(self, spec: str) -> dict[str, str]:
        try:
            return services.parse_column_map(spec)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


class ImportRowErrorSerializer(serializers.Serializer):
    row = serializers.IntegerField(
        allow_null=True, help_text="Row as a person sees it in the file (2 = first data row of a CSV)."
    )
    column = serializers.CharField(allow_null=True, help_text="Column name in the file.")
    message = serializers.CharField()
    text = serializers.CharField(help_text="Row, column and message in one sentence.")


class ImportDuplicateSerializer(serializers.Serializer):
    row = serializers.IntegerField()
    expression = serializers.CharField()
    reason = serializers.CharField()


class ImportPreviewRowSerializer(serializers.Serializer):
    row = serializers.IntegerField()
    expression = serializers.CharField()
    explanation = serializers.CharField()
    kind = serializers.ChoiceField(choices=ExpressionKind.choices, allow_blank=True)
    source = serializers.CharField()
    id = serializers.CharField()
    traits = serializers.ListField(child=serializers.CharField())
    theme = serializers.CharField()
    metadata = serializers.DictField()


class ImportReportSerializer(serializers.Serializer):
    dataset_name = serializers.CharField()
    filename = serializers.CharField()
    dry_run = serializers.BooleanField()
    rows = serializers.IntegerField(help_text="Data rows read.")
    created = serializers.IntegerField(help_text="Expressions created (or that would be, in a dry run).")
    skipped_duplicates = serializers.IntegerField()
    columns = serializers.ListField(child=serializers.CharField())
    metadata_columns = serializers.ListField(child=serializers.CharField(), help_text="Kept in `metadata`.")
    duplicates = ImportDuplicateSerializer(many=True)
    errors = ImportRowErrorSerializer(many=True)
    preview = ImportPreviewRowSerializer(many=True, help_text=f"The first {services.PREVIEW_ROWS} rows to create.")
    new_dataset = serializers.BooleanField(
        help_text="No dataset has exactly this name, so the import creates one (or would, in a dry run)."
    )
    near_matches = serializers.ListField(
        child=serializers.CharField(),
        help_text="Existing dataset names that differ only by case, accents, spacing or a small typo; "
        "empty unless `new_dataset`.",
    )
    ok = serializers.BooleanField()
    summary = serializers.CharField()


class ImportApi(ApiMixin, APIView):
    """Researchers import a CSV, TSV, JSON, JSONL or XLSX file, all or nothing."""

    permission_classes = [HasAnyRole, IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="imports_create",
        request=ImportInputSerializer,
        responses={
            201: OpenApiResponse(ImportReportSerializer, description="Imported."),
            200: OpenApiResponse(ImportReportSerializer, description="Dry run: nothing was written."),
            400: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="An import report (the 200 shape, `ok` false): the file cannot be imported and nothing "
                "was written; `errors` names rows and columns. "
                "A malformed request (missing file, bad `map`) gets field errors instead.",
            ),
            **error_responses(401, 403),
        },
    )
    def post(self, request):
        serializer = ImportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = data["file"]
        try:
            report = services.expression_import(
                dataset_name=data["dataset"],
                filename=upload.name,
                content=upload.read(),
                column_map=data["map"],
                user=request.user,
                dry_run=data["dry_run"],
            )
        except ImportValidationError as exc:
            return Response(ImportReportSerializer(exc.report.to_dict()).data, status=status.HTTP_400_BAD_REQUEST)
        return Response(
            ImportReportSerializer(report.to_dict()).data,
            status=status.HTTP_200_OK if report.dry_run else status.HTTP_201_CREATED,
        )
