"""A TCP forwarder that drops a connection whose peer stopped answering (TCP keep-alive), so
a cut host's open database transactions are rolled back as on a real network."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from bench.support.processes import quiet_child

# Keep-alive on the hosts' database connections and on the forwarder's side of them, so a
# connection to a host that vanished fails in seconds instead of the kernel's 15 minutes.
KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT, USER_TIMEOUT_MS = 5, 2, 3, 10_000
DB_KEEPALIVE_QUERY = (
    f"connect_timeout=5&keepalives=1&keepalives_idle={KEEPALIVE_IDLE_S}"
    f"&keepalives_interval={KEEPALIVE_INTERVAL_S}&keepalives_count={KEEPALIVE_COUNT}"
    f"&tcp_user_timeout={USER_TIMEOUT_MS}"
)


def _keepalive(sock: socket.socket) -> None:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, KEEPALIVE_IDLE_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, KEEPALIVE_INTERVAL_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, KEEPALIVE_COUNT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, USER_TIMEOUT_MS)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


def serve_forwarder(listen: tuple[str, int], target: tuple[str, int], ready: Any) -> None:
    """Forward TCP from ``listen`` to ``target`` until killed (a process of its own)."""
    quiet_child()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _keepalive(writer.get_extra_info("socket"))
        try:
            up_reader, up_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def main() -> None:
        server = await asyncio.start_server(handle, *listen)
        ready.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())
