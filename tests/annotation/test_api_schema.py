"""The OpenAPI schema of the REST API and its Swagger UI, served from local assets only."""

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.urls import reverse

pytestmark = pytest.mark.django_db


# --- Schema and docs ---------------------------------------------------------------


def test_it_serves_an_openapi_schema_of_every_endpoint(api_as):
    response = api_as("annotator").get(reverse("api-schema"), {"format": "json"})
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.") and schema["info"]["title"] == "VIVID Studio API"
    paths = schema["paths"]
    expected = {
        "/api/datasets/": {"get", "post"},
        "/api/datasets/{id}/": {"get", "patch", "delete"},
        "/api/datasets/{id}/export/": {"get"},
        "/api/expressions/": {"get", "post"},
        "/api/expressions/{id}/": {"get", "patch", "delete"},
        "/api/traits/": {"get"},
        "/api/traits/{code}/": {"get"},
        "/api/themes/": {"get"},
        "/api/themes/{code}/": {"get"},
        "/api/imports/": {"post"},
        "/api/token/": {"post"},
    }
    for path, methods in expected.items():
        assert set(paths[path]) == methods, path
    assert set(schema["components"]["securitySchemes"]) == {"tokenAuth", "cookieAuth"}
    filters = {p["name"] for p in paths["/api/expressions/"]["get"]["parameters"]}
    assert filters == {"dataset", "search", "trait", "theme", "kind", "page"}
    export = paths["/api/datasets/{id}/export/"]["get"]
    assert set(export["responses"]["200"]["content"]) == {"text/csv", "application/x-ndjson"}
    assert "multipart/form-data" in paths["/api/imports/"]["post"]["requestBody"]["content"]


def test_it_generates_a_schema_without_warnings(tmp_path):
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/imports/" in out.read_text()


def test_it_renders_swagger_ui_from_local_assets_only(api_as):
    response = api_as("annotator").get(reverse("api-docs"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    hosts = set(re.findall(r"(?:https?:)?//([A-Za-z0-9.-]+(?::\d+)?)", html))
    assert hosts <= {"testserver"}, hosts
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in assets
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css" in assets
    # The start-up script is a file of its own (the CSP runs no inline script).
    assert "/api/docs/?script=" in assets and "<script>" not in html
    for asset in set(assets) - {"/api/docs/?script="}:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), asset
    script = api_as("annotator").get(reverse("api-docs"), {"script": ""})
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert '"/api/schema/"' in script.content.decode()
