"""The annotator's review over the API: own assignments only, blind to everyone else's.

An assignment that is not the caller's answers 404, exactly like one that
does not exist, so the API never tells who else reviews an item.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses
from core.roles import ANNOTATOR, has_role

from .. import selectors, services
from ..forms.review import NOTE_MAX_LENGTH, answer_matches
from ..models import AssignmentStatus, TraitDecision
from ..selectors.lookups import assignment_or_404, round_or_404


class IsAnnotator(BasePermission):
    message = "Only annotators review items."

    def has_permission(self, request, view):
        return has_role(request.user, ANNOTATOR)


class AssignmentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    round = serializers.IntegerField(source="item.round_id")
    item = serializers.IntegerField(source="item_id", help_text="The round item (one expression in the round).")
    position = serializers.IntegerField(help_text="Order in your queue, from 1.")
    status = serializers.ChoiceField(choices=AssignmentStatus.choices)
    expression = serializers.CharField(source="item.expression.text")
    explanation = serializers.CharField(source="item.expression.explanation")
    suggestions_shown = serializers.BooleanField(
        help_text="False when the round hides the suggestions of this item (anchoring control) or has none."
    )
    suggested_traits = serializers.ListField(
        child=serializers.CharField(), help_text="Trait codes to accept, reject or mark unsure (empty when not shown)."
    )
    theme = serializers.CharField(source="theme.code", allow_null=True, default=None, help_text="Your theme code.")
    trait_decisions = serializers.DictField(
        child=serializers.ChoiceField(choices=TraitDecision.choices),
        help_text="Your decision per suggested trait code.",
    )
    added_traits = serializers.ListField(child=serializers.CharField(), help_text="Trait codes you added.")
    flagged = serializers.BooleanField()
    note = serializers.CharField(allow_blank=True)
    draft = serializers.DictField(help_text="Unsubmitted input autosaved by the review page.")
    revision = serializers.IntegerField(help_text="Send it back with a submit; it changes on every submit.")
    submitted_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField()


class AssignmentSubmitSerializer(serializers.Serializer):
    theme = serializers.CharField(help_text="Theme code, e.g. `criticism`.")
    trait_decisions = serializers.DictField(
        child=serializers.ChoiceField(choices=TraitDecision.choices),
        required=False,
        default=dict,
        help_text="A decision for every suggested trait code, and only those.",
    )
    added_traits = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list,
        help_text="Trait codes present but not suggested (all present traits when suggestions are not shown).",
    )
    flagged = serializers.BooleanField(default=False, help_text="Flag for removal or discussion.")
    note = serializers.CharField(allow_blank=True, default="", max_length=NOTE_MAX_LENGTH)
    revision = serializers.IntegerField(
        min_value=0,
        help_text="The `revision` you read. If the assignment was submitted since, the answer is 409 and nothing changes.",
    )
    seconds = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="Seconds the answer took, by your client's clock (kept for the speed figures; capped at 1800).",
    )


class AssignmentConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    current = AssignmentSerializer(help_text="Your answer as it is saved now.")


def _with_suggestions(assignment, codes: dict[int, list[str]] | None = None):
    """Attach what the serializer shows about the suggestions; a list passes the codes of all its rows."""
    item = assignment.item
    assignment.suggestions_shown = not item.suggestions_hidden and item.round.suggestion_set_id is not None
    if codes is None:
        codes = selectors.suggested_codes_for(items=[item])
    assignment.suggested_traits = codes[item.pk]
    return assignment


class AssignmentListApi(ApiMixin, GenericAPIView):
    """Your assignments in a round, in queue order, with your own answers."""

    permission_classes = [IsAnnotator]
    serializer_class = AssignmentSerializer

    @extend_schema(responses={200: AssignmentSerializer(many=True), **error_responses(401, 403, 404)})
    def get(self, request, round_pk: int):
        round_ = round_or_404(request.user, round_pk, annotated=True)
        queue = selectors.annotator_queue(round=round_, user=request.user)
        page = self.paginate_queryset(queue)
        codes = selectors.suggested_codes_for(items=[a.item for a in page])
        rows = [_with_suggestions(a, codes) for a in page]
        return self.get_paginated_response(AssignmentSerializer(rows, many=True).data)


class AssignmentDetailApi(ApiMixin, APIView):
    """One of your assignments; anyone else's is 404."""

    permission_classes = [IsAnnotator]

    @extend_schema(responses={200: AssignmentSerializer, **error_responses(401, 403, 404)})
    def get(self, request, pk: int):
        return Response(AssignmentSerializer(_with_suggestions(assignment_or_404(request.user, pk))).data)


class AssignmentSubmitApi(ApiMixin, APIView):
    """Submit (or, until the round is locked, change) your review of an item."""

    permission_classes = [IsAnnotator]
    # JSON only: a form has no spelling for the trait decisions and added traits.
    parser_classes = [JSONParser]

    @extend_schema(
        request=AssignmentSubmitSerializer,
        responses={
            200: AssignmentSerializer,
            **error_responses(400, 401, 403, 404),
            409: OpenApiResponse(
                AssignmentConflictSerializer,
                description="Submitted meanwhile with another revision (another tab or client); nothing was changed.",
            ),
        },
        description=(
            "Record your theme, a decision per suggested trait, added traits, the flag and a note. "
            "Sending the same answer twice with the same revision is harmless (200, no new revision). "
            "400 also when the round is locked."
        ),
    )
    def post(self, request, pk: int):
        assignment = assignment_or_404(request.user, pk)
        serializer = AssignmentSubmitSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            saved = services.assignment_submit(assignment=assignment, user=request.user, **data)
        except services.ConflictError as exc:
            answer = {key: value for key, value in data.items() if key not in ("revision", "seconds")}
            if answer_matches(exc.current, **answer):
                saved = exc.current
            else:
                current = _with_suggestions(selectors.assignment_get(pk=pk, user=request.user))
                return Response(
                    {"detail": str(exc), "current": AssignmentSerializer(current).data},
                    status=409,
                )
        saved = selectors.assignment_get(pk=saved.pk, user=request.user)
        return Response(AssignmentSerializer(_with_suggestions(saved)).data)


__all__ = ["AssignmentDetailApi", "AssignmentListApi", "AssignmentSubmitApi"]
