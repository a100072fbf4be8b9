"""Play a match on one machine: HTTP bots against in-process reference players."""

from __future__ import annotations

from collections.abc import Sequence

from arena.limits import Limits
from arena.match import MatchOutcome, Seat, play_match
from arena.netpolicy import NetworkPolicy
from arena.seats import HttpSeat, LocalSeat
from arena.transport import BotClient
from engine.players import make_player
from engine.variant import Variant


async def local_match(
    *,
    variant: Variant,
    endpoints: Sequence[str],
    opponents: Sequence[str],
    seed: int,
    secret: str = "",
    limits: Limits | None = None,
    policy: NetworkPolicy | None = None,
) -> MatchOutcome:
    """Seat ``endpoints`` (HTTP bots) then ``opponents`` (reference players) and play."""
    limits = limits or Limits()
    async with BotClient(limits=limits, policy=policy or NetworkPolicy()) as client:
        seats: list[Seat] = [HttpSeat(client, url, secret, label=url) for url in endpoints]
        seats += [
            LocalSeat(make_player(name, seed + i), label=name) for i, name in enumerate(opponents)
        ]
        variant.check_players(len(seats))
        return await play_match(
            variant=variant, seed=seed, seats=seats, limits=limits, match_id=f"local-{seed}"
        )
