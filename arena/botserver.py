"""Serve a reference player as an HTTP bot: the example bots, and opponents for local matches.

``python -m arena serve --player heuristic --port 8001`` starts one. aiohttp's server sets
TCP_NODELAY on every connection, so small answers are not held back by Nagle's algorithm.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from arena.protocol import PROTOCOL, MessageType
from arena.signing import REQUEST_ID_HEADER, ReplayGuard, verify_signature
from engine.players import make_player

MAX_REQUEST_BYTES = 256 * 1024


def make_app(
    player_name: str, *, seed: int = 0, secret: str | None = None, **options: Any
) -> web.Application:
    """Return an aiohttp app answering ``ohhell/1`` requests with a reference player."""
    player = make_player(player_name, seed, **options)
    label = f"{player_name}-example"
    seen = ReplayGuard()

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        if secret is not None:
            if not verify_signature(secret, body, request.headers):
                return _error(401, "bad or stale signature")
            if not seen.first_time(request.headers[REQUEST_ID_HEADER]):
                return _error(409, "repeated request id")
        try:
            message = json.loads(body)
        except ValueError:
            return _error(400, "the body is not JSON")
        if not isinstance(message, dict) or message.get("protocol") != PROTOCOL:
            return _error(400, f"expected a JSON object with protocol {PROTOCOL}")
        kind = message.get("type")
        if kind == MessageType.BID:
            return web.json_response({"bid": player.bid(message, tuple(message["legal"]))})
        if kind == MessageType.PLAY:
            return web.json_response({"card": player.play(message, tuple(message["legal"]))})
        if kind in (MessageType.HELLO, MessageType.RESULT):
            return web.json_response({"name": label, "version": "1"})
        # A type newer than this bot is news it need not answer (docs/bot-protocol.md,
        # "Versioning"): acknowledge it rather than refuse it.
        return web.json_response({})

    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    app.router.add_post("/", handle)
    app.router.add_post("/{tail:.*}", handle)
    return app


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def serve(
    player_name: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8001,
    seed: int = 0,
    secret: str | None = None,
    **options: Any,
) -> None:
    """Run one example bot until interrupted."""
    app = make_app(player_name, seed=seed, secret=secret, **options)
    print(f"{player_name} bot answering ohhell/1 at http://{host}:{port}/", flush=True)
    web.run_app(app, host=host, port=port, print=None, access_log=None)
