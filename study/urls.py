"""URL routes of the study: participant pages under /s/, researcher pages under /studies/, API under /api/study/."""

from django.urls import path

from .apis import results as results_apis
from .apis import studies as studies_apis
from .views import figures, participant, prep, results, studies

app_name = "study"

urlpatterns = [
    # Participants (anonymous, arriving from Prolific).
    path("s/<slug:slug>/", participant.entry, name="entry"),
    path("s/<slug:slug>/run/", participant.run, name="run"),
    path("s/<slug:slug>/images/<str:key>/", participant.artwork_image, name="image"),
    # Development only (PROLIFIC_COMPLETE_LOCAL): where the finish lands instead of Prolific.
    path("s/<slug:slug>/done/", participant.local_done, name="done"),
    # Researchers.
    path("studies/", studies.study_list, name="list"),
    path("studies/import/", studies.study_import, name="import"),
    path("studies/<slug:slug>/", studies.study_detail, name="detail"),
    path("studies/<slug:slug>/status/", studies.study_transition, name="transition"),
    path("studies/<slug:slug>/preview/", participant.preview_start, name="preview"),
    path("studies/<slug:slug>/terms/", prep.study_terms, name="terms"),
    path("studies/<slug:slug>/prepare/", prep.study_prepare, name="prepare"),
    path("studies/<slug:slug>/results/", results.study_results, name="results"),
    path("studies/<slug:slug>/results/figure/<slug:name>.<slug:fmt>", figures.study_figure_file, name="results_figure"),
    path("studies/<slug:slug>/export.csv", results.study_export, name="export"),
]

# Mounted under /api/study/ by vivid_site/urls.py.
api_urlpatterns = [*studies_apis.urlpatterns, *results_apis.urlpatterns]
