from django.urls import path
from rest_framework.routers import DefaultRouter

from . import apis
from .apis import adjudication as adjudication_api
from .apis import quality as quality_api
from .apis import review as review_api
from .apis import rounds as rounds_api
from .apis import stats as stats_api
from .views import adjudication, corpus, figures, review, rounds, stats
from .views import quality as quality_views

app_name = "annotation"

urlpatterns = [
    # The corpus
    path("datasets/", corpus.dataset_list, name="dataset_list"),
    path("datasets/<int:pk>/", corpus.dataset_detail, name="dataset_detail"),
    path("datasets/<int:pk>/export/", corpus.dataset_export, name="dataset_export"),
    path("imports/new/", corpus.import_start, name="import_start"),
    path("imports/<int:pk>/", corpus.import_detail, name="import_detail"),
    path("imports/<int:pk>/confirm/", corpus.import_confirm, name="import_confirm"),
    path("imports/<int:pk>/cancel/", corpus.import_cancel, name="import_cancel"),
    path("imports/<int:pk>/dataset/", corpus.import_retarget, name="import_retarget"),
    # Rounds, suggestions and frozen versions (researchers)
    path("rounds/", rounds.round_list, name="round_list"),
    path("rounds/new/", rounds.round_new, name="round_new"),
    path("rounds/<int:pk>/", rounds.round_detail, name="round_detail"),
    path("rounds/<int:pk>/lock/", rounds.round_lock, name="round_lock"),
    path("rounds/<int:pk>/reopen/", rounds.round_reopen, name="round_reopen"),
    path("rounds/<int:pk>/freeze/", rounds.round_freeze, name="round_freeze"),
    path("suggestions/new/", rounds.suggestion_import, name="suggestion_import"),
    path("versions/", rounds.version_list, name="version_list"),
    path("versions/<int:pk>/", rounds.version_detail, name="version_detail"),
    path("versions/<int:pk>/export/", rounds.version_export, name="version_export"),
    path("versions/<int:pk>/export/hf/", rounds.version_export_hf, name="version_export_hf"),
    # Review (annotators)
    path("rounds/<int:round_pk>/review/", review.queue, name="review_queue"),
    path("rounds/<int:round_pk>/review/<int:assignment_pk>/", review.item, name="review_item"),
    path("rounds/<int:round_pk>/review/<int:assignment_pk>/draft/", review.draft, name="review_draft"),
    path("rounds/<int:round_pk>/review/<int:assignment_pk>/skip/", review.skip, name="review_skip"),
    path("rounds/<int:round_pk>/my-items/", review.outcomes, name="review_outcomes"),
    # Adjudication and item history
    path("rounds/<int:round_pk>/adjudicate/", adjudication.queue, name="adjudication_queue"),
    path("rounds/<int:round_pk>/adjudicate/<int:item_pk>/", adjudication.item, name="adjudication_item"),
    path("rounds/<int:round_pk>/items/<int:item_pk>/", adjudication.item_detail, name="item_detail"),
    # Agreement statistics
    path("rounds/<int:pk>/stats/", stats.round_stats, name="round_stats"),
    # Annotator quality: controls, drift, speed, recalibration
    path("rounds/<int:pk>/quality/", quality_views.round_quality, name="round_quality"),
    path("rounds/<int:pk>/quality/settings/", quality_views.quality_settings, name="round_quality_settings"),
    path("rounds/<int:pk>/quality/controls/", quality_views.controls_add, name="round_controls_add"),
    path("rounds/<int:pk>/quality/recalibrate/", quality_views.recalibrate, name="round_recalibrate"),
    path(
        "rounds/<int:pk>/quality/figure/<slug:name>.<slug:fmt>",
        figures.round_quality_figure_file,
        name="round_quality_figure",
    ),
    path("rounds/<int:pk>/stats/figure/<slug:name>.<slug:fmt>", figures.round_stats_figure, name="round_stats_figure"),
]

# No ".json" suffix routes: the viewsets take no format argument, and ?format is an export parameter.
router = DefaultRouter()
router.include_format_suffixes = False
router.APIRootView = apis.ApiRootView
router.register("datasets", apis.DatasetViewSet, basename="dataset")
router.register("expressions", apis.ExpressionViewSet, basename="expression")
router.register("traits", apis.TraitViewSet, basename="trait")
router.register("themes", apis.ThemeViewSet, basename="theme")

# Included by vivid_site under /api/ with the namespace "api".
api_urlpatterns = [
    path("imports/", apis.ImportApi.as_view(), name="import"),
    path("rounds/", rounds_api.RoundListApi.as_view(), name="round_list"),
    path("rounds/<int:pk>/", rounds_api.RoundDetailApi.as_view(), name="round_detail"),
    path("rounds/<int:pk>/lock/", rounds_api.RoundLockApi.as_view(), name="round_lock"),
    path("rounds/<int:pk>/stats/", stats_api.RoundStatsApi.as_view(), name="round_stats"),
    path("rounds/<int:pk>/quality/", quality_api.RoundQualityApi.as_view(), name="round_quality"),
    path("rounds/<int:round_pk>/assignments/", review_api.AssignmentListApi.as_view(), name="assignment_list"),
    path("assignments/<int:pk>/", review_api.AssignmentDetailApi.as_view(), name="assignment_detail"),
    path("assignments/<int:pk>/submit/", review_api.AssignmentSubmitApi.as_view(), name="assignment_submit"),
    path(
        "rounds/<int:round_pk>/adjudication/",
        adjudication_api.AdjudicationListApi.as_view(),
        name="adjudication_list",
    ),
    path("items/<int:pk>/resolve/", adjudication_api.AdjudicationResolveApi.as_view(), name="adjudication_resolve"),
    path("items/<int:pk>/history/", adjudication_api.ItemHistoryApi.as_view(), name="item_history"),
    path("suggestions/", rounds_api.SuggestionImportApi.as_view(), name="suggestion_import"),
    path("versions/", rounds_api.VersionListApi.as_view(), name="version_list"),
    path("versions/<int:pk>/", rounds_api.VersionDetailApi.as_view(), name="version_detail"),
    path("versions/<int:pk>/export/", rounds_api.VersionExportApi.as_view(), name="version_export"),
    *router.urls,
]
