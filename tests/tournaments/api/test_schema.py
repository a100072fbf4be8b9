"""The OpenAPI schema: generated, valid, complete; docs served without the network."""

from __future__ import annotations

from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

EXPECTED_PATHS = {
    "/api/auth/signup/": {"post"},
    "/api/auth/token/": {"post"},
    "/api/auth/me/": {"get"},
    "/api/bots/": {"get", "post"},
    "/api/bots/{id}/": {"get", "patch", "delete"},
    "/api/bots/{id}/rotate-secret/": {"post"},
    "/api/bots/{id}/verify/": {"post"},
    "/api/bots/{id}/health-checks/": {"get"},
    "/api/variants/": {"get", "post"},
    "/api/variants/{name}/": {"get"},
}


def test_the_schema_is_valid_openapi_with_every_endpoint(db):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    paths = {path: set(ops) - {"parameters"} for path, ops in schema["paths"].items()}
    assert paths == EXPECTED_PATHS


def test_the_schema_never_mentions_a_secret_outside_registration_and_rotation(db):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    assert "secret" in components["BotWithSecretOutput"]["properties"]
    assert "secret" not in components["BotOutput"]["properties"]


def test_the_schema_and_docs_are_served(anonymous_client):
    assert anonymous_client.get("/api/schema/").status_code == 200
    docs = anonymous_client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger-ui" in docs.content
    assert b"cdn.jsdelivr" not in docs.content
    assert anonymous_client.get("/api/redoc/").status_code == 200
