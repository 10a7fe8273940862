"""The OpenAPI schema and Swagger UI, for signed-in staff (Swagger UI assets from the sidecar, offline)."""

from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from ..permissions import HasAnyRole
from .common import API_AUTHENTICATION


class SchemaApi(SpectacularAPIView):
    authentication_classes = API_AUTHENTICATION
    permission_classes = [HasAnyRole]


class SchemaDocsApi(SpectacularSwaggerView):
    authentication_classes = API_AUTHENTICATION
    permission_classes = [HasAnyRole]
