"""URL routes of the artwork pages (under /artworks/) and their API (under /api/artworks/).

They were under /evaluation/ and /api/evaluation/ while the pipeline lived in the evaluation app;
those addresses answer 308 with the new ones (``moved_urlpatterns``).
"""

from django.urls import path, re_path

from core.views.moved import moved_to

from .apis import collections as collection_apis
from .apis import report as report_apis
from .apis import runs as run_apis
from .views import collections, figures, report, runs

app_name = "artworks"

urlpatterns = [
    path("runs/", runs.artwork_run_list_page, name="run_list"),
    path("runs/<int:pk>/", runs.artwork_run_detail, name="run_detail"),
    path("runs/<int:pk>/artworks/<int:artwork_pk>/", runs.artwork_run_artwork, name="run_artwork"),
    path("runs/<int:pk>/report/", report.artwork_report_page, name="report"),
    path(
        "artwork-runs/<int:pk>/report/figure/<slug:name>.<slug:fmt>",
        figures.artwork_report_figure_file,
        name="report_figure",
    ),
    path("runs/<int:pk>/export/", report.artwork_export, name="export"),
    path("collections/", collections.collection_list, name="collection_list"),
    path("collections/import/", collections.collection_import, name="collection_import"),
    path("collections/<int:pk>/", collections.collection_detail, name="collection_detail"),
    path("collections/<int:pk>/artworks/<int:artwork_pk>/", collections.artwork_detail, name="artwork_detail"),
    path("collections/<int:pk>/artworks/<int:artwork_pk>/image/", collections.artwork_image, name="artwork_image"),
]

# Included by vivid_site under /api/artworks/ with the namespace "artworks-api".
api_urlpatterns = (
    [
        path("collections/", collection_apis.CollectionListApi.as_view(), name="collection_list"),
        path("collections/<int:pk>/", collection_apis.CollectionDetailApi.as_view(), name="collection_detail"),
        path("runs/", run_apis.ArtworkRunListApi.as_view(), name="run_list"),
        path("runs/<int:pk>/", run_apis.ArtworkRunDetailApi.as_view(), name="run_detail"),
        path("runs/<int:pk>/cancel/", run_apis.ArtworkRunCancelApi.as_view(), name="run_cancel"),
        path("runs/<int:pk>/resume/", run_apis.ArtworkRunResumeApi.as_view(), name="run_resume"),
        path("runs/<int:pk>/report/", report_apis.ArtworkReportApi.as_view(), name="report"),
    ],
    "artworks-api",
)

# Included by vivid_site at the root: the addresses before /artworks/ (scripts and bookmarks still use them).
moved_urlpatterns = [
    re_path(r"^evaluation/artwork-runs/(?P<rest>.*)$", moved_to("artworks:run_list"), name="moved_runs"),
    re_path(r"^evaluation/collections/(?P<rest>.*)$", moved_to("artworks:collection_list"), name="moved_collections"),
    re_path(r"^api/evaluation/artwork-runs/(?P<rest>.*)$", moved_to("artworks-api:run_list"), name="moved_api_runs"),
    re_path(
        r"^api/evaluation/collections/(?P<rest>.*)$",
        moved_to("artworks-api:collection_list"),
        name="moved_api_collections",
    ),
]
