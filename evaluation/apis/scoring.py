"""Human scoring over the API (VIVID §4.1.1).

Researchers create and list scoring tasks. A rater lists their own ratings of a
task and submits scores. Blindness: a rater's endpoints read ``rater=user`` only
(anyone else's rating is a 404), and nothing here carries a judge score, another
rater's score or the model's name.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import MAX_INT32, ApiMixin, error_responses
from core.apis.idempotency import IDEMPOTENCY_KEY_HEADER, request_idempotency_key
from core.permissions import IsResearcher
from core.roles import ANNOTATOR, has_role

from ..forms.scoring import NOTE_MAX_LENGTH, SCORE_FIELDS
from ..models import HumanRating, RatingStatus
from ..selectors import scoring as queries
from ..selectors.lookups import rating_or_404, scoring_task_or_404
from ..services.scoring import RatingConflict, rating_submit, scoring_task_create, scoring_task_size_check


class IsRater(BasePermission):
    message = "Only raters (the Annotator role) can do this."

    def has_permission(self, request, view):
        return has_role(request.user, ANNOTATOR)


class RaterProgressSerializer(serializers.Serializer):
    rater = serializers.CharField()
    submitted = serializers.IntegerField()
    total = serializers.IntegerField()


class ScoringTaskSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    run = serializers.IntegerField(source="run_id", help_text="The generation run whose explanations are scored.")
    n_items = serializers.IntegerField(help_text="Sample size.")
    n_shared = serializers.IntegerField(help_text="Items every rater scores.")
    seed = serializers.IntegerField()
    sample = serializers.ListField(
        child=serializers.IntegerField(), help_text="The sampled run item ids, in sample order."
    )
    raters = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_raters(self, task) -> list[str]:
        return sorted(user.get_username() for user in task.raters.all())

    @extend_schema_field(RaterProgressSerializer(many=True))
    def get_progress(self, task) -> list[dict]:
        return [{key: row[key] for key in ("rater", "submitted", "total")} for row in queries.task_progress(task)]


class ScoringTaskCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, help_text="Raters see it: do not put the model in it.")
    run = serializers.PrimaryKeyRelatedField(
        queryset=queries.scoring_runs(),
        help_text="A finished generation run.",
    )
    raters = serializers.SlugRelatedField(
        slug_field="username",
        many=True,
        queryset=queries.rater_choices(),
        help_text="Usernames of people with the Annotator role.",
    )
    n_items = serializers.IntegerField(min_value=1, max_value=MAX_INT32, default=200)
    n_shared = serializers.IntegerField(min_value=0, max_value=MAX_INT32, default=50)
    seed = serializers.IntegerField(
        min_value=0,
        max_value=MAX_INT32,
        required=False,
        allow_null=True,
        help_text="Empty for a random seed (recorded).",
    )

    def validate(self, data):
        try:
            scoring_task_size_check(n_items=data["n_items"], n_shared=data["n_shared"])
        except DjangoValidationError as exc:
            raise serializers.ValidationError({"n_shared": ["At most n_items."]}) from exc
        return data


class HumanRatingSerializer(serializers.Serializer):
    """One of the rater's own ratings: what they score and what they gave."""

    id = serializers.IntegerField()
    task = serializers.IntegerField(source="task_id")
    position = serializers.IntegerField(help_text="Order in the rater's queue.")
    status = serializers.CharField(help_text=f"One of {', '.join(RatingStatus.values)}.")
    expression = serializers.CharField(source="item.expression.text")
    reference_explanation = serializers.CharField(source="item.expression.explanation")
    explanation = serializers.CharField(
        source="item.response", help_text="The explanation to score (the model is not named)."
    )
    score = serializers.IntegerField(allow_null=True, help_text="Overall, 0-5.")
    accuracy = serializers.IntegerField(allow_null=True, help_text="Semantic accuracy, 0-5.")
    completeness = serializers.IntegerField(allow_null=True, help_text="Interpretive completeness, 0-5.")
    native_alignment = serializers.IntegerField(
        allow_null=True, help_text="Alignment with native speakers' understanding, 0-5."
    )
    note = serializers.CharField()
    revision = serializers.IntegerField(help_text="Send it back with a submit; a stale one is refused with 409.")
    submitted_at = serializers.DateTimeField(allow_null=True)


class HumanRatingSubmitSerializer(serializers.Serializer):
    score = serializers.IntegerField(min_value=0, max_value=5, help_text="Overall, 0-5 (required).")
    accuracy = serializers.IntegerField(min_value=0, max_value=5, required=False, allow_null=True)
    completeness = serializers.IntegerField(min_value=0, max_value=5, required=False, allow_null=True)
    native_alignment = serializers.IntegerField(min_value=0, max_value=5, required=False, allow_null=True)
    note = serializers.CharField(max_length=NOTE_MAX_LENGTH, required=False, allow_blank=True, default="")
    revision = serializers.IntegerField(min_value=0, help_text="The revision the scores were based on.")

    def values(self) -> dict:
        return {field: self.validated_data.get(field) for field in SCORE_FIELDS}


class HumanRatingConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    current = HumanRatingSerializer(help_text="Your scores as saved now.")


def _same(rating: HumanRating, values: dict, note: str) -> bool:
    return (
        rating.status == RatingStatus.SUBMITTED
        and all(getattr(rating, field) == value for field, value in values.items())
        and rating.note == note.strip()
    )


class ScoringTaskListApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    # JSON only: a form has no spelling for the rater list or a null seed.
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="evaluation_scoring_tasks_list",
        responses={200: ScoringTaskSerializer(many=True), **error_responses(401, 403)},
        description="Scoring tasks with each rater's progress (counts only).",
    )
    def get(self, request):
        return Response(ScoringTaskSerializer(queries.task_list(), many=True).data)

    @extend_schema(
        operation_id="evaluation_scoring_tasks_create",
        request=ScoringTaskCreateSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: ScoringTaskSerializer,
            200: OpenApiResponse(
                ScoringTaskSerializer,
                description="A repeat of an earlier request's Idempotency-Key: the task that request created.",
            ),
            **error_responses(400, 401, 403),
        },
        description="Sample n_items finished items of a generation run (seeded, recorded); n_shared go to every rater, "
        "the rest are split evenly; each rater's queue comes in its own random order. Send an Idempotency-Key to "
        "retry safely: a repeat answers 200 with the task the first request created, and creates none.",
    )
    def post(self, request):
        serializer = ScoringTaskCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        task = scoring_task_create(
            name=data["name"],
            run=data["run"],
            raters=list(data["raters"]),
            n_items=data["n_items"],
            n_shared=data["n_shared"],
            seed=data.get("seed"),
            user=request.user,
            idempotency_key=request_idempotency_key(request),
        )
        answer = status.HTTP_200_OK if task.idempotent_repeat else status.HTTP_201_CREATED
        return Response(ScoringTaskSerializer(queries.task_list().get(pk=task.pk)).data, status=answer)


class ScoringTaskDetailApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="evaluation_scoring_tasks_retrieve",
        responses={200: ScoringTaskSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, pk: int):
        task = scoring_task_or_404(pk)
        return Response(ScoringTaskSerializer(task).data)


class MyRatingListApi(ApiMixin, APIView):
    permission_classes = [IsRater]

    @extend_schema(
        operation_id="evaluation_scoring_my_ratings_list",
        responses={200: HumanRatingSerializer(many=True), **error_responses(401, 403, 404)},
        description="Your own ratings of a task you rate, in your queue order. Nobody else's.",
    )
    def get(self, request, pk: int):
        task = scoring_task_or_404(pk, rater=request.user)
        return Response(HumanRatingSerializer(queries.rater_ratings(task=task, user=request.user), many=True).data)


class RatingSubmitApi(ApiMixin, APIView):
    permission_classes = [IsRater]
    # JSON only: a form has no spelling for a null score.
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="evaluation_scoring_ratings_retrieve",
        responses={200: HumanRatingSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, pk: int):
        return Response(HumanRatingSerializer(rating_or_404(request.user, pk)).data)

    @extend_schema(
        operation_id="evaluation_scoring_ratings_submit",
        request=HumanRatingSubmitSerializer,
        responses={
            200: HumanRatingSerializer,
            409: OpenApiResponse(
                HumanRatingConflictSerializer, description="Saved meanwhile with another revision; nothing changed."
            ),
            **error_responses(400, 401, 403, 404),
        },
        description="Submit (or change) your scores. The same scores sent again are already saved: no new revision.",
    )
    def post(self, request, pk: int):
        rating = rating_or_404(request.user, pk)
        serializer = HumanRatingSubmitSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values, note = serializer.values(), serializer.validated_data["note"]
        if _same(rating, values, note):
            return Response(HumanRatingSerializer(rating).data)
        try:
            rating_submit(
                rating=rating,
                user=request.user,
                values=values,
                note=note,
                revision=serializer.validated_data["revision"],
            )
        except RatingConflict as exc:
            current = rating_or_404(request.user, pk)
            if _same(current, values, note):
                return Response(HumanRatingSerializer(current).data)
            return Response(
                {"detail": str(exc), "current": HumanRatingSerializer(current).data}, status=status.HTTP_409_CONFLICT
            )
        return Response(HumanRatingSerializer(rating_or_404(request.user, pk)).data)
