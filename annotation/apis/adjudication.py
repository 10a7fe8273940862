"""Adjudication and item history over the API.

Both annotators' labels are served only once the round is locked and only to
adjudicators and researchers; the history applies the same blindness rule as
the item page.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses
from core.permissions import HasAnyRole
from core.roles import ADJUDICATOR, RESEARCHER, has_role

from .. import selectors, services
from ..models import RemovalReason, RoundItem, RoundStatus
from ..selectors import adjudication as adjudication_selectors
from ..selectors.lookups import item_or_404, round_or_404

NOT_LOCKED = "Adjudication starts when the researcher locks the round; until then the annotators' labels stay hidden."


class IsAdjudicator(BasePermission):
    message = "Only adjudicators can do this."

    def has_permission(self, request, view):
        return has_role(request.user, ADJUDICATOR)


class IsAdjudicatorOrResearcher(BasePermission):
    message = "Only adjudicators and researchers can do this."

    def has_permission(self, request, view):
        return has_role(request.user, ADJUDICATOR, RESEARCHER)


# --- Output shapes --------------------------------------------------------------


class AnnotationSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="Username.")
    traits = serializers.ListField(child=serializers.CharField(), help_text="Trait codes the annotator marked present.")
    theme = serializers.CharField(allow_null=True, help_text="Theme code.")
    unsure = serializers.ListField(child=serializers.CharField(), help_text="Suggested traits marked unsure.")
    flagged = serializers.BooleanField()
    note = serializers.CharField(allow_blank=True)
    trait_decisions = serializers.DictField(
        child=serializers.ChoiceField(choices=["accept", "reject", "unsure"]),
        help_text="Decision per suggested trait code.",
    )
    added_traits = serializers.ListField(child=serializers.CharField(), help_text="Trait codes added by the annotator.")


class DifferencesSerializer(serializers.Serializer):
    theme = serializers.BooleanField(help_text="The annotators chose different themes.")
    traits = serializers.ListField(child=serializers.CharField(), help_text="Trait codes marked present by some only.")
    unsure = serializers.ListField(child=serializers.CharField(), help_text="Trait codes someone marked unsure.")
    flagged = serializers.BooleanField(help_text="Someone flagged the item.")


class AgreedSerializer(serializers.Serializer):
    traits = serializers.ListField(
        child=serializers.CharField(), help_text="Trait codes every annotator marked present."
    )
    theme = serializers.CharField(allow_null=True, help_text="The theme, when every annotator chose the same one.")


class AdjudicationItemSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Round item id (use it with /api/items/{id}/resolve/).")
    expression = serializers.CharField()
    explanation = serializers.CharField()
    revision = serializers.IntegerField(help_text="Send it back with the decision.")
    suggestions_hidden = serializers.BooleanField(help_text="The annotators did not see the LLM suggestion.")
    llm_traits = serializers.ListField(
        child=serializers.CharField(), allow_null=True, help_text="Trait codes the LLM suggested (null: no suggestion)."
    )
    annotations = AnnotationSerializer(many=True)
    differences = DifferencesSerializer()
    agreed = AgreedSerializer()


class ResolutionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    final_traits = serializers.ListField(child=serializers.CharField())
    final_theme = serializers.CharField(allow_null=True)
    removal_reason = serializers.CharField(allow_blank=True)
    resolution_note = serializers.CharField(allow_blank=True)
    resolved_by = serializers.CharField(allow_null=True, help_text="Username.")
    resolved_at = serializers.DateTimeField(allow_null=True)
    revision = serializers.IntegerField()


class ConflictSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Who resolved the item first.")
    current = ResolutionSerializer()


class NotLockedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    round_status = serializers.CharField()


class ChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = serializers.CharField(allow_null=True, help_text="Username.")
    field = serializers.CharField()
    old_value = serializers.JSONField(allow_null=True)
    new_value = serializers.JSONField(allow_null=True)
    by_annotator = serializers.BooleanField(help_text="An annotator's label (false: an adjudication decision).")


class ItemHistorySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    round = serializers.IntegerField()
    expression = serializers.CharField()
    outcome = ResolutionSerializer(allow_null=True, help_text="Null while the round is open.")
    changes = ChangeSerializer(many=True)


def _comparison_data(comparison) -> dict:
    item = comparison.item
    return {
        "id": item.pk,
        "expression": item.expression.text,
        "explanation": item.expression.explanation,
        "revision": item.revision,
        "suggestions_hidden": item.suggestions_hidden,
        "llm_traits": None if comparison.llm_traits is None else [t.code for t in comparison.llm_traits],
        "annotations": [
            {
                "annotator": column.assignment.annotator.get_username(),
                "traits": sorted(column.traits),
                "theme": column.theme.code if column.theme else None,
                "unsure": sorted(column.unsure),
                "flagged": column.flagged,
                "note": column.note,
                "trait_decisions": column.assignment.trait_decisions or {},
                "added_traits": column.assignment.added_traits or [],
            }
            for column in comparison.columns
        ],
        "differences": {
            "theme": comparison.theme_differs,
            "traits": [t.code for t in comparison.differing_traits],
            "unsure": [t.code for t in comparison.unsure_traits],
            "flagged": comparison.flagged,
        },
        "agreed": {"traits": comparison.agreed_traits, "theme": comparison.agreed_theme},
    }


def _resolution_data(item: RoundItem) -> dict:
    return {
        "id": item.pk,
        "status": item.status,
        "final_traits": [t.code for t in sorted(item.final_traits.all(), key=lambda t: t.number)],
        "final_theme": item.final_theme.code if item.final_theme_id else None,
        "removal_reason": item.removal_reason,
        "resolution_note": item.resolution_note,
        "resolved_by": item.resolved_by.get_username() if item.resolved_by_id else None,
        "resolved_at": item.resolved_at,
        "revision": item.revision,
    }


# --- Views ------------------------------------------------------------------------


class AdjudicationListApi(ApiMixin, GenericAPIView):
    """The items of a round that need adjudication, with every annotator's labels."""

    permission_classes = [HasAnyRole, IsAdjudicatorOrResearcher]
    serializer_class = AdjudicationItemSerializer

    @extend_schema(
        responses={
            200: AdjudicationItemSerializer(many=True),
            409: OpenApiResponse(NotLockedSerializer, description="The round is still open: no labels are shown."),
            **error_responses(401, 403, 404),
        },
        description="Adjudicators and researchers; only once the round is locked (409 before).",
    )
    def get(self, request, round_pk: int):
        round_ = round_or_404(request.user, round_pk)
        if not selectors.can_see_all_labels(user=request.user, round=round_):
            return Response({"detail": NOT_LOCKED, "round_status": round_.status}, status=status.HTTP_409_CONFLICT)
        traits = list(selectors.trait_list())
        page = self.paginate_queryset(adjudication_selectors.adjudication_item_list(round=round_))
        data = [_comparison_data(adjudication_selectors.item_comparison(item=item, traits=traits)) for item in page]
        return self.get_paginated_response(AdjudicationItemSerializer(data, many=True).data)


class ResolveInputSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["resolve", "remove"])
    traits = serializers.ListField(
        child=serializers.CharField(), required=False, default=list, help_text="resolve: the final trait codes."
    )
    theme = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="resolve: the final theme code."
    )
    reason = serializers.ChoiceField(
        choices=RemovalReason.choices, required=False, allow_blank=True, default="", help_text="remove: why."
    )
    note = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Optional; required to remove for reason `other`."
    )
    revision = serializers.IntegerField(min_value=0, help_text="The item revision the decision was made on.")


class AdjudicationResolveApi(ApiMixin, APIView):
    """Record the final traits and theme of a disputed item, or remove it. The first adjudicator wins."""

    permission_classes = [HasAnyRole, IsAdjudicator]
    # JSON only: a form has no spelling for the trait list.
    parser_classes = [JSONParser]

    @extend_schema(
        request=ResolveInputSerializer,
        responses={
            200: ResolutionSerializer,
            409: OpenApiResponse(ConflictSerializer, description="Another adjudicator resolved the item first."),
            **error_responses(400, 401, 403, 404),
        },
        description="Adjudicators only, while the round is locked. `revision` comes from the adjudication list; "
        "if someone resolved the item since, nothing is saved and the answer is 409 naming them.",
    )
    def post(self, request, pk: int):
        item = adjudication_selectors.round_item_get(pk=pk)
        if item is None:
            return Response({"detail": "No such item."}, status=status.HTTP_404_NOT_FOUND)
        serializer = ResolveInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            if data["action"] == "remove":
                item = services.adjudication_remove(
                    item=item, user=request.user, reason=data["reason"], note=data["note"], revision=data["revision"]
                )
            else:
                item = services.adjudication_resolve(
                    item=item,
                    user=request.user,
                    traits=data["traits"],
                    theme=data["theme"],
                    note=data["note"],
                    revision=data["revision"],
                )
        except services.ConflictError as exc:
            current = adjudication_selectors.item_resolution_get(pk=pk)
            return Response({"detail": str(exc), "current": _resolution_data(current)}, status=status.HTTP_409_CONFLICT)
        item = adjudication_selectors.item_resolution_get(pk=item.pk)
        return Response(ResolutionSerializer(_resolution_data(item)).data)


class ItemHistoryApi(ApiMixin, APIView):
    """Every change to an item's labels and decisions; annotators see only their own until the round is locked."""

    permission_classes = [HasAnyRole]

    @extend_schema(
        responses={200: ItemHistorySerializer, **error_responses(401, 403, 404)},
        description="Researchers and adjudicators see every item; annotators the items they were assigned "
        "(404 for the rest). While the round is open an annotator sees only their own changes and no outcome.",
    )
    def get(self, request, pk: int):
        item = item_or_404(request.user, pk)
        changes = selectors.item_history(item=item, user=request.user)
        data = {
            "id": item.pk,
            "round": item.round_id,
            "expression": item.expression.text,
            "outcome": _resolution_data(item) if item.round.status != RoundStatus.OPEN else None,
            "changes": [
                {
                    "id": change.pk,
                    "at": change.at,
                    "actor": change.actor.get_username() if change.actor else None,
                    "field": change.field,
                    "old_value": change.old_value,
                    "new_value": change.new_value,
                    "by_annotator": change.assignment_id is not None,
                }
                for change in changes
            ],
        }
        return Response(ItemHistorySerializer(data).data)
