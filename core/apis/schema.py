"""The OpenAPI schema and Swagger UI, for signed-in staff (Swagger UI assets from the sidecar, offline)."""

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.exceptions import NotAuthenticated

from core.apis.common import API_AUTHENTICATION
from core.permissions import HasAnyRole


class SchemaApi(SpectacularAPIView):
    authentication_classes = API_AUTHENTICATION
    permission_classes = [HasAnyRole]


class SchemaDocsApi(SpectacularSwaggerSplitView):
    """The split view serves its start-up script at ?script, a file the site's
    Content-Security-Policy allows, where the plain view inlines it."""

    authentication_classes = API_AUTHENTICATION
    permission_classes = [HasAnyRole]
    # The stock page inlines a <style>; this one links the same rules as a file.
    template_name = "api_docs.html"

    def handle_exception(self, exc):
        # The docs are a page people open in a browser: signed out, they sign in
        # and come back rather than read a 401. Wrong credentials (a bad token)
        # still get the 401, and the schema endpoint keeps its 401 for clients.
        if isinstance(exc, NotAuthenticated):
            return redirect_to_login(self.request.get_full_path())
        return super().handle_exception(exc)
