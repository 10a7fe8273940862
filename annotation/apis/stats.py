"""Agreement statistics of a round, as JSON (the same data as `manage.py agreement_stats --format json`)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses
from core.permissions import HasAnyRole
from core.roles import ADJUDICATOR, RESEARCHER, has_role

from ..selectors.lookups import round_or_404
from ..selectors.stats import round_agreement_stats, round_stats_visible


class IsResearcherOrAdjudicator(BasePermission):
    message = "Only researchers and adjudicators can see agreement statistics: they reveal every annotator's labels."

    def has_permission(self, request, view):
        return has_role(request.user, RESEARCHER, ADJUDICATOR)


# The serializers below document the response; the view returns the selector's data as is.


class AgreementIntervalSerializer(serializers.Serializer):
    low = serializers.FloatField()
    high = serializers.FloatField()


def _figure(help_text: str, **kwargs) -> serializers.FloatField:
    return serializers.FloatField(allow_null=True, help_text=help_text, **kwargs)


def _interval(of: str) -> AgreementIntervalSerializer:
    return AgreementIntervalSerializer(
        allow_null=True, help_text=f"95% percentile bootstrap interval of {of} (null when undefined)."
    )


class AgreementPairSerializer(serializers.Serializer):
    annotators = serializers.ListField(child=serializers.CharField(), required=False)
    n = serializers.IntegerField()
    cohen_kappa = _figure("scikit-learn's cohen_kappa_score.")
    percent_agreement = _figure("Percentage of items where the two agree.")
    reasons = serializers.DictField(child=serializers.CharField(), help_text="Why a null figure is undefined.")


class AgreementLabelSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Items rated by the full number of annotators per item.")
    n_pairable = serializers.IntegerField(help_text="Items with at least two ratings (used by Krippendorff's alpha).")
    percent_agreement = _figure("Percentage of agreeing annotator pairs.")
    observed_agreement = _figure("The same as a proportion (0-1).")
    cohen_kappa = _figure("scikit-learn's cohen_kappa_score; null unless the round has exactly two annotators.")
    cohen_kappa_ci = _interval("Cohen's kappa")
    krippendorff_alpha = _figure("krippendorff.alpha, nominal.")
    krippendorff_alpha_ci = _interval("Krippendorff's alpha")
    fleiss_kappa = _figure("statsmodels' fleiss_kappa on aggregate_raters.")
    fleiss_kappa_ci = _interval("Fleiss' kappa (more than two annotators)")
    pabak = _figure("Prevalence- and bias-adjusted kappa: (k·po − 1)/(k − 1).")
    prevalence = _figure("Traits only: share of ratings marking the trait present.", required=False)
    prevalence_index = _figure("Traits only: |both present − both absent| / pairs.", required=False)
    bias_index = _figure("Traits only: |present/absent − absent/present| / pairs.", required=False)
    pairwise = AgreementPairSerializer(
        many=True, required=False, help_text="More than two annotators: Cohen's kappa per pair."
    )
    reasons = serializers.DictField(child=serializers.CharField(), help_text="Why a null figure is undefined, by key.")


class AgreementStatsSerializer(serializers.Serializer):
    round = serializers.CharField()
    status = serializers.CharField()
    n_items = serializers.IntegerField(help_text="Items in the round.")
    n_labelled = serializers.IntegerField(help_text="Items with at least one submitted review.")
    annotators = serializers.ListField(child=serializers.CharField(), help_text="Usernames, sorted.")
    annotators_per_item = serializers.IntegerField()
    categories = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
    method = serializers.DictField()
    interval_method = serializers.DictField(
        help_text="What the intervals resampled: `bootstrap` (the unit, items), `resamples`, `confidence`, `method`."
    )
    theme = AgreementLabelSerializer(help_text="The theme as one nominal label.")
    traits = serializers.DictField(
        child=AgreementLabelSerializer(), help_text="Each trait as present/absent, by trait code."
    )
    theme_confusion = serializers.DictField(help_text="k × k counts, rows the first annotator, columns the second.")
    vs_final = serializers.DictField(help_text="Each annotator's Cohen's kappa against the final labels.")
    vs_llm = serializers.DictField(help_text="Per trait, annotators against the LLM on items with suggestions shown.")
    anchoring = serializers.DictField(
        help_text="Match rates with the LLM, suggestions shown versus hidden, and the difference."
    )
    distributions = serializers.DictField(help_text="Count and percent of items per trait and per theme.")


class RoundStatsApi(ApiMixin, APIView):
    permission_classes = [HasAnyRole, IsResearcherOrAdjudicator]

    @extend_schema(
        responses={200: AgreementStatsSerializer, **error_responses(401, 403, 404)},
        description=(
            "Agreement statistics of a round on the labels submitted before adjudication: Cohen's kappa (two "
            "annotators) or Fleiss' kappa, Krippendorff's alpha, percent agreement, PABAK, bootstrap intervals, "
            "the theme confusion matrix, agreement with the final labels and with the LLM, the anchoring "
            "control and the label distributions. Researchers and adjudicators only."
        ),
    )
    def get(self, request, pk: int):
        round_ = round_or_404(
            request.user,
            pk,
            visible=round_stats_visible,
            denied="You annotate this round: its statistics open once it is locked.",
        )
        return Response(round_agreement_stats(round=round_))
