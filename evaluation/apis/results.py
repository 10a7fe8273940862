"""The paper's Tables 3-5 over the API."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, IgnoreFormatParamNegotiation, error_responses
from core.http import download
from core.permissions import IsResearcher
from llm import selectors as llm_selectors

from .. import selectors
from ..prompts import JUDGE_STRATEGIES
from ..selectors.exports import results_csv

TABLES = ("theme", "trait", "classification")


class ResultsRowSerializer(serializers.Serializer):
    model = serializers.CharField()
    prompt = serializers.CharField(required=False, help_text="Generation prompt (Tables 3 and 4).")
    judge_run = serializers.IntegerField(required=False, help_text="The judge run the figures come from.")
    values = serializers.DictField(
        child=serializers.FloatField(allow_null=True), help_text="Keyed by theme code, trait code, or topic/traits."
    )
    average = serializers.FloatField(required=False, allow_null=True, help_text="Table 3 only.")


class ResultsTableSerializer(serializers.Serializer):
    table = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    rows = ResultsRowSerializer(many=True)
    best = serializers.DictField(
        child=serializers.FloatField(allow_null=True), help_text="The best value per column (bold in the paper)."
    )


class ResultsTableApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    content_negotiation_class = IgnoreFormatParamNegotiation

    @extend_schema(
        operation_id="evaluation_results_table",
        parameters=[
            OpenApiParameter(
                "table",
                OpenApiTypes.STR,
                OpenApiParameter.PATH,
                enum=list(TABLES),
                description="theme (Table 3), trait (Table 4) or classification (Table 5).",
            ),
            OpenApiParameter(
                "judge_model", OpenApiTypes.STR, required=False, description="Only judge runs of this model (name)."
            ),
            OpenApiParameter(
                "strategy",
                OpenApiTypes.STR,
                enum=[*JUDGE_STRATEGIES, ""],
                required=False,
                description="Judge strategy; default (or empty) aspect.",
            ),
            OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], required=False),
        ],
        responses={
            (200, "application/json"): ResultsTableSerializer,
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR),
            **error_responses(400, 401, 403, 404),
        },
    )
    def get(self, request, table: str):
        if table not in TABLES:
            raise NotFound("No such table: theme, trait or classification.")
        params = request.query_params
        judge_model = None
        if params.get("judge_model"):
            judge_model = llm_selectors.model_get(name=params["judge_model"])
            if judge_model is None:
                raise ValidationError({"judge_model": ["No model of that name."]})
        strategy = params.get("strategy") or "aspect"
        if strategy not in JUDGE_STRATEGIES:
            raise ValidationError({"strategy": [f"One of {', '.join(JUDGE_STRATEGIES)}."]})
        fmt = params.get("format", "json")
        if fmt not in ("json", "csv"):
            raise ValidationError({"format": ["json or csv."]})
        data = selectors.results_table(table=table, judge_model=judge_model, strategy=strategy)
        if fmt == "csv":
            return download(results_csv(data), filename=f"vivid-results-{table}.csv", fmt="csv")
        return Response(data)
