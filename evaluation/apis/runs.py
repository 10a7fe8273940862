"""Runs over the API: create, follow, cancel, resume, read items and the report."""

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import (
    MAX_INT32,
    ApiMixin,
    IgnoreFormatParamNegotiation,
    error_responses,
    paginated,
    query_validate,
    string_enum,
)
from core.apis.idempotency import IDEMPOTENCY_KEY_HEADER, request_idempotency_key
from core.apis.pagination import PageNumberPagination
from core.http import download
from core.permissions import IsResearcher
from llm import selectors as llm_selectors
from llm.apis.runs import BatchRunCancelApi, BatchRunResumeApi, RunResumeSerializer
from llm.costs import usage

from .. import selectors, services
from ..harness_logs import LOG_EXTENSIONS, LOG_FORMATS
from ..models import ItemStatus, Run, RunKind, RunStatus
from ..prompts import CLASSIFICATION_TASKS, GENERATION_PROMPTS, JUDGE_STRATEGIES
from ..selectors.exports import report_csv
from ..selectors.lookups import run_item_or_404, run_or_404
from ..services.runs.cost import run_start

PROMPT_NAMES = {
    RunKind.GENERATION: GENERATION_PROMPTS,
    RunKind.JUDGE: JUDGE_STRATEGIES,
    RunKind.CLASSIFICATION: CLASSIFICATION_TASKS,
}


class RunProgressSerializer(serializers.Serializer):
    n_items = serializers.IntegerField()
    n_done = serializers.IntegerField()
    n_failed = serializers.IntegerField()
    n_unscored = serializers.IntegerField(
        help_text="Judge items whose reply had no readable score (never counted as 0)."
    )
    n_cached = serializers.IntegerField(help_text="Items answered from the response cache, without a request.")
    n_cut_off = serializers.IntegerField(help_text="Done items whose reply max_tokens cut off (finish_reason length).")
    percent = serializers.IntegerField()
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    cost = serializers.FloatField(
        allow_null=True, help_text="US dollars for the tokens so far at the run's prices; null when the model has none."
    )
    elapsed_s = serializers.FloatField()
    eta_s = serializers.FloatField(allow_null=True, help_text="Seconds left at the pace so far; null unless running.")
    status = serializers.CharField()


class RunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField(help_text=f"One of {', '.join(RunKind.values)}.")
    model = serializers.CharField(source="model.name")
    strategy = serializers.CharField(help_text="Generation prompt, judge strategy or classification task.")
    prompt = serializers.IntegerField(source="prompt_id")
    prompt_hash = serializers.CharField(source="prompt.content_hash")
    dataset = serializers.IntegerField(source="dataset_id")
    dataset_name = serializers.CharField(source="dataset.name")
    version = serializers.IntegerField(source="version_id", allow_null=True)
    source_run = serializers.IntegerField(
        source="source_run_id", allow_null=True, help_text="The generation run a judge run scores."
    )
    params = serializers.DictField()
    limit = serializers.IntegerField(allow_null=True)
    status = serializers.CharField(help_text=f"One of {', '.join(RunStatus.values)}.")
    error = serializers.CharField()
    tokens_in = serializers.IntegerField(help_text="Summed from the items' usage when the run finishes.")
    tokens_out = serializers.IntegerField()
    cost = serializers.SerializerMethodField(help_text="US dollars for tokens_in and tokens_out; null without prices.")
    estimate = serializers.DictField(
        help_text="Made before the run started: `tokens_in`, `tokens_out` (max_tokens per reply), `n_requests`, "
        "`n_cached`, `price_input`, `price_output`, `cost`, `threshold`, `needs_confirmation`, `confirmed`, `method`, "
        "`count_method` (`tokenizer`, `calibrated` or `bytes`: how input tokens were counted) and, when calibrated, "
        "`calibration` (`ratio`, `replies`, `run_kind`)."
    )
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_cost(self, run) -> float | None:
        return usage(run)["cost"]


class RunDetailSerializer(RunSerializer):
    reproducibility = serializers.DictField(
        help_text="Model id, base URL, fingerprints or model hash, prompt hash, package versions."
    )
    progress = RunProgressSerializer()


class RunCreateSerializer(serializers.Serializer):
    # A plain string in the schema: a "kind" enum here would collide with the corpus's own "kind".
    kind = string_enum(RunKind.values, help_text=f"One of {', '.join(RunKind.values)}.")
    model = serializers.SlugRelatedField(
        slug_field="name", queryset=llm_selectors.model_choices(), help_text="Model name (the judge for a judge run)."
    )
    prompt = serializers.CharField(
        help_text="generation: zero-shot|few-shot; judge: the strategy zero-shot|demonstration|cot|aspect; classification: the task topic|traits."
    )
    dataset = serializers.PrimaryKeyRelatedField(
        queryset=selectors.run_dataset_choices(), required=False, allow_null=True
    )
    version = serializers.PrimaryKeyRelatedField(
        queryset=selectors.run_version_choices(),
        required=False,
        allow_null=True,
        help_text="A frozen version (generation).",
    )
    source_run = serializers.PrimaryKeyRelatedField(
        queryset=selectors.run_list(), required=False, allow_null=True, help_text="The generation run to judge."
    )
    temperature = serializers.FloatField(
        min_value=0.0, max_value=2.0, required=False, help_text="Generation only; default 0.7."
    )
    max_tokens = serializers.IntegerField(
        min_value=1,
        max_value=8192,
        required=False,
        help_text="Generation (default 150) and judge (default 10, 400 for cot: raise it for a strategy whose "
        "replies are cut off).",
    )
    seed = serializers.IntegerField(min_value=0, max_value=MAX_INT32, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_INT32, required=False, allow_null=True)
    confirm_cost = serializers.BooleanField(
        default=False,
        help_text="Start the run although its estimated cost is above the server's threshold; without it such a "
        "request answers 400 naming confirm_cost, with the estimate.",
    )

    def validate_kind(self, value):
        if value not in RunKind.values:
            raise ValidationError(f"One of {', '.join(RunKind.values)}.")
        return value

    def validate(self, data):
        if data["prompt"] not in PROMPT_NAMES[data["kind"]]:
            raise ValidationError(
                {"prompt": f"For a {data['kind']} run, one of {', '.join(PROMPT_NAMES[data['kind']])}."}
            )
        return data

    def run_arguments(self) -> dict:
        data = self.validated_data
        params = {key: data[key] for key in ("seed",) if key in data}
        if data["kind"] == RunKind.GENERATION:
            params.update({key: data[key] for key in ("temperature", "max_tokens") if key in data})
        elif data["kind"] == RunKind.JUDGE and "max_tokens" in data:
            params["max_tokens"] = data["max_tokens"]
        return {
            "kind": data["kind"],
            "model": data["model"],
            "prompt_name": data["prompt"],
            "dataset": data.get("dataset"),
            "version": data.get("version"),
            "source_run": data.get("source_run"),
            "params": params,
            "limit": data.get("limit"),
        }


class RunItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField(source="run_id")
    expression = serializers.IntegerField(source="expression_id")
    expression_text = serializers.CharField(source="expression.text")
    source_item = serializers.IntegerField(
        source="source_item_id", allow_null=True, help_text="The judged generation item."
    )
    status = serializers.CharField(help_text=f"One of {', '.join(ItemStatus.values)}.")
    response = serializers.CharField(help_text="The raw reply.")
    score = serializers.IntegerField(allow_null=True, help_text="Judge 0-5; null when unscored.")
    score_reason = serializers.CharField(
        help_text="Judge: why the reply is unscored (empty, refusal, cut_off, list_number, not_a_verdict, "
        "out_of_range, not_integer, other_scale, alternatives, conflicting, no_score); empty when scored."
    )
    parser_version = serializers.IntegerField(allow_null=True, help_text="Judge: the score parser that read it.")
    expected_score = serializers.FloatField(
        allow_null=True,
        help_text="Judge with log-probabilities: the sum of s x P(s) over the score token's 0-5 (G-Eval).",
    )
    score_probabilities = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="P(0) .. P(5) behind expected_score."
    )
    finish_reason = serializers.CharField(help_text="As the provider said: stop, length (cut off by max_tokens) ...")
    refusal = serializers.CharField(help_text="The provider's refusal message, where it gives one.")
    prediction = serializers.CharField()
    gold = serializers.CharField()
    correct = serializers.BooleanField(allow_null=True)
    cached = serializers.BooleanField()
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    latency_ms = serializers.IntegerField(allow_null=True)
    attempts = serializers.IntegerField()
    error = serializers.CharField()
    finished_at = serializers.DateTimeField(allow_null=True)


class RunItemDetailSerializer(RunItemSerializer):
    messages = serializers.ListField(child=serializers.DictField(), help_text="The exact messages sent.")


def _run_detail(run: Run) -> dict:
    return {
        **RunSerializer(run).data,
        "reproducibility": run.reproducibility,
        "progress": selectors.run_progress(run=run),
    }


class RunListApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    # Nested lists and nulls have no form encoding: JSON only, so the schema promises no other body.
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="evaluation_runs_list",
        parameters=[
            OpenApiParameter(
                "kind", OpenApiTypes.STR, enum=[*RunKind.values, ""], required=False, description="Empty for all."
            )
        ],
        responses={200: RunSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        kind = request.query_params.get("kind") or None
        if kind is not None and kind not in RunKind.values:
            raise ValidationError({"kind": [f"One of {', '.join(RunKind.values)}."]})
        return Response(RunSerializer(selectors.run_list(kind=kind), many=True).data)

    @extend_schema(
        operation_id="evaluation_runs_create",
        request=RunCreateSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: RunDetailSerializer,
            200: OpenApiResponse(
                RunDetailSerializer,
                description="A repeat of an earlier request's Idempotency-Key: the run that request started.",
            ),
            **error_responses(400, 401, 403),
        },
        description="Start a generation run (model x prompt x dataset or frozen version), a judge run (judge model x "
        "strategy x generation run, temperature 0) or a classification run (model x task x dataset, 3-shot). "
        "The run is queued; follow it at its detail. Send an Idempotency-Key to retry safely: a repeat answers "
        "200 with the run the first request started, and starts none. Its tokens and cost are estimated first "
        "(`estimate`); above the server's threshold the request needs `confirm_cost: true`.",
    )
    def post(self, request):
        serializer = RunCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = run_start(
            **serializer.run_arguments(),
            user=request.user,
            idempotency_key=request_idempotency_key(request),
            confirm_cost=serializer.validated_data["confirm_cost"],
        )
        answer = status.HTTP_200_OK if run.idempotent_repeat else status.HTTP_201_CREATED
        return Response(_run_detail(run_or_404(run.pk)), status=answer)


class RunImportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=LOG_FORMATS)
    file = serializers.FileField(
        help_text="lm-eval's samples_vivid_<task>_*.jsonl (--log_samples), or an Inspect .eval or .json log."
    )
    model = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="A registered model's name; empty for the model the log names (registered as imported).",
    )

    def validate(self, data):
        upload, fmt = data["file"], data["format"]
        allowed = LOG_EXTENSIONS[fmt]
        if not upload.name.lower().endswith(allowed):
            raise ValidationError({"file": [f"{upload.name}: a {fmt} log ends in {' or '.join(allowed)}."]})
        # Refused before it is read into memory.
        limit = settings.VIVID_IMPORT_MAX_BYTES
        if upload.size > limit:
            raise ValidationError({"file": [f"{upload.name} is {upload.size:,} bytes; the limit is {limit:,} bytes."]})
        if data["model"]:
            data["model"] = llm_selectors.model_get(name=data["model"])
            if data["model"] is None:
                raise ValidationError({"model": ["No model of that name."]})
        else:
            data["model"] = None
        return data


class RunImportApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="evaluation_runs_import",
        request={"multipart/form-data": RunImportSerializer},
        responses={
            201: RunDetailSerializer,
            200: OpenApiResponse(RunDetailSerializer, description="The file was imported before: its run."),
            **error_responses(400, 401, 403),
        },
        description="Import an lm-eval or Inspect log of the exported VIVID tasks as a finished generation or "
        "classification run of its frozen version, all or nothing (400 names every unmatched or malformed "
        "sample). Classification replies are scored by the app's exact match. The same file again answers 200 "
        "with the first import's run.",
    )
    def post(self, request):
        serializer = RunImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = services.run_import(
            fmt=data["format"],
            data=data["file"].read(),
            filename=data["file"].name,
            model=data["model"],
            user=request.user,
        )
        answer = status.HTTP_200_OK if run.idempotent_repeat else status.HTTP_201_CREATED
        return Response(_run_detail(run_or_404(run.pk)), status=answer)


class RunDetailApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="evaluation_runs_retrieve", responses={200: RunDetailSerializer, **error_responses(401, 403, 404)}
    )
    def get(self, request, pk: int):
        return Response(_run_detail(run_or_404(pk)))


@extend_schema_view(
    post=extend_schema(
        operation_id="evaluation_runs_cancel",
        request=None,
        responses={200: RunDetailSerializer, **error_responses(400, 401, 403, 404)},
        description="Stop a queued or running run; the items already done are kept.",
    )
)
class RunCancelApi(BatchRunCancelApi):
    def run_or_404(self, pk: int) -> Run:
        return run_or_404(pk)

    def run_detail(self, run: Run) -> dict:
        return _run_detail(run)


@extend_schema_view(
    post=extend_schema(
        operation_id="evaluation_runs_resume",
        request=RunResumeSerializer,
        responses={200: RunDetailSerializer, **error_responses(400, 401, 403, 404)},
        description="Queue a cancelled or failed run again; only its pending items are sent (and the cache answers repeats).",
    )
)
class RunResumeApi(BatchRunResumeApi):
    def run_or_404(self, pk: int) -> Run:
        return run_or_404(pk)

    def run_detail(self, run: Run) -> dict:
        return _run_detail(run)

    def resume(self, **arguments):
        return services.run_resume(**arguments)


class RunItemFlagsSerializer(serializers.Serializer):
    unscored = serializers.BooleanField(required=False, default=False)
    cached = serializers.BooleanField(required=False, default=False)


class RunItemListApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="evaluation_run_items_list",
        parameters=[
            OpenApiParameter("status", OpenApiTypes.STR, enum=ItemStatus.values, required=False),
            OpenApiParameter(
                "unscored", OpenApiTypes.BOOL, required=False, description="Only judge items with no readable score."
            ),
            OpenApiParameter(
                "cached", OpenApiTypes.BOOL, required=False, description="Only items answered from the cache."
            ),
            OpenApiParameter("page", OpenApiTypes.INT, required=False),
        ],
        responses={200: paginated(RunItemSerializer), **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, pk: int):
        run = run_or_404(pk)
        item_status = request.query_params.get("status", "")
        if item_status and item_status not in ItemStatus.values:
            raise ValidationError({"status": [f"One of {', '.join(ItemStatus.values)}."]})
        flags = query_validate(RunItemFlagsSerializer, request)
        items = selectors.run_items(run=run, status=item_status, unscored=flags["unscored"])
        if flags["cached"]:
            items = items.filter(cached=True)
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(items, request, view=self)
        return paginator.get_paginated_response(RunItemSerializer(page, many=True).data)


class RunItemDetailApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="evaluation_run_items_retrieve",
        responses={200: RunItemDetailSerializer, **error_responses(401, 403, 404)},
        description="One item with the exact messages sent and the raw reply.",
    )
    def get(self, request, run_pk: int, pk: int):
        # The run by its own key first: a foreign-key lookup has no range check, and an id beyond
        # the database's integer would be a 500 on SQLite instead of a 404.
        run = run_or_404(run_pk)
        item = run_item_or_404(run=run, pk=pk)
        return Response(RunItemDetailSerializer(item).data)


class RunReportApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    content_negotiation_class = IgnoreFormatParamNegotiation

    @extend_schema(
        operation_id="evaluation_runs_report",
        parameters=[OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], required=False)],
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="`run` with its counts, `average`, `by_theme`, `by_trait` (judge) or `accuracy` (classification).",
            ),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="section, code, value"),
            **error_responses(400, 401, 403, 404),
        },
    )
    def get(self, request, pk: int):
        run = run_or_404(pk)
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "csv"):
            raise ValidationError({"format": ["json or csv."]})
        report = selectors.run_report(run=run)
        if fmt == "csv":
            return download(report_csv(report), filename=f"run-{run.pk}-report.csv", fmt="csv")
        return Response(report)
