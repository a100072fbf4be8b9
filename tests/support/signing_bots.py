"""Tiny HTTP bots on loopback that check (or skip) one part of the request signing each.

``signing_bot`` serves a bot that answers like a polite bot (the first legal bid or card) and
checks as much of ``arena.signing`` as it is told: the signature, the clock, repeated request
ids. A bot that checks everything refuses what the probes send (401, 409); one that skips a
part accepts it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from arena.signing import REQUEST_ID_HEADER, ReplayGuard, verify_signature
from tests.support.hostile_bots import polite_answer

# Far wider than any clock is off: a verifier given it checks the signature but not the clock.
NO_CLOCK_S = 10**12


@dataclass(frozen=True)
class Checks:
    """Which parts of the signing a bot checks."""

    signature: bool = True
    clock: bool = True
    replay: bool = True


CHECKS_ALL = Checks()


def _handler(secret: str, checks: Checks) -> type[BaseHTTPRequestHandler]:
    seen = ReplayGuard()
    skew = None if checks.clock else NO_CLOCK_S

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, status: int, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = dict(self.headers)
            if checks.signature:
                kwargs = {} if skew is None else {"max_skew_s": skew}
                if not verify_signature(secret, body, headers, **kwargs):
                    return self._answer(401, {"error": "bad or stale signature"})
            if checks.replay and not seen.first_time(self.headers.get(REQUEST_ID_HEADER, "")):
                return self._answer(409, {"error": "repeated request id"})
            self._answer(200, polite_answer(json.loads(body)))

    return Handler


@contextmanager
def signing_bot(secret: str, checks: Checks = CHECKS_ALL) -> Iterator[str]:
    """Serve a bot checking ``checks`` with ``secret`` on a free loopback port; yield its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(secret, checks))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
