"""A bot on loopback whose behaviour is chosen by the request path (tests/tournaments/conftest.py
serves it as the ``scripted_bot_server`` fixture)."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler


class ScriptedBot(BaseHTTPRequestHandler):
    """A bot whose behaviour is chosen by the request path, e.g. ``/ok`` or ``/slow``."""

    received: list[dict] = []

    def log_message(self, *args) -> None:
        pass

    def _answer(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {"Content-Type": "application/json"}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.received.append({"path": self.path, "headers": dict(self.headers), "body": body})
        behaviour = self.path.strip("/")
        if behaviour == "ok":
            self._answer(200, json.dumps({"name": "scripted"}).encode())
        elif behaviour == "error":
            self._answer(500, b"{}")
        elif behaviour == "redirect":
            self._answer(302, b"", {"Location": "http://169.254.169.254/latest/meta-data/"})
        elif behaviour == "not-json":
            self._answer(200, b"<html>hello</html>")
        elif behaviour == "array":
            self._answer(200, b"[1, 2, 3]")
        elif behaviour == "huge":
            self._answer(200, b'{"pad": "' + b"x" * (2 * 1024 * 1024) + b'"}')
        elif behaviour == "slow":
            time.sleep(3)
            self._answer(200, b"{}")
        elif behaviour == "trickle":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.1)
        else:
            self._answer(404, b"{}")
