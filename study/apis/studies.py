"""Study API (studies): list, detail, package import and status changes, for researchers."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses
from core.apis.idempotency import IDEMPOTENCY_KEY_HEADER, request_idempotency_key
from core.permissions import IsResearcher

from ..forms import StudyImportForm
from ..models import StudyStatus
from ..selectors import studies as selectors
from ..selectors.lookups import study_or_404
from ..services import imports
from ..services import studies as services

# The package's slug; the example is the one tests/study/factories.py imports, so a fuzz run reaches a study.
STUDY_SLUG = OpenApiParameter(
    "slug",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The study's slug, from its package.",
    examples=[OpenApiExample("A study", value="artworks")],
)
STUDY_IMPORTED = inline_serializer("StudyImported", fields={"slug": serializers.SlugField()})


class GroupProgressSerializer(serializers.Serializer):
    group = serializers.CharField()
    started = serializers.IntegerField(help_text="Participants who consented (previews and test data excluded).")
    completed = serializers.IntegerField(help_text="Valid completions, the ones the quota counts.")
    quota = serializers.IntegerField()


class StudySerializer(serializers.Serializer):
    slug = serializers.SlugField()
    title = serializers.CharField()
    status = serializers.CharField(help_text=f"One of {', '.join(StudyStatus.values)}.")
    groups = serializers.ListField(child=serializers.CharField())
    artworks_per_participant = serializers.IntegerField()
    qc_per_participant = serializers.IntegerField()
    qc_threshold = serializers.FloatField()
    quota_per_group = serializers.IntegerField()
    similarity_threshold = serializers.FloatField()
    devices = serializers.ListField(
        child=serializers.CharField(),
        help_text="The devices participants may use, sent to Prolific as device_compatibility: desktop, tablet, mobile.",
    )
    highlight_status = serializers.CharField()
    terms_status = serializers.CharField()
    package_sha256 = serializers.CharField()
    created_at = serializers.DateTimeField()
    launched_at = serializers.DateTimeField(allow_null=True)
    closed_at = serializers.DateTimeField(allow_null=True)
    progress = GroupProgressSerializer(many=True)


class ArtworkSummarySerializer(serializers.Serializer):
    id = serializers.CharField(source="key")
    title = serializers.CharField()
    culture = serializers.CharField()
    qc = serializers.BooleanField(source="is_qc")
    questions = serializers.IntegerField(source="n_questions")
    descriptions = serializers.IntegerField(source="n_descriptions")
    assigned = serializers.IntegerField(source="n_assigned", help_text="Times given to real participants.")


class ChecklistItemSerializer(serializers.Serializer):
    key = serializers.CharField(
        help_text="package, pairs, terms, glosses (a warning: confirmed terms found in no description), "
        "preview, consent (a warning, not needed to launch), alt_text (a warning: detail.missing lists the "
        "artworks without an image text alternative: artwork, title) or translations (a warning: detail.missing lists "
        "each text a group whose language is not English would read in English: group, language, artwork, "
        "title, question, field, english)."
    )
    done = serializers.BooleanField()
    detail = serializers.DictField()


class StudyDetailSerializer(StudySerializer):
    completion_code = serializers.CharField()
    screenout_code = serializers.CharField()
    no_consent_code = serializers.CharField()
    highlight_error = serializers.CharField()
    terms_error = serializers.CharField()
    checklist = ChecklistItemSerializer(many=True)
    launch_blockers = serializers.ListField(child=serializers.CharField())
    artworks = ArtworkSummarySerializer(many=True, source="artworks_summary")


class ImportErrorsSerializer(serializers.Serializer):
    errors = serializers.ListField(child=serializers.CharField(), help_text="Every problem, naming artwork and field.")


def _detail(study) -> dict:
    study.checklist = selectors.study_checklist(study)
    study.launch_blockers = selectors.study_launch_blockers(study=study) if study.status == StudyStatus.DRAFT else []
    study.artworks_summary = list(selectors.study_artworks(study=study))
    return StudyDetailSerializer(study).data


class StudyListApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="study_list",
        responses={200: StudySerializer(many=True), **error_responses(401, 403)},
    )
    def get(self, request):
        """Every study, newest first, with per-group progress toward its quota."""
        return Response(StudySerializer(selectors.study_list(), many=True).data)


class StudyDetailApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="study_retrieve",
        parameters=[STUDY_SLUG],
        responses={200: StudyDetailSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, slug: str):
        """One study with its launch checklist and artworks."""
        return Response(_detail(study_or_404(slug, progress=True)))


class StudyImportApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser]

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        # One shape for every refusal of a package, the NUL check of ApiMixin included.
        if response.status_code == status.HTTP_400_BAD_REQUEST and isinstance(response.data, dict):
            response.data = {
                "errors": [
                    f"{field}: {message}"
                    for field, messages in response.data.items()
                    for message in (messages if isinstance(messages, list) else [messages])
                ]
            }
        return response

    @extend_schema(exclude=True)
    def get(self, request):
        # The schema's GET /api/study/{slug}/ covers this URL too; "import" is a reserved slug, so no such study.
        raise Http404

    @extend_schema(
        operation_id="study_import",
        request={
            "multipart/form-data": inline_serializer(
                "StudyImportInput", fields={"package": serializers.FileField(help_text="The study package as a .zip.")}
            )
        },
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: OpenApiResponse(STUDY_IMPORTED, description="Imported as a draft; preparation is queued."),
            200: OpenApiResponse(
                STUDY_IMPORTED,
                description="A repeat of an import with the same Idempotency-Key: the first import's study.",
            ),
            400: OpenApiResponse(ImportErrorsSerializer, description="Not imported; nothing was written."),
            **error_responses(401, 403),
        },
    )
    def post(self, request):
        """Import a study package (.zip with study.json and images), all or nothing."""
        form = StudyImportForm(files=request.FILES)
        if not form.is_valid():
            return Response(
                {"errors": [f"package: {error}" for error in form.errors.get("package", [])]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        upload = form.cleaned_data["package"]
        try:
            study = imports.study_import(
                source=upload,
                user=request.user,
                filename=upload.name,
                idempotency_key=request_idempotency_key(request),
            )
        except imports.StudyImportError as exc:
            return Response({"errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        except DjangoValidationError as exc:
            return Response({"errors": exc.messages}, status=status.HTTP_400_BAD_REQUEST)
        return Response(
            {"slug": study.slug}, status=status.HTTP_200_OK if study.idempotent_repeat else status.HTTP_201_CREATED
        )


class StudyTransitionInputSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=list(services.TRANSITIONS))


class StudyTransitionApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="study_transition",
        parameters=[STUDY_SLUG],
        request=StudyTransitionInputSerializer,
        responses={
            200: StudyDetailSerializer,
            409: OpenApiResponse(
                inline_serializer("StudyTransitionRefused", fields={"detail": serializers.CharField()}),
                description="The study's status or preparation does not allow this change.",
            ),
            **error_responses(400, 401, 403, 404),
        },
    )
    def post(self, request, slug: str):
        """Launch, pause, resume or close a study."""
        study = study_or_404(slug, progress=True)
        # A serializer, not request.data.get(): the body may be a list, and the action an object.
        serializer = StudyTransitionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        action = serializer.validated_data["action"]
        try:
            services.study_transition(study=study, action=action, user=request.user)
        except services.StudyTransitionError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(_detail(study_or_404(slug, progress=True)))


urlpatterns = [
    path("", StudyListApi.as_view(), name="study-list"),
    # Before the slug route: "import" is a reserved slug.
    path("import/", StudyImportApi.as_view(), name="study-import"),
    path("<slug:slug>/", StudyDetailApi.as_view(), name="study-detail"),
    path("<slug:slug>/status/", StudyTransitionApi.as_view(), name="study-transition"),
]
