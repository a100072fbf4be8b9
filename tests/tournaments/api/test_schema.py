"""The OpenAPI schema: generated, valid, complete; docs served without the network."""

from __future__ import annotations

import re

from django.urls import URLPattern
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from tournaments.api.urls import router, urlpatterns

SCHEMA_VIEWS = {"schema", "docs", "redoc"}
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
    "/api/tournaments/": {"get", "post"},
    "/api/tournaments/{id}/": {"get"},
    "/api/tournaments/{id}/start/": {"post"},
    "/api/tournaments/{id}/pause/": {"post"},
    "/api/tournaments/{id}/resume/": {"post"},
    "/api/tournaments/{id}/cancel/": {"post"},
    "/api/tournaments/{id}/progress/": {"get"},
    "/api/tournaments/{id}/standings/": {"get"},
    "/api/tournaments/{id}/fixtures/": {"get"},
    "/api/matches/": {"get"},
    "/api/matches/{id}/": {"get"},
    "/api/matches/{id}/replay/": {"get"},
    "/api/leaderboard/": {"get"},
    "/api/bots/{id}/ratings/": {"get"},
    "/api/bots/{id}/rating-history/": {"get"},
    "/api/bots/{id}/analytics/": {"get"},
    "/api/ratings/recompute/": {"post"},
    "/api/ratings/recompute/{id}/": {"get"},
}


def test_the_schema_is_valid_openapi_with_every_endpoint(db) -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    paths = {path: set(ops) - {"parameters"} for path, ops in schema["paths"].items()}
    for path, methods in EXPECTED_PATHS.items():
        assert methods <= paths.get(path, set()), path
    for prefix, _, _ in router.registry:
        assert any(path.startswith(f"/api/{prefix}/") for path in paths), prefix
    for pattern in urlpatterns:
        # The router's routes (a resolver) are checked above; these are the API's own views.
        if (
            isinstance(pattern, URLPattern)
            and getattr(pattern.callback, "cls", None)
            and pattern.name not in SCHEMA_VIEWS
        ):
            route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
            assert f"/api/{route}".replace("{pk}", "{id}") in paths, route


def test_the_new_endpoints_document_their_bodies_and_parameters(db) -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = schema["paths"]

    def response_ref(path: str, method: str, code: str = "200") -> str:
        content = paths[path][method]["responses"][code]["content"]["application/json"]
        return str(content["schema"])

    def parameters(path: str) -> set[str]:
        return {p["name"] for p in paths[path]["get"].get("parameters", [])}

    create = paths["/api/tournaments/"]["post"]["requestBody"]["content"]["application/json"]
    assert "TournamentInputRequest" in str(create["schema"])
    assert "TournamentDetailOutput" in response_ref("/api/tournaments/", "post", "201")
    assert "ProgressOutput" in response_ref("/api/tournaments/{id}/progress/", "get")
    assert "StandingsOutput" in response_ref("/api/tournaments/{id}/standings/", "get")
    assert "PaginatedMatchOutputList" in response_ref("/api/tournaments/{id}/fixtures/", "get")
    assert "MatchDetailOutput" in response_ref("/api/matches/{id}/", "get")
    assert "PaginatedLeaderboardRowOutputList" in response_ref("/api/leaderboard/", "get")
    assert "RecomputeOutput" in response_ref("/api/ratings/recompute/", "post", "202")
    assert {"status", "format", "variant", "ordering", "page"} <= parameters("/api/tournaments/")
    assert {"tournament", "variant", "status", "bot"} <= parameters("/api/matches/")
    assert {"variant", "include_provisional"} <= parameters("/api/leaderboard/")
    assert {"variant", "at"} <= parameters("/api/bots/{id}/rating-history/")
    assert {"variant"} <= parameters("/api/bots/{id}/analytics/")
    assert "at" in parameters("/api/bots/{id}/ratings/")


def test_the_schema_never_mentions_a_secret_outside_registration_and_rotation(db) -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    assert "secret" in components["BotWithSecretOutput"]["properties"]
    assert "secret" not in components["BotOutput"]["properties"]


def test_the_schema_and_docs_are_served(anonymous_client) -> None:
    assert anonymous_client.get("/api/schema/").status_code == 200
    docs = anonymous_client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger-ui" in docs.content
    assert b"cdn.jsdelivr" not in docs.content
    assert anonymous_client.get("/api/redoc/").status_code == 200


def test_the_schema_generates_without_a_single_warning(tmp_path) -> None:
    from django.core.management import call_command

    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    assert target.stat().st_size > 10_000


def test_the_match_error_is_documented_as_staff_only_and_null_for_others(db) -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    error = schema["components"]["schemas"]["MatchDetailOutput"]["properties"]["error"]
    assert error["type"] == "string" and error["nullable"] is True
    assert "staff only" in error["description"]
    assert "null for everyone else" in error["description"]
