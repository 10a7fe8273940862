"""The judge-versus-human report of a generation run over the API (researchers only)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, IgnoreFormatParamNegotiation, error_responses
from core.http import download
from core.permissions import IsResearcher

from ..selectors import report as report_selectors
from ..selectors.exports import human_report_csv
from ..selectors.lookups import generation_run_or_404


class HumanReportApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    content_negotiation_class = IgnoreFormatParamNegotiation

    @extend_schema(
        operation_id="evaluation_runs_human_report",
        parameters=[OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], required=False)],
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="`human` (`n_ratings`, `mean`, `inter_rater`), `judges` keyed by judge run id (`strategy`, "
                "`judge_model`, `n`, `mean`, `human_mean`, `cohen_kappa`, `cohen_kappa_linear`, `cohen_kappa_quadratic`, "
                "`kendall_tau`, `spearman_rho`, `cohen_kappa_ci`, `kendall_tau_ci`, `confusion`), `noise`, "
                "`disagreements`, `table1`, `interval_method` (`bootstrap`: the unit resampled, items; `resamples`; "
                "`confidence`). Figures carry full precision. Undefined figures are null with a reason in `reasons`.",
            ),
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR, description="One row per judge run, then a `human` row."
            ),
            **error_responses(400, 401, 403, 404),
        },
        description="How far each finished judge run on this generation run is from the submitted human scores "
        "(VIVID §4.1.1, Table 1), with 95% bootstrap intervals over items.",
    )
    def get(self, request, pk: int):
        run = generation_run_or_404(pk)
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "csv"):
            raise ValidationError({"format": ["json or csv."]})
        report = report_selectors.human_report(run=run)
        if fmt == "csv":
            return download(human_report_csv(report), filename=f"run-{run.pk}-human-report.csv", fmt="csv")
        return Response(report)
