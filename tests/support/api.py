"""Helpers shared by the API tests."""

from __future__ import annotations

from typing import Any

from tournaments.models import Bot, Tournament, TournamentStatus, Variant
from tournaments.services.tournaments import tournament_create, tournament_generate


def error_of(response: Any) -> dict[str, Any]:
    """Return the error of a response in the API's one error shape, checking that shape
    (a 429 also says when to retry, as its ``Retry-After`` header does)."""
    body = response.json()
    assert set(body) == {"error"}
    if response.status_code == 429:
        assert set(body["error"]) == {"code", "message", "detail", "retry_after"}
        assert body["error"]["retry_after"] == int(response["Retry-After"]) >= 1
    else:
        assert set(body["error"]) == {"code", "message", "detail"}
    return body["error"]


def draft_round_robin(
    organiser: Any, variant: Variant, bots: list[Bot], *, name: str, **fields: Any
) -> Tournament:
    """A draft round-robin tournament of ``bots``, made by the service the API calls."""
    return tournament_create(
        organiser=organiser,
        name=name,
        variant=variant,
        format="round_robin",
        bot_ids=[b.pk for b in bots],
        **fields,
    )


def started(client: Any, tournament: Tournament) -> Any:
    """Start through the API (202, starting), then make the fixtures as the queued task would."""
    response = client.post(f"/api/tournaments/{tournament.pk}/start/")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == TournamentStatus.STARTING
    assert tournament_generate(tournament_id=tournament.pk) == "running"
    return response
