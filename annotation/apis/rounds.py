"""Rounds, suggestions and frozen versions over the API.

Researchers and adjudicators read every round with its funnel and everyone's
progress; an annotator reads only the rounds they are in, with their own
progress and nothing about the other annotators (the blindness rule).
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import MAX_INT32, ApiMixin, IgnoreFormatParamNegotiation, error_responses, query_validate
from core.apis.idempotency import IDEMPOTENCY_KEY_HEADER, request_idempotency_key
from core.http import DOWNLOAD_CONTENT_TYPES, download, file_stem
from core.permissions import HasAnyRole, IsResearcher
from core.roles import ADJUDICATOR, RESEARCHER, has_role
from core.tables import SUPPORTED_EXTENSIONS, ImportValidationError

from .. import selectors, services
from ..models import AnnotationRound, RoundStatus
from ..selectors import rounds as round_selectors
from ..selectors.lookups import round_or_404, version_or_404
from ..selectors.visibility import (
    gold_labels_visible,
    item_filter_visible,
    round_overview_visible,
    round_seed_visible,
)
from .imports import ImportReportSerializer

# The media types the schema lists (the responses add the charset).
EXPORT_CONTENT_TYPES = {fmt: DOWNLOAD_CONTENT_TYPES[fmt].split(";")[0] for fmt in services.EXPORT_FORMATS}


class FunnelSerializer(serializers.Serializer):
    imported = serializers.IntegerField(help_text="Expressions in the dataset.")
    in_round = serializers.IntegerField()
    reviewed_by_all = serializers.IntegerField()
    unanimous = serializers.IntegerField()
    needs_adjudication = serializers.IntegerField()
    adjudicated = serializers.IntegerField()
    removed = serializers.IntegerField()
    pending = serializers.IntegerField(help_text="Still awaiting a review.")
    undecided = serializers.IntegerField(
        help_text="Pending plus needs adjudication; in_round = unanimous + adjudicated + removed + undecided."
    )
    final = serializers.IntegerField(help_text="Unanimous plus adjudicated.")


class ProgressSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="Username.")
    total = serializers.IntegerField()
    done = serializers.IntegerField(help_text="Submitted reviews.")
    skipped = serializers.IntegerField()
    percent = serializers.IntegerField()


class RoundSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    dataset = serializers.IntegerField(source="dataset_id")
    dataset_name = serializers.CharField(source="dataset.name")
    suggestion_set = serializers.IntegerField(source="suggestion_set_id", allow_null=True)
    status = serializers.CharField(help_text=f"One of {', '.join(RoundStatus.values)}.")
    annotators_per_item = serializers.IntegerField()
    hide_suggestions_fraction = serializers.FloatField()
    seed = serializers.IntegerField(
        allow_null=True, help_text="Null for anyone who annotates the round (until it is frozen) and for annotators."
    )
    item_filter = serializers.DictField()
    n_items = serializers.IntegerField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()


class RoundDetailSerializer(RoundSerializer):
    annotators = serializers.ListField(
        child=serializers.CharField(), help_text="Usernames; an annotator sees only their own."
    )
    funnel = FunnelSerializer(
        allow_null=True,
        help_text="Null for annotators, and for anyone who annotates the round while it is open "
        "(it would reveal whether the others agreed).",
    )
    progress = ProgressSerializer(many=True, help_text="One entry per annotator; an annotator gets only their own.")


class RoundCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    dataset = serializers.PrimaryKeyRelatedField(queryset=selectors.dataset_choices())
    annotators = serializers.SlugRelatedField(
        many=True,
        slug_field="username",
        queryset=round_selectors.annotator_choices(),
        help_text="Usernames of active annotators.",
    )
    annotators_per_item = serializers.IntegerField(min_value=1, default=2)
    suggestion_set = serializers.PrimaryKeyRelatedField(
        queryset=round_selectors.suggestion_set_choices(), required=False, allow_null=True
    )
    hide_suggestions_fraction = serializers.FloatField(
        min_value=0.0, max_value=services.MAX_HIDDEN_FRACTION, default=0.0
    )
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_INT32)
    theme = serializers.CharField(required=False, allow_blank=True, help_text="Only items with this gold theme code.")
    trait = serializers.CharField(required=False, allow_blank=True, help_text="Only items with this gold trait code.")
    kind = serializers.CharField(required=False, allow_blank=True)
    search = serializers.CharField(required=False, allow_blank=True)
    not_in_other_round = serializers.BooleanField(default=False, help_text="Leave out items already in a round.")


class RoundLockSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["lock", "reopen"])


def _round_detail(round_: AnnotationRound, user) -> dict:
    if round_overview_visible(round=round_, user=user):
        counts = round_selectors.round_counts(round=round_)
        progress = counts["progress"]
        annotators = round_selectors.round_annotator_names(round=round_)
        funnel = counts["funnel"]
    else:
        progress = [{"annotator": user.get_username(), **selectors.annotator_progress(round=round_, user=user)}]
        annotators = [user.get_username()]
        funnel = None
    data = _round_data(round_, user)
    return {
        **data,
        "annotators": annotators,
        "funnel": funnel,
        "progress": ProgressSerializer(progress, many=True).data,
    }


def _round_data(round_: AnnotationRound, user, gold: bool | None = None, annotated: set[int] | None = None) -> dict:
    data = RoundSerializer(round_).data
    return {
        **data,
        "seed": round_.seed if round_seed_visible(round=round_, user=user, annotated=annotated) else None,
        "item_filter": item_filter_visible(item_filter=round_.item_filter, user=user, gold=gold),
    }


class RoundListApi(ApiMixin, APIView):
    """Rounds: everyone with a role reads (annotators only their own); researchers create."""

    permission_classes = [HasAnyRole]
    # JSON only: a form has no spelling for the annotator list or a null seed or suggestion set.
    parser_classes = [JSONParser]

    def get_permissions(self):
        if self.request.method == "POST":
            return [HasAnyRole(), IsResearcher()]
        return super().get_permissions()

    @extend_schema(operation_id="rounds_list", responses={200: RoundSerializer(many=True), **error_responses(401, 403)})
    def get(self, request):
        gold = gold_labels_visible(user=request.user)
        # Whose rounds hide their seed: read once for the list, and only for those who could see one.
        staff = has_role(request.user, RESEARCHER, ADJUDICATOR)
        annotated = selectors.annotated_round_ids(user=request.user) if staff else set()
        return Response(
            [_round_data(round_, request.user, gold, annotated) for round_ in selectors.round_list(user=request.user)]
        )

    @extend_schema(
        operation_id="rounds_create",
        request=RoundCreateSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: RoundDetailSerializer,
            200: OpenApiResponse(
                RoundDetailSerializer, description="A repeat of an Idempotency-Key: the round it created."
            ),
            **error_responses(400, 401, 403),
        },
        description="Create a round over a dataset (or the part the filters pick) and hand out the items. Researchers only. "
        "A request repeating an earlier one's Idempotency-Key creates nothing and answers 200 with that round.",
    )
    def post(self, request):
        serializer = RoundCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        item_filter = {
            key: data[key] for key in round_selectors.ITEM_FILTER_KEYS if data.get(key) not in (None, "", False)
        }
        round_ = services.round_create(
            name=data["name"],
            dataset=data["dataset"],
            annotators=data["annotators"],
            user=request.user,
            expressions=round_selectors.round_candidates(dataset=data["dataset"], item_filter=item_filter),
            item_filter=item_filter,
            suggestion_set=data.get("suggestion_set"),
            annotators_per_item=data["annotators_per_item"],
            hide_suggestions_fraction=data["hide_suggestions_fraction"],
            seed=data.get("seed"),
            idempotency_key=request_idempotency_key(request),
        )
        code = status.HTTP_200_OK if round_.idempotent_repeat else status.HTTP_201_CREATED
        return Response(_round_detail(round_or_404(request.user, round_.pk), request.user), status=code)


class RoundDetailApi(ApiMixin, APIView):
    permission_classes = [HasAnyRole]

    @extend_schema(
        operation_id="rounds_retrieve",
        responses={200: RoundDetailSerializer, **error_responses(401, 403, 404)},
        description="A round with its funnel and progress per annotator. An annotator reads only rounds they are "
        "in, with their own progress and no funnel.",
    )
    def get(self, request, pk: int):
        return Response(_round_detail(round_or_404(request.user, pk), request.user))


class RoundLockApi(ApiMixin, APIView):
    permission_classes = [HasAnyRole, IsResearcher]

    @extend_schema(
        operation_id="rounds_lock",
        request=RoundLockSerializer,
        responses={200: RoundDetailSerializer, **error_responses(400, 401, 403, 404)},
        description="`lock` closes an open round to annotators and opens adjudication; `reopen` gives a locked "
        "round back to annotators. Researchers only.",
    )
    def post(self, request, pk: int):
        round_ = round_or_404(request.user, pk)
        serializer = RoundLockSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        service = services.round_lock if serializer.validated_data["action"] == "lock" else services.round_reopen
        service(round=round_, user=request.user)
        return Response(_round_detail(round_or_404(request.user, pk), request.user))


# --- Suggestions ------------------------------------------------------------


class SuggestionImportSerializer(serializers.Serializer):
    dataset = serializers.PrimaryKeyRelatedField(queryset=selectors.dataset_choices(), help_text="Dataset id.")
    name = serializers.CharField(max_length=200)
    model_name = serializers.CharField(max_length=200)
    prompt_version = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    file = serializers.FileField(
        help_text=f"One of {', '.join(SUPPORTED_EXTENSIONS)}, UTF-8, with columns `expression`, `traits` "
        "and optionally `raw_output`."
    )


class SuggestionSetSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    dataset = serializers.IntegerField(source="dataset_id")
    name = serializers.CharField()
    model_name = serializers.CharField()
    prompt_version = serializers.CharField()
    source = serializers.CharField()
    n_suggestions = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class SuggestionImportApi(ApiMixin, APIView):
    permission_classes = [HasAnyRole, IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="suggestions_create",
        request=SuggestionImportSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: SuggestionSetSerializer,
            200: OpenApiResponse(
                SuggestionSetSerializer, description="A repeat of an Idempotency-Key: the set it imported."
            ),
            400: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="An import report (`ok` false, as for `POST /api/imports/`): the file cannot be imported and nothing was written; `errors` names rows and columns. "
                "A malformed request (missing field, taken name) gets field errors instead.",
            ),
            **error_responses(401, 403),
        },
        description="Attach a model's trait suggestions to a dataset, all or nothing. Researchers only. "
        "A request repeating an earlier one's Idempotency-Key imports nothing and answers 200 with that set.",
    )
    def post(self, request):
        serializer = SuggestionImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = data["file"]
        try:
            suggestion_set = services.suggestion_set_import(
                dataset=data["dataset"],
                name=data["name"].strip(),
                model_name=data["model_name"].strip(),
                prompt_version=data["prompt_version"].strip(),
                filename=upload.name,
                content=upload.read(),
                user=request.user,
                idempotency_key=request_idempotency_key(request),
            )
        except ImportValidationError as exc:
            return Response(ImportReportSerializer(exc.report.to_dict()).data, status=status.HTTP_400_BAD_REQUEST)
        code = status.HTTP_200_OK if suggestion_set.idempotent_repeat else status.HTTP_201_CREATED
        body = SuggestionSetSerializer(round_selectors.suggestion_set_get(pk=suggestion_set.pk)).data
        return Response(body, status=code)


# --- Versions ---------------------------------------------------------------


class VersionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    round = serializers.IntegerField(source="round_id")
    round_name = serializers.CharField(source="round.name")
    dataset_name = serializers.CharField(source="round.dataset.name")
    n_items = serializers.IntegerField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()


class ProvenanceCountsSerializer(serializers.Serializer):
    unanimous = serializers.IntegerField()
    adjudicated = serializers.IntegerField()


class VersionDetailSerializer(VersionSerializer):
    funnel = FunnelSerializer(help_text="The round's funnel at the moment of freezing.")
    provenance = ProvenanceCountsSerializer()


class VersionExportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(
        choices=services.VERSION_EXPORT_FORMATS,
        default="csv",
        help_text="The dataset export's columns plus `provenance` (unanimous or adjudicated); `hf`: a zip of the "
        "Hugging Face dataset folder (Parquet per split, dataset card, croissant.json), for researchers only.",
        error_messages={
            "invalid_choice": "“{input}” is not an export format; use one of "
            f"{', '.join(services.VERSION_EXPORT_FORMATS)}."
        },
    )


class VersionFreezeSerializer(serializers.Serializer):
    round = serializers.PrimaryKeyRelatedField(queryset=round_selectors.round_choices(), help_text="Round id.")
    name = serializers.CharField(max_length=200, help_text="Unique version name.")


class VersionListApi(ApiMixin, APIView):
    """Frozen versions are read-only for everyone: there is no update or delete. Researchers freeze new ones."""

    permission_classes = [HasAnyRole]

    def get_permissions(self):
        if self.request.method == "POST":
            return [HasAnyRole(), IsResearcher()]
        return super().get_permissions()

    @extend_schema(
        operation_id="versions_list", responses={200: VersionSerializer(many=True), **error_responses(401, 403)}
    )
    def get(self, request):
        return Response(VersionSerializer(selectors.version_list(), many=True).data)

    @extend_schema(
        operation_id="versions_create",
        request=VersionFreezeSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: VersionDetailSerializer,
            200: OpenApiResponse(
                VersionDetailSerializer, description="A repeat of an Idempotency-Key: the version it froze."
            ),
            **error_responses(400, 401, 403),
        },
        description="Freeze the accepted items of a locked round into a named version. Refused (400, naming the "
        "count) while any item of the round is undecided. Researchers only. A request repeating an earlier one's "
        "Idempotency-Key freezes nothing and answers 200 with that version.",
    )
    def post(self, request):
        serializer = VersionFreezeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        frozen = services.version_freeze(
            round=data["round"], name=data["name"], user=request.user, idempotency_key=request_idempotency_key(request)
        )
        version = version_or_404(frozen.pk)
        provenance = round_selectors.version_provenance_counts(version=version)
        body = {
            **VersionSerializer(version).data,
            "funnel": selectors.version_funnel(version=version),
            "provenance": provenance,
        }
        return Response(body, status=status.HTTP_200_OK if frozen.idempotent_repeat else status.HTTP_201_CREATED)


class VersionDetailApi(ApiMixin, APIView):
    permission_classes = [HasAnyRole]

    @extend_schema(
        operation_id="versions_retrieve", responses={200: VersionDetailSerializer, **error_responses(401, 403, 404)}
    )
    def get(self, request, pk: int):
        version = version_or_404(pk)
        data = VersionSerializer(version).data
        provenance = round_selectors.version_provenance_counts(version=version)
        return Response({**data, "funnel": selectors.version_funnel(version=version), "provenance": provenance})


class VersionExportApi(ApiMixin, APIView):
    permission_classes = [HasAnyRole]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = IgnoreFormatParamNegotiation

    @extend_schema(
        operation_id="versions_export",
        parameters=[VersionExportSerializer],
        responses={
            (200, EXPORT_CONTENT_TYPES["csv"]): OpenApiResponse(OpenApiTypes.STR, description="The version as CSV."),
            (200, EXPORT_CONTENT_TYPES["jsonl"]): OpenApiResponse(
                OpenApiTypes.STR, description="The version as JSON Lines."
            ),
            (200, DOWNLOAD_CONTENT_TYPES["zip"]): OpenApiResponse(
                OpenApiTypes.BINARY, description="The version as a Hugging Face dataset folder, zipped (`format=hf`)."
            ),
            **error_responses(400, 401, 403, 404),
        },
        description="Download a frozen version in the dataset export format plus a `provenance` column "
        "(without `traits` and `theme` for annotators who hold no other role).",
    )
    def get(self, request, pk: int):
        version = version_or_404(pk)
        fmt = query_validate(VersionExportSerializer, request)["format"]
        if fmt == services.HF_FORMAT:
            return self._hf(request, version)
        content = services.version_export(version=version, fmt=fmt, gold=gold_labels_visible(user=request.user))
        filename = f"{file_stem(version.name, fallback=f'version-{version.pk}')}.{fmt}"
        return download(content, filename=filename, fmt=fmt)

    def _hf(self, request, version):
        # The dataset carries the gold labels and is meant for publishing: researchers only.
        if not has_role(request.user, RESEARCHER):
            raise PermissionDenied(IsResearcher.message)
        try:
            body, filename = services.version_hf_zip(version=version)
        except services.ExportError as error:
            raise ValidationError({"format": [str(error)]}) from error
        return download(body, filename=filename, fmt="zip")
