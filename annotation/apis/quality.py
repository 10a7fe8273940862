"""Annotator quality of a round as JSON: the CLI's `annotators` and `pairs` and every figure of the Quality tab."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses
from core.permissions import HasAnyRole

from ..selectors.lookups import round_or_404
from ..selectors.quality import round_quality, round_quality_visible
from .stats import IsResearcherOrAdjudicator

# The serializers below document the response; the view returns the selector's data as is.


def _kappa(help_text: str = "Cohen's kappa (scikit-learn); null when undefined.") -> serializers.FloatField:
    return serializers.FloatField(allow_null=True, help_text=help_text)


class QualityWindowSerializer(serializers.Serializer):
    start = serializers.IntegerField(help_text="First answer (or shared item) of the window, from 1.")
    end = serializers.IntegerField(help_text="Last one, inclusive.")
    theme_kappa = _kappa()
    n = serializers.IntegerField(
        help_text="Items the kappa is computed on: the pair's shared items, or the answers with final labels."
    )
    theme_kappa_ci = serializers.ListField(
        child=serializers.FloatField(),
        allow_null=True,
        help_text="95% percentile bootstrap interval of theme_kappa over the window's items; null when undefined.",
    )


class QualityAnnotatorSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Regular items answered (control items apart).")
    median_seconds = serializers.FloatField(allow_null=True, help_text="Median answer time by the review page.")
    fast_share = serializers.FloatField(allow_null=True, help_text="Share of timed answers under the fast threshold.")
    control_accuracy = serializers.FloatField(
        allow_null=True, help_text="Share of control answers with the theme and every trait as known."
    )
    kappa_vs_final = _kappa("Theme kappa with the final (unanimous or adjudicated) labels.")
    windows = QualityWindowSerializer(many=True, help_text="Theme kappa with the final labels per window of answers.")


class QualityPairSerializer(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    n = serializers.IntegerField(help_text="Regular items both answered.")
    theme_kappa = _kappa()
    windows = QualityWindowSerializer(many=True, help_text="Per window of shared items, in order of completion.")


class QualityReportSerializer(serializers.Serializer):
    annotators = serializers.DictField(child=QualityAnnotatorSerializer(), help_text="By username.")
    pairs = QualityPairSerializer(many=True)
    round = serializers.CharField()
    settings = serializers.DictField(
        help_text=(
            "`window` (answers), `threshold` (kappa), `fast_seconds`, `control_rate` (share of a queue), "
            "`min_window_items` (the smallest window that warns)."
        )
    )
    categories = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
    n_controls = serializers.IntegerField(help_text="Control items of the round.")
    annotator_details = serializers.DictField(
        child=serializers.DictField(),
        help_text=(
            "By username: fastest_seconds (5th percentile), n_fast, per-trait kappa with the final labels, control "
            "accuracy (exact, theme, per trait), theme_shift (first half against second half: counts, chi2, "
            "p_value, dof from scipy's chi2_contingency) and full windows (trait kappas, control accuracy)."
        ),
    )
    pair_details = serializers.ListField(
        child=serializers.DictField(), help_text="Per pair: per-trait kappa overall and full windows."
    )
    fast_items = serializers.ListField(
        child=serializers.DictField(), help_text="Answers faster than the threshold: annotator, item, seconds."
    )
    interval_method = serializers.DictField(
        help_text="How the windows' intervals were computed: bootstrap (what was resampled), resamples, confidence."
    )
    warnings = serializers.ListField(
        child=serializers.DictField(),
        help_text=(
            "Windows of at least settings.min_window_items items (QUALITY_MIN_WINDOW_ITEMS) whose theme kappa and "
            "the upper end of its interval are below the round's threshold: kind, annotator (other), start, end, "
            "value, n, theme_kappa_ci."
        ),
    )


class RoundQualityApi(ApiMixin, APIView):
    permission_classes = [HasAnyRole, IsResearcherOrAdjudicator]

    @extend_schema(
        responses={200: QualityReportSerializer, **error_responses(401, 403, 404)},
        description=(
            "Annotators over time: control item accuracy, drift windows of theme and trait kappas (pairs, and "
            "each annotator with the final labels), answer speed, and each annotator's theme shift. Researchers "
            "and adjudicators only; not while they annotate the open round."
        ),
    )
    def get(self, request, pk: int):
        round_ = round_or_404(
            request.user,
            pk,
            visible=round_quality_visible,
            denied="You annotate this round: its quality figures open once it is locked.",
        )
        return Response(round_quality(round=round_))
