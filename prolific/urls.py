"""URL routes of the Prolific integration: researcher pages under /studies/<slug>/prolific/, the webhook under /prolific/."""

from django.urls import path

from .apis import webhooks
from .views import bonuses, review, studies

app_name = "prolific"

urlpatterns = [
    path("studies/<slug:slug>/prolific/", studies.prolific_study_page, name="study"),
    path("studies/<slug:slug>/prolific/create/", studies.prolific_study_create, name="create"),
    path("studies/<slug:slug>/prolific/publish/", studies.prolific_study_publish, name="publish"),
    path("studies/<slug:slug>/prolific/sync/", studies.prolific_study_sync, name="sync"),
    path("studies/<slug:slug>/prolific/hooks/", studies.prolific_hooks_register, name="hooks"),
    path("studies/<slug:slug>/prolific/approve/", review.prolific_approve_valid, name="approve"),
    path("studies/<slug:slug>/prolific/reject/", review.prolific_reject, name="reject"),
    path("studies/<slug:slug>/prolific/return/", review.prolific_request_return, name="request_return"),
    path("studies/<slug:slug>/prolific/bonuses/", bonuses.prolific_bonus_create, name="bonus_create"),
    path("studies/<slug:slug>/prolific/bonuses/pay/", bonuses.prolific_bonus_pay, name="bonus_pay"),
    path("studies/<slug:slug>/prolific/log/", studies.prolific_log, name="log"),
    # Prolific calls this; it signs each request (no session, no CSRF token).
    path("prolific/hooks/submissions/", webhooks.prolific_webhook, name="webhook"),
]
