"""Study results and long-format responses over the API (researchers only)."""

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, IgnoreFormatParamNegotiation, error_responses, query_validate
from core.apis.pagination import PageNumberPagination
from core.http import streamed_download
from core.permissions import IsResearcher

from ..selectors.lookups import study_or_404
from ..selectors.results import EXPORT_COLUMNS, StudyExportRows, study_export_chunks, study_results
from .studies import STUDY_SLUG

INCLUDE_TEST = OpenApiParameter(
    "include_test", OpenApiTypes.BOOL, required=False, description="Count synthetic test participants too."
)


class ResultsQuerySerializer(serializers.Serializer):
    include_test = serializers.BooleanField(required=False, default=False)


class ResponsesQuerySerializer(ResultsQuerySerializer):
    raw_pid = serializers.BooleanField(required=False, default=False)


class StudyResultsApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="study_results",
        parameters=[STUDY_SLUG, INCLUDE_TEST],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="`participants` (`started`, `completed`, `valid`, `excluded_qc`, `returned`, `by_group`), "
                "`preferences` keyed `comprehension`, `knowledge_gain`, `prior_knowledge` (each `pragmatic_rate`, `n`, "
                "`ci`) plus `by_group`, `position_bias` (`left_rate`, `n`, `ci`), `qa_accuracy` keyed `familiar`, "
                "`unfamiliar` (each `without` and `with`, each `mean`, `ci`, `n`) plus `by_speaker` and `by_group`, "
                "`qc_accuracy`, `kendall` keyed by the three questions and `qa_gain` (each `tau`, `ci`, `n`, "
                "`p_value`), `interval_method` (`bootstrap`: the unit every interval resamples, participants; "
                "`resamples`; `confidence`; `method`: percentile; `bootstrapped`: the sections with intervals). "
                "Intervals are 95%; figures carry full precision; undefined figures are null (an interval over "
                "fewer than two participants too).",
            ),
            **error_responses(401, 403, 404),
        },
        description="The study's results (Pragmatics Meets Culture, Figure 3 and Tables 2–3) over completed sessions.",
    )
    def get(self, request, slug: str):
        study = study_or_404(slug)
        query = query_validate(ResultsQuerySerializer, request)
        return Response(study_results(study=study, include_test=query["include_test"]))


class ResponsePagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 1000


class StudyResponsesApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    content_negotiation_class = IgnoreFormatParamNegotiation

    @extend_schema(
        operation_id="study_responses",
        parameters=[
            STUDY_SLUG,
            OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], required=False),
            INCLUDE_TEST,
            OpenApiParameter(
                "raw_pid", OpenApiTypes.BOOL, required=False, description="Add the raw Prolific id (personal data)."
            ),
            OpenApiParameter("page", OpenApiTypes.INT, required=False),
            OpenApiParameter(
                "page_size",
                {"type": "integer", "minimum": 1, "maximum": ResponsePagination.max_page_size},
                required=False,
            ),
        ],
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="A page: `count`, `next`, `previous`, `results` (rows with the columns "
                + ", ".join(f"`{column}`" for column in EXPORT_COLUMNS)
                + ", and `prolific_pid` with `raw_pid`).",
            ),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="Every row, one per answer."),
            **error_responses(400, 401, 403, 404),
        },
        description="The long-format responses: one row per symbol selection, multiple-choice answer and preference, "
        "with the stimulus provenance. Excluded sessions are included and marked; previews never.",
    )
    def get(self, request, slug: str):
        study = study_or_404(slug)
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "csv"):
            raise ValidationError({"format": ["json or csv."]})
        query = query_validate(ResponsesQuerySerializer, request)
        include_test, raw_pid = query["include_test"], query["raw_pid"]
        paginator = ResponsePagination()
        # The page parameters are checked whichever the format: the CSV ignores them, but a bad one is
        # as wrong there as on a page.
        paginator.get_page_size(request)
        page_number = request.query_params.get("page")
        # A page number, or DRF's "last" (what a client reading the whole export backwards asks for).
        is_number = page_number is not None and page_number.isascii() and page_number.isdigit() and int(page_number)
        if page_number is not None and not is_number and page_number not in paginator.last_page_strings:
            raise NotFound(f"Invalid page “{page_number}”.")
        if fmt == "csv":
            chunks = study_export_chunks(study=study, include_test=include_test, raw_pid=raw_pid)
            return streamed_download(chunks, filename=f"{study.slug}-responses.csv", fmt="csv")
        # Counted in the database; only the rows of the page asked for are made.
        rows = StudyExportRows(study=study, include_test=include_test, raw_pid=raw_pid)
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(page)


urlpatterns = [
    path("<slug:slug>/results/", StudyResultsApi.as_view(), name="results"),
    path("<slug:slug>/responses/", StudyResponsesApi.as_view(), name="responses"),
]
