"""URL routes of the evaluation pages (under /evaluation/) and its API (under /api/evaluation/)."""

from django.urls import path

from . import apis
from .views import registry, results, runs

app_name = "evaluation"

urlpatterns = [
    path("models/", registry.model_list, name="model_list"),
    path("models/new/", registry.model_new, name="model_new"),
    path("prompts/", registry.prompt_list, name="prompt_list"),
    path("prompts/new/", registry.prompt_new, name="prompt_new"),
    path("prompts/<int:pk>/", registry.prompt_detail, name="prompt_detail"),
    path("runs/", runs.run_list, name="run_list"),
    path("runs/new/<str:kind>/", runs.run_new, name="run_new"),
    path("runs/<int:pk>/", runs.run_detail, name="run_detail"),
    path("runs/<int:pk>/progress/", runs.run_progress, name="run_progress"),
    path("runs/<int:pk>/cancel/", runs.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/resume/", runs.run_resume, name="run_resume"),
    path("runs/<int:run_pk>/items/<int:pk>/", runs.item_detail, name="item_detail"),
    path("results/", results.results, name="results"),
]

# Included by vivid_site under /api/evaluation/ with the namespace "evaluation-api".
api_urlpatterns = (
    [
        path("models/", apis.ModelListApi.as_view(), name="model_list"),
        path("prompts/", apis.PromptListApi.as_view(), name="prompt_list"),
        path("runs/", apis.RunListApi.as_view(), name="run_list"),
        path("runs/<int:pk>/", apis.RunDetailApi.as_view(), name="run_detail"),
        path("runs/<int:pk>/cancel/", apis.RunCancelApi.as_view(), name="run_cancel"),
        path("runs/<int:pk>/resume/", apis.RunResumeApi.as_view(), name="run_resume"),
        path("runs/<int:pk>/items/", apis.RunItemListApi.as_view(), name="item_list"),
        path("runs/<int:run_pk>/items/<int:pk>/", apis.RunItemDetailApi.as_view(), name="item_detail"),
        path("runs/<int:pk>/report/", apis.RunReportApi.as_view(), name="run_report"),
        path("results/<str:table>/", apis.ResultsTableApi.as_view(), name="results_table"),
    ],
    "evaluation-api",
)
