"""Artwork pipeline runs over the API: start, list, follow, cancel and resume (researchers only)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import MAX_INT32, ApiMixin, error_responses, paginated
from core.apis.idempotency import IDEMPOTENCY_KEY_HEADER, request_idempotency_key
from core.apis.pagination import PageNumberPagination
from core.permissions import IsResearcher
from llm.apis.runs import BatchRunCancelApi, BatchRunResumeApi, RunResumeSerializer
from llm.selectors import model_choices

from ..models import ArtworkPipelineRun
from ..selectors.collections import collection_choices
from ..selectors.lookups import artwork_run_or_404
from ..selectors.pipeline import (
    artwork_run_list,
    artwork_run_progress,
    artwork_run_usage,
    artwork_runs_progress,
    artwork_runs_usage,
)
from ..services.pipeline import artwork_run_start


class ArtworkRunStepSerializer(serializers.Serializer):
    step = serializers.CharField()
    label = serializers.CharField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    pending = serializers.IntegerField()


class ArtworkRunProgressSerializer(serializers.Serializer):
    steps = ArtworkRunStepSerializer(many=True)
    n_items = serializers.IntegerField()
    n_finished = serializers.IntegerField()
    n_failed = serializers.IntegerField()
    percent = serializers.IntegerField()


class ArtworkRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    collection = serializers.CharField(source="collection.name")
    speaker = serializers.CharField(source="speaker.name")
    listener = serializers.CharField(source="listener.name")
    builder = serializers.CharField(
        source="construction_model.name", help_text="Builds symbols, background, questions."
    )
    groups = serializers.ListField(child=serializers.CharField())
    samples = serializers.IntegerField()
    temperature = serializers.FloatField()
    lam = serializers.FloatField(help_text="Eq. 5 lambda (0 = Eq. 4).")
    word_limit = serializers.IntegerField()
    limit = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    error = serializers.CharField()
    reproducibility = serializers.DictField(
        help_text="Models, prompt hash, package versions, whether images were seen."
    )
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    stalled = serializers.BooleanField(
        source="progress.stalled",
        help_text="Running, but nothing started or finished for EVAL_STALL_SECONDS "
        "(its worker died): it can be resumed.",
    )
    progress = ArtworkRunProgressSerializer()
    tokens_in = serializers.IntegerField(
        help_text="Input tokens the run's requests used as the providers reported them (a cached reply counts 0)."
    )
    tokens_out = serializers.IntegerField()
    cost = serializers.FloatField(
        source="usage.cost",
        allow_null=True,
        help_text="US dollars for the tokens each model used, at the prices of the estimate; null when a model "
        "that was asked has no price.",
    )
    usage_by_role = serializers.DictField(
        source="usage.by_role",
        help_text="Per model role (`builder`, `speaker`, `listener`): `model`, `tokens_in`, `tokens_out`, `cost`.",
    )
    estimate = serializers.DictField(
        help_text="Made before the run started: `tokens_in`, `tokens_out` (max_tokens per reply), `n_requests`, "
        "`n_images`, `cost`, `threshold`, `needs_confirmation`, `confirmed`, `method`, `count_method` (the least "
        "exact of the models': `tokenizer`, `calibrated` or `bytes`) and `by_role` (each with its model's prices, "
        "`method`, `count_method` and, when calibrated, `calibration`)."
    )


class ArtworkRunCreateSerializer(serializers.Serializer):
    collection = serializers.SlugRelatedField(slug_field="name", queryset=collection_choices())
    speaker = serializers.SlugRelatedField(slug_field="name", queryset=model_choices())
    listener = serializers.SlugRelatedField(slug_field="name", queryset=model_choices())
    builder = serializers.SlugRelatedField(
        slug_field="name",
        queryset=model_choices(),
        required=False,
        allow_null=True,
        help_text="Default: the speaker.",
    )
    samples = serializers.IntegerField(min_value=1, max_value=50, default=10)
    lam = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.0)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_INT32, required=False, allow_null=True)
    groups = serializers.ListField(child=serializers.CharField(), required=False)
    max_tokens = serializers.IntegerField(min_value=1, max_value=8192, required=False, allow_null=True)
    confirm_cost = serializers.BooleanField(
        default=False,
        help_text="Start the run although its estimated cost is above the server's threshold; without it such a "
        "request answers 400 naming confirm_cost, with the estimate.",
    )


def _detail(run: ArtworkPipelineRun, progress: dict | None = None, usage: dict | None = None) -> dict:
    run.progress = progress if progress is not None else artwork_run_progress(run=run)
    run.usage = usage if usage is not None else artwork_run_usage(run=run)
    return ArtworkRunSerializer(run).data


class ArtworkRunListApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    # Nested lists and nulls have no form encoding: JSON only, so the schema promises no other body.
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="evaluation_artwork_runs_list",
        responses={200: paginated(ArtworkRunSerializer), **error_responses(401, 403, 404)},
    )
    def get(self, request):
        paginator = PageNumberPagination()
        runs = paginator.paginate_queryset(artwork_run_list(), request, view=self)
        progress = artwork_runs_progress(runs=runs)
        usage = artwork_runs_usage(runs=runs)
        return paginator.get_paginated_response([_detail(run, progress[run.pk], usage[run.pk]) for run in runs])

    @extend_schema(
        operation_id="evaluation_artwork_runs_create",
        request=ArtworkRunCreateSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: ArtworkRunSerializer,
            200: OpenApiResponse(
                ArtworkRunSerializer, description="A repeat of an Idempotency-Key: the run it started."
            ),
            **error_responses(400, 401, 403),
        },
        description=(
            "Start a pipeline run on a collection: every step not done yet, queued to a Celery worker. "
            "A request repeating an earlier one's Idempotency-Key starts nothing and answers 200 with that run. "
            "Its tokens and cost are estimated first (`estimate`); above the server's threshold the request needs "
            "`confirm_cost: true`."
        ),
    )
    def post(self, request):
        serializer = ArtworkRunCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            run = artwork_run_start(
                **serializer.validated_data, user=request.user, idempotency_key=request_idempotency_key(request)
            )
        except DjangoValidationError as exc:
            raise ValidationError(exc.message_dict) from exc
        code = status.HTTP_200_OK if run.idempotent_repeat else status.HTTP_201_CREATED
        return Response(_detail(artwork_run_or_404(run.pk)), status=code)


class ArtworkRunDetailApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="evaluation_artwork_runs_retrieve",
        responses={200: ArtworkRunSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, pk: int):
        return Response(_detail(artwork_run_or_404(pk)))


@extend_schema_view(
    post=extend_schema(
        operation_id="evaluation_artwork_runs_cancel",
        request=None,
        responses={200: ArtworkRunSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class ArtworkRunCancelApi(BatchRunCancelApi):
    def run_or_404(self, pk: int) -> ArtworkPipelineRun:
        return artwork_run_or_404(pk)

    def run_detail(self, run: ArtworkPipelineRun) -> dict:
        return _detail(run)


@extend_schema_view(
    post=extend_schema(
        operation_id="evaluation_artwork_runs_resume",
        request=RunResumeSerializer,
        responses={200: ArtworkRunSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class ArtworkRunResumeApi(BatchRunResumeApi):
    def run_or_404(self, pk: int) -> ArtworkPipelineRun:
        return artwork_run_or_404(pk)

    def run_detail(self, run: ArtworkPipelineRun) -> dict:
        return _detail(run)
