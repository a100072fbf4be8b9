"""Play one match against HTTP bots and print its faults as JSON: run inside a network namespace.

``python -m tests.support.netns_match <network> <host:port> <url>...`` plays a short match between
the bots at the URLs (their addresses in ``network``, which the policy allows), its network
check a TCP connect to ``host:port``, and prints each seat's faults and the number of fallbacks
in the replay, for ``test_outage_netns.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence

from arena.limits import Limits
from arena.match import play_match
from arena.netcheck import TcpCheck
from arena.netpolicy import NetworkPolicy
from arena.seats import HttpSeat
from arena.transport import BotClient
from engine.presets import preset

VARIANT = preset("oh-hell", max_cards=3, order="down_up", first_dealer="random")
LIMITS = Limits(time_limit_ms=300, grace_ms=200, max_faults_per_match=4, outage_wait_s=60)


async def summary(network: str, check: str, urls: Sequence[str]) -> dict[str, object]:
    """Play the match and return what the test checks."""
    policy = NetworkPolicy.from_settings(allowed_networks=[network])
    host, port = check.rsplit(":", 1)
    network_check = TcpCheck(targets=((host, int(port)),), timeout_s=1.0)
    async with BotClient(limits=LIMITS, policy=policy) as client:
        seats = [HttpSeat(client, url, "s3cret", label=url) for url in urls]
        outcome = await play_match(
            variant=VARIANT,
            seed=5,
            seats=seats,
            limits=LIMITS,
            match_id="netns",
            network_check=network_check,
        )
    decisions = outcome.replay["decisions"]
    return {
        "finished": outcome.replay["finished"],
        "faults": [s.stats.fault_count for s in outcome.seats],
        "fallbacks": sum(d["fallback"] for d in decisions),
        "decisions": len(decisions),
        "duration_s": outcome.duration_s,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(summary(sys.argv[1], sys.argv[2], sys.argv[3:]))))
