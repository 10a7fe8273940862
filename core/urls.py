from django.urls import path

from .apis.auth import TokenApi
from .views import tokens

app_name = "core"

urlpatterns = [
    # The signed-in user's API token
    path("profile/tokens/", tokens.api_token, name="api_token"),
]

# vivid_site includes these under /api/ beside the annotation API, in the namespace "api".
api_urlpatterns = [
    path("token/", TokenApi.as_view(), name="token"),
]
