"""The schema says what the server does: anonymous access, error statuses, shapes and limits."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db

PUBLIC_READS = (
    "/api/ladders/",
    "/api/tournaments/{id}/",
    "/api/tournaments/{id}/progress/",
    "/api/tournaments/{id}/standings/",
    "/api/tournaments/{id}/fixtures/",
    "/api/variants/",
    "/api/variants/{name}/",
    "/api/matches/",
    "/api/leaderboard/",
)


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method != "parameters"
    ]


def test_public_reads_say_they_need_no_token_and_writes_and_accounts_say_they_do(schema) -> None:
    for path in PUBLIC_READS:
        assert {} in schema["paths"][path]["get"]["security"], path
    for path, method in [
        ("/api/bots/", "post"),
        ("/api/auth/me/", "get"),
        ("/api/scrimmages/", "get"),
        ("/api/tournaments/{id}/start/", "post"),
    ]:
        assert {} not in schema["paths"][path][method]["security"], (path, method)


def test_every_operation_documents_its_errors_with_the_one_error_body(schema) -> None:
    components = schema["components"]["schemas"]
    for path, method, operation in operations(schema):
        responses = operation["responses"]
        assert "401" in responses, (path, method)
        for code, response in responses.items():
            if code >= "400" and code != "414":
                ref = response["content"]["application/json"]["schema"]["$ref"]
                # The one error body, or one an operation declares with more beside the error.
                assert "error" in components[ref.rsplit("/", 1)[1]]["properties"], (path, code)
        if method in ("post", "patch", "put", "delete"):
            assert {"403", "409", "429"} <= set(responses), (path, method)
        if "requestBody" in operation:
            assert {"400", "413", "415"} <= set(responses), (path, method)
        if "{" in path:
            assert "404" in responses, (path, method)


def test_the_analytics_without_a_variant_and_a_presets_creator_are_declared(schema) -> None:
    components = schema["components"]["schemas"]
    answer = schema["paths"]["/api/bots/{id}/analytics/"]["get"]["responses"]["200"]
    shapes = components["BotAnalyticsAnswerOrNone"]["oneOf"]
    assert answer["content"]["application/json"]["schema"]["$ref"].endswith("OrNone")
    assert {s["$ref"].rsplit("/", 1)[1] for s in shapes} == {
        "BotAnalyticsAnswer",
        "NoAnalyticsAnswer",
    }
    assert "variants" in components["BotAnalyticsAnswer"]["properties"]
    assert components["NoAnalyticsAnswer"]["properties"]["variant"]["nullable"] is True
    for name in ("VariantOutput", "VariantDetailOutput"):
        assert components[name]["properties"]["created_by"]["nullable"] is True


def test_downloads_declare_csv_and_limits_the_server_checks_are_in_the_schema(schema) -> None:
    for path in ("/api/matches/", "/api/tournaments/{id}/standings/"):
        responses = schema["paths"][path]["get"]["responses"]
        assert "text/csv" in responses["200"]["content"], path
        assert "text/csv" in responses["404"]["content"], path
    parameters = {
        p["name"]: p["schema"] for p in schema["paths"]["/api/matches/"]["get"]["parameters"]
    }
    assert parameters["page_size"]["minimum"] == parameters["tournament"]["minimum"] == 1
    assert parameters["download"]["enum"] == ["csv"]
    assert "format" not in parameters
    standings = schema["paths"]["/api/tournaments/{id}/standings/"]["get"]["parameters"]
    assert {p["name"] for p in standings} == {"id", "download"}
