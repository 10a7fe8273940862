from django.urls import path
from rest_framework.routers import DefaultRouter

from . import apis, views

app_name = "annotation"

urlpatterns = [
    path("datasets/", views.dataset_list, name="dataset_list"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset_detail"),
    path("datasets/<int:pk>/export/", views.dataset_export, name="dataset_export"),
    path("imports/new/", views.import_start, name="import_start"),
    path("imports/<int:pk>/", views.import_detail, name="import_detail"),
    path("imports/<int:pk>/confirm/", views.import_confirm, name="import_confirm"),
    path("imports/<int:pk>/cancel/", views.import_cancel, name="import_cancel"),
]

router = DefaultRouter()
router.register("datasets", apis.DatasetViewSet, basename="dataset")
router.register("expressions", apis.ExpressionViewSet, basename="expression")
router.register("traits", apis.TraitViewSet, basename="trait")
router.register("themes", apis.ThemeViewSet, basename="theme")

# Included by vivid_site under /api/ with the namespace "api".
api_urlpatterns = (
    [
        path("imports/", apis.ImportApi.as_view(), name="import"),
        path("token/", apis.TokenApi.as_view(), name="token"),
        *router.urls,
    ],
    "api",
)
