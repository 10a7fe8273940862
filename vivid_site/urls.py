from django.contrib import admin
from django.urls import include, path

from annotation.urls import api_urlpatterns as annotation_api
from artworks.urls import api_urlpatterns as artworks_api
from artworks.urls import moved_urlpatterns as artworks_moved
from core.apis.schema import SchemaApi, SchemaDocsApi
from core.urls import api_urlpatterns as core_api
from evaluation.urls import api_urlpatterns as evaluation_api
from llm.urls import api_urlpatterns as llm_api
from study.urls import api_urlpatterns as study_api

from . import views

handler404 = "vivid_site.views.page_not_found"

urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("", include("core.urls")),
    path("", include("annotation.urls")),
    path("evaluation/", include("llm.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("artworks/", include("artworks.urls")),
    path("", include((artworks_moved, "artworks-moved"))),
    path("", include("study.urls")),
    path("", include("prolific.urls")),
    path("api/evaluation/", include(llm_api)),
    path("api/evaluation/", include(evaluation_api)),
    path("api/artworks/", include(artworks_api)),
    path("api/study/", include((study_api, "study_api"))),
    path("api/", include((core_api + annotation_api, "api"))),
    path("api/schema/", SchemaApi.as_view(), name="api-schema"),
    path("api/docs/", SchemaDocsApi.as_view(url_name="api-schema"), name="api-docs"),
]
