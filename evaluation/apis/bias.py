"""The bias diagnostics of a judge run over the API (researchers only)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses
from core.permissions import IsResearcher

from ..selectors import bias as bias_selectors
from ..selectors.lookups import judge_run_or_404


class JudgeBiasApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="evaluation_runs_bias",
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="`run`; `verbosity` (`spearman`, `p_value`, `n`, `partial_spearman` controlling for the "
                "human score, `partial_p_value`, `n_partial`); `paraphrase` (`alpha`: Krippendorff's alpha, interval, "
                "across the wordings; `k` wordings; `n` items scored under two or more; `widest`; `runs`); "
                "`self_preference` (`applicable`, `own` and `others` with `judge_mean` and `human_mean`); for a "
                "pairwise run `pairwise` (`first_position_rate`, `consistency`, `n` idioms read in both orders, "
                "`win_rate` with Wilson intervals, `human_agreement`). Undefined figures are null with a reason "
                "in `reasons`.",
            ),
            **error_responses(401, 403, 404),
        },
        description="Does the judge reward length, move with the prompt's wording, favour its own model's "
        "explanations, or favour the first position? (Judge bias diagnostics.)",
    )
    def get(self, request, pk: int):
        run = judge_run_or_404(pk)
        return Response(bias_selectors.judge_bias(run=run))
