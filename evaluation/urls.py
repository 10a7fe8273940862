"""URL routes of the evaluation pages (under /evaluation/) and its API (under /api/evaluation/)."""

from django.urls import path

from . import apis
from .apis import bias as bias_apis
from .apis import scoring as scoring_apis
from .views import bias, harness, prompts, report, results, runs
from .views import figures as figure_views
from .views import scoring as scoring_views

app_name = "evaluation"

urlpatterns = [
    path("prompts/", prompts.prompt_list, name="prompt_list"),
    path("prompts/new/", prompts.prompt_new, name="prompt_new"),
    path("prompts/<int:pk>/", prompts.prompt_detail, name="prompt_detail"),
    path("runs/", runs.run_list, name="run_list"),
    path("runs/new/<str:kind>/", runs.run_new, name="run_new"),
    path("runs/import/", runs.run_import, name="run_import"),
    path("runs/<int:pk>/", runs.run_detail, name="run_detail"),
    path("runs/<int:pk>/bias/", bias.run_bias, name="run_bias"),
    path("runs/<int:pk>/bias/paraphrases/", bias.run_bias_paraphrase, name="run_bias_paraphrase"),
    path("runs/pairwise/new/", bias.pairwise_new, name="pairwise_new"),
    path("runs/<int:pk>/progress/", runs.run_progress, name="run_progress"),
    path("runs/<int:pk>/cancel/", runs.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/resume/", runs.run_resume, name="run_resume"),
    path("runs/<int:pk>/rerun/", runs.run_rerun, name="run_rerun"),
    path("runs/<int:pk>/reparse/", runs.run_reparse, name="run_reparse"),
    path("runs/<int:run_pk>/items/<int:pk>/", runs.item_detail, name="item_detail"),
    path("results/", results.results, name="results"),
    path("versions/<int:pk>/tasks/", harness.version_tasks, name="version_tasks"),
    path("results/figure/<slug:name>.<slug:fmt>", figure_views.results_figure_file, name="results_figure"),
    path("scoring/", scoring_views.task_list_page, name="scoring_task_list"),
    path("scoring/new/", scoring_views.task_new, name="scoring_task_new"),
    path("scoring/<int:pk>/", scoring_views.task_detail, name="scoring_task_detail"),
    path("scoring/mine/", scoring_views.my_tasks, name="scoring_mine"),
    path("scoring/<int:task_pk>/queue/", scoring_views.queue, name="scoring_queue"),
    path("scoring/<int:task_pk>/ratings/<int:pk>/", scoring_views.item, name="scoring_item"),
    path("scoring/<int:task_pk>/ratings/<int:pk>/draft/", scoring_views.draft, name="scoring_draft"),
    path("runs/<int:pk>/human-report/", report.human_report, name="human_report"),
    path("runs/<int:pk>/human-report/repeat/", report.human_report_repeat, name="human_report_repeat"),
    path(
        "runs/<int:pk>/human-report/figure/<slug:name>.<slug:fmt>",
        figure_views.human_report_figure_file,
        name="human_report_figure",
    ),
]

# Included by vivid_site under /api/evaluation/ with the namespace "evaluation-api".
api_urlpatterns = (
    [
        path("prompts/", apis.PromptListApi.as_view(), name="prompt_list"),
        path("runs/", apis.RunListApi.as_view(), name="run_list"),
        path("runs/import/", apis.RunImportApi.as_view(), name="run_import"),
        path("runs/<int:pk>/", apis.RunDetailApi.as_view(), name="run_detail"),
        path("runs/<int:pk>/cancel/", apis.RunCancelApi.as_view(), name="run_cancel"),
        path("runs/<int:pk>/resume/", apis.RunResumeApi.as_view(), name="run_resume"),
        path("runs/<int:pk>/items/", apis.RunItemListApi.as_view(), name="item_list"),
        path("runs/<int:run_pk>/items/<int:pk>/", apis.RunItemDetailApi.as_view(), name="item_detail"),
        path("runs/<int:pk>/report/", apis.RunReportApi.as_view(), name="run_report"),
        path("runs/<int:pk>/bias/", bias_apis.JudgeBiasApi.as_view(), name="run_bias"),
        path("results/<str:table>/", apis.ResultsTableApi.as_view(), name="results_table"),
        path("scoring/tasks/", scoring_apis.ScoringTaskListApi.as_view(), name="scoring_task_list"),
        path("scoring/tasks/<int:pk>/", scoring_apis.ScoringTaskDetailApi.as_view(), name="scoring_task_detail"),
        path("scoring/tasks/<int:pk>/ratings/", scoring_apis.MyRatingListApi.as_view(), name="scoring_my_ratings"),
        path("scoring/ratings/<int:pk>/", scoring_apis.RatingSubmitApi.as_view(), name="scoring_rating"),
        path("runs/<int:pk>/human-report/", apis.HumanReportApi.as_view(), name="human_report"),
    ],
    "evaluation-api",
)
