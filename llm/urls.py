"""URL routes of the model registry pages (under /evaluation/, where they have always been) and its API
(under /api/evaluation/)."""

from django.urls import path

from . import apis
from .views import models

app_name = "llm"

urlpatterns = [
    path("models/", models.model_list, name="model_list"),
    path("models/new/", models.model_new, name="model_new"),
    path("models/<int:pk>/probe/", models.model_probe, name="model_probe"),
]

# Included by vivid_site under /api/evaluation/ with the namespace "llm-api".
api_urlpatterns = ([path("models/", apis.ModelListApi.as_view(), name="model_list")], "llm-api")
