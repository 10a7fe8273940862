"""The Table 1 report of an artwork pipeline run over the API (researchers only)."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, IgnoreFormatParamNegotiation, error_responses
from core.files import untrusted_file_response
from core.permissions import IsResearcher

from ..selectors.pipeline import artwork_run_get
from ..selectors.report import artwork_report, artwork_report_csv


class ArtworkReportApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    content_negotiation_class = IgnoreFormatParamNegotiation

    @extend_schema(
        operation_id="evaluation_artwork_runs_report",
        parameters=[OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], required=False)],
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="`run` (`id`, `collection`, `speaker`, `listener`, `samples`, `lambda`, `image_seen`, `cost` "
                "{`tokens_in`, `tokens_out`, `cost`, `by_role`, `estimate`}, ...); "
                "`qa_accuracy` keyed `no_description`/`base`/`pragmatic`, then `familiar`/`unfamiliar`, then "
                "`attuned`/`agnostic`, each `{accuracy, n, ci}` (Wilson 95%); `t_test` keyed familiarity, then type, "
                "then `pragmatic_vs_base`/`pragmatic_vs_no_description`/`base_vs_no_description`, each "
                "`{t, p_value, significant, direction, n_a, n_b}` (Welch; `direction` better|worse when significant); "
                "`by_group`; `speaker_scores` (Eq. 4 self-evaluation: `base`, `pragmatic`, `pragmatic_all_samples`); "
                "`marks` († significantly better than base, ‡ significantly worse). Undefined figures are null.",
            ),
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR,
                description="Long form: condition, familiarity, type, accuracy, n, ci_low, ci_high, and for the "
                "pragmatic rows vs_base_t, vs_base_p_value, vs_base_direction and mark († better, ‡ worse).",
            ),
            **error_responses(400, 401, 403, 404),
        },
        description="Simulated listener QA accuracy of an artwork pipeline run in the shape of Table 1 of "
        "Pragmatics Meets Culture (§6.1), with two-sample t-tests between the speaker conditions.",
    )
    def get(self, request, pk: int):
        run = artwork_run_get(pk=pk)
        if run is None:
            raise NotFound("No such artwork pipeline run.")
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "csv"):
            raise ValidationError({"format": ["json or csv."]})
        report = artwork_report(run=run)
        if fmt == "csv":
            response = HttpResponse(artwork_report_csv(report).encode(), content_type="text/csv; charset=utf-8")
            return untrusted_file_response(response, filename=f"artwork-run-{run.pk}-report.csv")
        return Response(report)
