"""Bot servers for benchmarks: the reference players over HTTP, with a think time and a count."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from bench.support.processes import quiet_child


def serve_bots(host: str, delay_s: float, ready: Any, calls: Any) -> None:
    """Serve the "random" reference player under any path, answering after ``delay_s``."""
    quiet_child()
    # A cut host's connections end in resets; that is the experiment, not news.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    from aiohttp import web

    from arena.botserver import make_app

    @web.middleware
    async def think(request: web.Request, handler: Any) -> web.StreamResponse:
        with calls.get_lock():
            calls.value += 1
        await asyncio.sleep(delay_s)
        response: web.StreamResponse = await handler(request)
        return response

    async def main() -> None:
        app = make_app("random", seed=7)
        app.middlewares.append(think)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, 0)
        await site.start()
        ready.put(runner.addresses[0][1])
        await asyncio.Event().wait()

    asyncio.run(main())
