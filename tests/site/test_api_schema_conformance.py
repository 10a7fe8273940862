"""Schema defects the API fuzzing found, each pinned by one request checked against /api/schema/.

The fuzz test draws its cases at random; these send the case that failed, so a
regression shows up whatever the fuzzer happens to draw.
"""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.models import Dataset
from annotation.services.demo import demo_dataset_load
from tests.study.factories import make_study

from .fuzzing import in_process_requests, load_schema

pytestmark = pytest.mark.django_db

# The checks that need no generated case (an explicit Case carries no generation metadata).
CONFORMANCE = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def call_checked(user, method: str, path: str, **case):
    """Send one request through the schema's own operation and fail on any answer it does not declare."""
    headers = {"Authorization": f"Token {Token.objects.get_or_create(user=user)[0].key}"}
    with in_process_requests() as app:
        operation = load_schema(app, headers)[path][method]
        sent = operation.Case(**case)
        response = sent.call(headers=headers)
        sent.validate_response(response, checks=CONFORMANCE, headers=headers)
    return operation, response


def test_it_declares_the_gold_labels_hidden_from_an_annotator_as_null(annotator_a, researcher):
    demo_dataset_load(user=researcher)
    _, response = call_checked(annotator_a, "GET", "/api/expressions/")
    assert response.status_code == 200
    first = response.json()["results"][0]
    assert first["traits"] is None and first["theme"] is None
    _, response = call_checked(annotator_a, "GET", "/api/expressions/{id}/", path_parameters={"id": first["id"]})
    assert response.json()["traits"] is None


def test_it_answers_a_get_on_the_import_url_as_the_study_it_cannot_be(researcher, annotator_a):
    # "import" is a reserved slug, and GET /api/study/{slug}/ covers /api/study/import/.
    _, response = call_checked(researcher, "GET", "/api/study/{slug}/", path_parameters={"slug": "import"})
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}
    _, response = call_checked(annotator_a, "GET", "/api/study/{slug}/", path_parameters={"slug": "import"})
    assert response.status_code == 403


def test_it_takes_a_new_round_as_json_only(researcher, annotator_a, annotator_b):
    demo_dataset_load(user=researcher)
    body = {
        "name": "JSON round",
        "dataset": Dataset.objects.get().pk,
        "annotators": ["annotator_a", "annotator_b"],
        "suggestion_set": None,
        "seed": None,
    }
    operation, response = call_checked(researcher, "POST", "/api/rounds/", body=body, media_type="application/json")
    assert response.status_code == 201, response.text
    # A form spells null as "null" and cannot send a list of one: the schema offers JSON alone.
    assert list(operation.definition.raw["requestBody"]["content"]) == ["application/json"]
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.post(
        "/api/rounds/", {**body, "name": "Form round", "suggestion_set": "null", "seed": "null"}, format="multipart"
    )
    assert response.status_code == 415


def test_it_declares_the_nul_refusal_on_every_operation(researcher):
    _, response = call_checked(researcher, "GET", "/api/datasets/", query={"page": "1\x00"})
    assert response.status_code == 400
    assert response.json() == {"page": ["Null characters are not allowed."]}


def test_it_lists_a_nul_refusal_of_a_study_package_with_its_other_errors(researcher):
    _, response = call_checked(researcher, "POST", "/api/study/import/", query={"note": "\x00"})
    assert response.status_code == 400
    assert response.json() == {"errors": ["note: Null characters are not allowed."]}


def test_it_declares_the_refusal_of_a_body_in_another_media_type(researcher):
    _, response = call_checked(
        researcher, "POST", "/api/study/import/", body={"package": "x"}, media_type="application/json"
    )
    assert response.status_code == 415


def test_it_answers_404_to_an_id_beyond_the_database_integer(researcher):
    path = "/api/evaluation/runs/{run_pk}/items/{id}/"
    _, response = call_checked(researcher, "GET", path, path_parameters={"run_pk": 2**70, "id": 1})
    assert response.status_code == 404


def test_it_offers_a_form_encoding_only_where_every_field_has_a_form_spelling(researcher):
    # A form sends null as the text "null" and has no list of one or nested object: a field
    # like that in a form body is a valid request the API must refuse.
    client = APIClient()
    client.force_authenticate(researcher)
    schema = client.get("/api/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    unspellable = []
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for media_type, content in operation.get("requestBody", {}).get("content", {}).items():
                if media_type == "application/json":
                    continue
                body = content["schema"]
                body = components[body["$ref"].rsplit("/", 1)[1]] if "$ref" in body else body
                for name, field in body.get("properties", {}).items():
                    if field.get("nullable") or field.get("type") in ("array", "object"):
                        unspellable.append(f"{method.upper()} {path} {media_type}: {name}")
    assert unspellable == []


def test_it_refuses_an_empty_page_number_like_any_other_non_number(researcher):
    demo_dataset_load(user=researcher)
    _, response = call_checked(researcher, "GET", "/api/datasets/", query={"page": ""})
    assert response.status_code == 404
    assert response.json() == {"detail": "Invalid page."}


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/api/evaluation/runs/", {"kind": ""}),
        ("/api/evaluation/prompts/", {"kind": ""}),
        ("/api/evaluation/results/{table}/", {"strategy": ""}),
        ("/api/expressions/", {"theme": "", "trait": "", "dataset": ""}),
    ],
)
def test_it_documents_an_empty_filter_as_no_filter(researcher, path, query):
    demo_dataset_load(user=researcher)
    parameters = {"table": "classification"} if "{table}" in path else {}
    operation, response = call_checked(researcher, "GET", path, query=query, path_parameters=parameters)
    assert response.status_code == 200
    declared = {p["name"]: p["schema"] for p in operation.definition.raw["parameters"] if p["name"] in query}
    for name, schema in declared.items():
        assert any(
            "" in option.get("enum", [""]) and option.get("minLength", 0) == 0 and option.get("type") == "string"
            for option in schema.get("anyOf", [schema])
        ), (name, schema)


def test_it_declares_an_expression_without_a_kind(researcher):
    demo_dataset_load(user=researcher)
    body = {"dataset": Dataset.objects.get().pk, "text": "Không kind", "explanation": "Để trống"}
    _, response = call_checked(researcher, "POST", "/api/expressions/", body=body, media_type="application/json")
    assert response.status_code == 201 and response.json()["kind"] == ""


@pytest.mark.parametrize(
    ("path", "query"),
    [
        # Each was answered 200 as if the parameter had not been given.
        ("/api/datasets/{id}/export/", {"format": ""}),
        ("/api/study/{slug}/results/", {"include_test": ""}),
        ("/api/study/{slug}/responses/", {"format": "csv", "page_size": "-1444984882"}),
        ("/api/study/{slug}/responses/", {"format": "csv", "page": "AAA"}),
    ],
)
def test_it_refuses_a_parameter_the_schema_does_not_allow(researcher, path, query):
    demo_dataset_load(user=researcher)
    make_study()
    parameters = {"id": Dataset.objects.get().pk} if "{id}" in path else {"slug": "artworks"}
    _, response = call_checked(researcher, "GET", path, query=query, path_parameters=parameters)
    assert response.status_code in (400, 404), response.content


def test_it_declares_the_refusal_of_a_token_request_in_another_media_type(researcher):
    _, response = call_checked(researcher, "POST", "/api/token/", body="username", media_type="text/plain")
    assert response.status_code == 415
