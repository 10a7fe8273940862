"""URL routes of the Prolific integration: researcher pages under /studies/<slug>/prolific/, the webhook under /prolific/."""

from django.urls import path  # noqa: F401  (the web pages add their routes here)

app_name = "prolific"

urlpatterns: list = []
