"""A starter Oh Hell bot in plain Python: standard library only, one file, ready to edit.

Run it:    python examples/starter_bot.py --port 8001
With a secret (recommended; the arena signs every request with your bot's secret):
           OHHELL_SECRET=your-secret python examples/starter_bot.py --port 8001

The arena POSTs a JSON object with "protocol": "ohhell/1" and a "type":
  hello   any JSON object answer passes the check
  bid     answer {"bid": <one of request["legal"]>}
  play    answer {"card": <one of request["legal"]>}
  result  the match is over; the answer is ignored
Any other type is news this bot does not know: it answers {} and carries on.
Edit choose_bid and choose_card to make it play better.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RANKS = "23456789TJQKA"
MAX_BODY_BYTES = 1024 * 1024
MAX_SKEW_S = 300
# The exact forms the arena sends; anything else is refused (never parsed).
TIMESTAMP = re.compile(r"[0-9]{1,12}")
REQUEST_ID = re.compile(r"[0-9a-f]{32}")


def rank(card: str) -> int:
    """Return a card's rank as 0 (two) to 12 (ace); cards are written like "TD" or "AS"."""
    return RANKS.index(card[0])


def choose_bid(request: dict[str, Any]) -> int:
    """Bid roughly the tricks our aces and high trumps should take, as near as legal allows."""
    trump = request.get("trump")
    high_trump = RANKS.index("Q")
    expected = sum(
        1
        for card in request.get("hand", [])
        if card[0] == "A" or (card[1] == trump and rank(card) >= high_trump)
    )
    legal: list[int] = request["legal"]
    return min(legal, key=lambda bid: (abs(bid - expected), bid))


def beats(card: str, best: str, led: str, trump: str | None) -> bool:
    """Tell whether ``card`` beats the best card so far in a trick led with suit ``led``."""
    if card[1] == best[1]:
        return rank(card) > rank(best)
    return card[1] == trump or (card[1] == led and best[1] != trump)


def choose_card(request: dict[str, Any]) -> str:
    """Win the trick as cheaply as possible if we can, otherwise throw our lowest card."""
    legal: list[str] = sorted(request["legal"], key=rank)
    trick: list[str] = (request.get("trick") or {}).get("cards") or []
    if not trick:
        return legal[0]
    trump = request.get("trump")
    best = trick[0]
    for card in trick[1:]:
        if beats(card, best, trick[0][1], trump):
            best = card
    winners = [card for card in legal if beats(card, best, trick[0][1], trump)]
    return winners[0] if winners else legal[0]


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """Return the answer to one arena request."""
    kind = request.get("type")
    if kind == "bid":
        return {"bid": choose_bid(request)}
    if kind == "play":
        return {"card": choose_card(request)}
    if kind == "hello":
        return {"name": "starter bot", "ok": True}
    return {}  # "result", or a type newer than this bot: nothing to answer


def signature_ok(
    secret: str,
    body: bytes,
    timestamp: str | None,
    request_id: str | None,
    signature: str | None,
) -> bool:
    """Check sha256=HMAC-SHA256(secret, "<timestamp>.<request id>." + body), sent recently."""
    if timestamp is None or request_id is None or signature is None:
        return False
    if not TIMESTAMP.fullmatch(timestamp) or not REQUEST_ID.fullmatch(request_id):
        return False
    if abs(time.time() - int(timestamp)) > MAX_SKEW_S:
        return False  # too old (or from the future): refuse replays
    signed = f"{timestamp}.{request_id}.".encode() + body
    expected = "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


class SeenRequests:
    """Request ids already answered; a signed request seen twice is a replay."""

    def __init__(self) -> None:
        self.first_seen: dict[str, float] = {}
        self.lock = threading.Lock()

    def first_time(self, request_id: str) -> bool:
        """Record ``request_id``; False if it was seen before (within the replay window)."""
        now = time.time()
        with self.lock:
            # Oldest first; past twice the skew its timestamp check fails anyway: forget it.
            while self.first_seen:
                oldest, seen_at = next(iter(self.first_seen.items()))
                if now - seen_at <= 2 * MAX_SKEW_S:
                    break
                del self.first_seen[oldest]
            if request_id in self.first_seen:
                return False
            self.first_seen[request_id] = now
            return True


class BotHandler(BaseHTTPRequestHandler):
    """Answer arena requests over persistent HTTP/1.1 connections."""

    protocol_version = "HTTP/1.1"  # keep connections alive between calls
    # Sets TCP_NODELAY on each connection; without it small answers wait ~40 ms for Nagle.
    disable_nagle_algorithm = True
    secret = os.environ.get("OHHELL_SECRET", "")
    seen = SeenRequests()
    verbose = False

    def do_POST(self) -> None:
        length_text = self.headers.get("Content-Length") or "0"
        if not re.fullmatch(r"[0-9]{1,9}", length_text):
            self.close_connection = True
            return self.reply(400, {"error": "bad Content-Length"})
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            return self.reply(413, {"error": "request too large"})
        body = self.rfile.read(length)
        if self.secret:
            request_id = self.headers.get("X-OhHell-Request-Id")
            if not signature_ok(
                self.secret,
                body,
                self.headers.get("X-OhHell-Timestamp"),
                request_id,
                self.headers.get("X-OhHell-Signature"),
            ):
                return self.reply(401, {"error": "bad signature"})
            if not self.seen.first_time(request_id or ""):
                return self.reply(409, {"error": "repeated request id"})
        try:
            request = json.loads(body)
            self.reply(200, answer(request))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            self.reply(400, {"error": f"cannot answer: {exc}"})

    def reply(self, status: int, data: dict[str, Any]) -> None:
        """Send a JSON answer with a Content-Length, so the connection can be reused."""
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        if self.verbose:
            super().log_message(format, *args)


def main() -> None:
    """Serve the bot until interrupted."""
    parser = argparse.ArgumentParser(description="A starter Oh Hell bot (ohhell/1).")
    parser.add_argument("--host", default="127.0.0.1", help="use 0.0.0.0 to accept outside calls")
    parser.add_argument("--port", type=int, default=8001, help="0 picks a free port")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args()
    BotHandler.verbose = args.verbose
    server = ThreadingHTTPServer((args.host, args.port), BotHandler)
    server.daemon_threads = True
    port = server.server_address[1]
    signed = "checking signatures" if BotHandler.secret else "NOT checking signatures"
    print(f"starter bot listening on http://{args.host}:{port}/ ({signed})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
