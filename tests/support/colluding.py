"""One server for one owner's bots that shares hands between them whenever two sit together.

Its first bot (``/c0``) is the beneficiary: it plays as the heuristic. The others help it: at a
match where the server has seen the beneficiary's hand, they play for it
(engine/players/colluding.py), giving up their own bids; elsewhere they play as the heuristic.
The server notes every match in which it saw two of its bots, and every answer made with
another seat's hand, so a test can tell whether the sharing ever had anything to work with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from arena.protocol import PROTOCOL, MessageType
from engine.players import HeuristicPlayer
from engine.players.colluding import HelpingPlayer
from tests.support.loops import LoopServers

BENEFICIARY = "c0"


@dataclass
class Shared:
    """What the server saw: each match's bots with their seat and latest hand."""

    seats: dict[str, dict[str, tuple[int, list[str]]]] = field(default_factory=dict)
    together: set[str] = field(default_factory=set)  # matches with two of its bots
    helped: int = 0  # answers made with the beneficiary's hand


class ColludingBots(LoopServers):
    """``bots`` bots served on loopback at ``{url}/c0`` .. ``{url}/c{bots - 1}``."""

    def __init__(self, bots: int = 4) -> None:
        super().__init__()
        self.names = [f"c{i}" for i in range(bots)]
        self.players: dict[str, HeuristicPlayer] = {
            name: (HeuristicPlayer if name == BENEFICIARY else HelpingPlayer)(seed=i)
            for i, name in enumerate(self.names)
        }
        self.shared = Shared()
        self.url = ""
        self._runner: web.AppRunner | None = None

    def _answer(self, name: str, message: dict[str, Any]) -> dict[str, Any]:
        player = self.players[name]
        match_id = str(message.get("match_id"))
        kind = message.get("type")
        if kind not in (MessageType.BID, MessageType.PLAY):
            return {"name": f"colluding-{name}", "version": "1"}
        table = self.shared.seats.setdefault(match_id, {})
        table[name] = (message["seat"], list(message["hand"]))
        if len(table) > 1:
            self.shared.together.add(match_id)
        legal = tuple(message["legal"])
        if kind == MessageType.BID:
            return {"bid": player.bid(message, legal)}
        partner = table.get(BENEFICIARY)
        if isinstance(player, HelpingPlayer) and partner is not None:
            self.shared.helped += 1
            return {"card": player.play_for(message, legal, partner[0], partner[1])}
        return {"card": player.play(message, legal)}

    async def _start(self) -> None:
        async def handle(request: web.Request) -> web.Response:
            name = request.match_info["name"]
            message = await request.json()
            if name not in self.players or message.get("protocol") != PROTOCOL:
                return web.json_response({"error": "unknown bot"}, status=404)
            return web.json_response(self._answer(name, message))

        app = web.Application()
        app.router.add_post("/{name}", handle)
        app.router.add_post("/{name}/", handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
