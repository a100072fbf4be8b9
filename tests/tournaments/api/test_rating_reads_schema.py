"""The OpenAPI description of the leaderboard and a bot's rating endpoints, pinned.

``golden/rating_reads_schema.json`` holds those paths and their components as generated;
remake it with ``python -m tests.tournaments.api.test_rating_reads_schema`` only when the
answers themselves change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).parent / "golden" / "rating_reads_schema.json"
PATHS = ("/api/leaderboard/", "/api/bots/{id}/ratings/", "/api/bots/{id}/rating-history/")
COMPONENTS = (
    *("LeaderboardRowOutput", "PaginatedLeaderboardRowOutputList", "BotRatingOutput"),
    *("RatingHistoryOutput", "PaginatedRatingHistoryOutputList"),
)


def rating_reads_schema() -> dict[str, Any]:
    """Those paths and the components they name, as the schema generator makes them."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    return {
        "paths": {path: schema["paths"][path] for path in PATHS},
        "components": {name: components[name] for name in COMPONENTS},
    }


@pytest.mark.django_db
def test_the_rating_endpoints_are_described_as_pinned() -> None:
    assert rating_reads_schema() == json.loads(GOLDEN.read_text())


if __name__ == "__main__":
    import django

    django.setup()
    GOLDEN.write_text(json.dumps(rating_reads_schema(), indent=1, sort_keys=True) + "\n")
