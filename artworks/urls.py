"""URL routes of the artwork pages (under /evaluation/) and their API (under /api/evaluation/).

The paths are those the pipeline had inside the evaluation app; only the app that serves them changed.
"""

from django.urls import path

from .apis import collections as collection_apis
from .apis import report as report_apis
from .apis import runs as run_apis
from .views import collections, figures, report, runs

app_name = "artworks"

urlpatterns = [
    path("artwork-runs/", runs.artwork_run_list_page, name="run_list"),
    path("artwork-runs/<int:pk>/", runs.artwork_run_detail, name="run_detail"),
    path("artwork-runs/<int:pk>/artworks/<int:artwork_pk>/", runs.artwork_run_artwork, name="run_artwork"),
    path("artwork-runs/<int:pk>/report/", report.artwork_report_page, name="report"),
    path(
        "artwork-runs/<int:pk>/report/figure/<slug:name>.<slug:fmt>",
        figures.artwork_report_figure_file,
        name="report_figure",
    ),
    path("artwork-runs/<int:pk>/export/", report.artwork_export, name="export"),
    path("collections/", collections.collection_list, name="collection_list"),
    path("collections/import/", collections.collection_import, name="collection_import"),
    path("collections/<int:pk>/", collections.collection_detail, name="collection_detail"),
    path("collections/<int:pk>/artworks/<int:artwork_pk>/", collections.artwork_detail, name="artwork_detail"),
    path("collections/<int:pk>/artworks/<int:artwork_pk>/image/", collections.artwork_image, name="artwork_image"),
]

# Included by vivid_site under /api/evaluation/ with the namespace "artworks-api".
api_urlpatterns = (
    [
        path("collections/", collection_apis.CollectionListApi.as_view(), name="collection_list"),
        path("collections/<int:pk>/", collection_apis.CollectionDetailApi.as_view(), name="collection_detail"),
        path("artwork-runs/", run_apis.ArtworkRunListApi.as_view(), name="run_list"),
        path("artwork-runs/<int:pk>/", run_apis.ArtworkRunDetailApi.as_view(), name="run_detail"),
        path("artwork-runs/<int:pk>/cancel/", run_apis.ArtworkRunCancelApi.as_view(), name="run_cancel"),
        path("artwork-runs/<int:pk>/resume/", run_apis.ArtworkRunResumeApi.as_view(), name="run_resume"),
        path("artwork-runs/<int:pk>/report/", report_apis.ArtworkReportApi.as_view(), name="report"),
    ],
    "artworks-api",
)
