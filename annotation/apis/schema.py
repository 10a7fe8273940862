"""The OpenAPI schema and Swagger UI, for signed-in staff (Swagger UI assets from the sidecar, offline)."""

from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from ..permissions import HasAnyRole
from .common import API_AUTHENTICATION


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
