"""A spying bot for the black-box test of fair deals (tests/tournaments/test_spy_bot.py).

The bot answers the arena like any other (the first legal action), and on every request reads
the match id from the body and asks the platform's public API for everything it can get about
the match, its tournament and the bots at the table: anonymously and with its owner's token.
It turns every number it finds into candidate seeds (also the preimages of small seeds'
commitments, the public fixture derivation of a tournament seed, the keyed derivation under an
embedded development key with any deal salt it finds) and deals each candidate with the engine:
a candidate that deals the bot its own hand is the match's seed. At the first request of every
deal it predicts the hands of the other seats: from such a candidate when it has one, by a
fixed random draw otherwise.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import product
from math import comb

from engine import Game, Variant
from engine.cards import CARD_NAMES
from tournaments.formats.common import fixture_seed
from tournaments.seeds import deal_seed

NUMBER = re.compile(r"[0-9]{1,20}")
COMMITMENT = re.compile(r"\b[0-9a-f]{64}\b")
# Text that could be a competition's deal salt (tournaments/seeds.py), were one ever shown.
SALT = re.compile(r"\b[0-9a-f]{32}\b")
# Commitments to seeds below this are inverted by trying them all (an organiser's small seed).
SMALL_SEEDS = 200_000
MAX_SEED = 2**63 - 1  # the engine's largest seed
SEED_FIELD = re.compile(r'"seed":\s*([0-9]{1,20})')
ROUNDS = range(4)  # rounds and tables tried in the public fixture derivation
READERS = 8  # reads in flight at once


@cache
def small_seed_preimages() -> dict[str, int]:
    """seed_sha256 -> seed for every small seed."""
    return {hashlib.sha256(str(n).encode()).hexdigest(): n for n in range(SMALL_SEEDS)}


def dealt_hands(variant: dict, players: int, seed: int, deals: int) -> list[list[set[str]]]:
    """Every seat's hand at the start of each of the first ``deals`` deals that ``seed`` deals
    (the shuffles do not depend on the play, so any legal play gives the same deals)."""
    game = Game(Variant.from_dict(variant), players, seed)
    hands: list[list[set[str]]] = []
    while not game.is_over and len(hands) < deals:
        if game.deal_number > len(hands):
            hands.append([set(game.hand(s)) for s in range(players)])
        game.apply(game.legal_actions()[0])
    return hands


@dataclass
class Prediction:
    """What the bot predicted at the first request of a deal, with what it knew then."""

    match_id: str
    deal: int
    seat: int
    players: int
    hand_size: int
    hand: frozenset[str]
    trump_card: str | None
    predicted: dict[int, frozenset[str]]  # other seat -> its predicted hand
    from_seed: int | None  # the candidate that dealt the bot its hand, if any
    body: dict  # the request

    @property
    def unseen(self) -> int:
        """Cards the bot cannot see: the pack less its hand and the turned card."""
        return len(CARD_NAMES) - self.hand_size - (self.trump_card is not None)


@dataclass
class Spy:
    """The bot's state across requests: what it read, what it predicted, what it found."""

    api: str
    token: str
    predictions: list[Prediction] = field(default_factory=list)
    requests: int = 0
    reads: int = 0
    own_seed_shown: list[str] = field(default_factory=list)
    found_during_play: list[str] = field(default_factory=list)
    numbers: set[int] = field(default_factory=set)
    seeds: set[int] = field(default_factory=set)
    fixture_seeds: set[int] = field(default_factory=set)  # candidates before the keyed step
    salts: set[str] = field(default_factory=set)
    first_hands: dict[str, frozenset[str]] = field(default_factory=dict)
    # Per match, the candidates already seen not to deal the bot its first hand.
    ruled_out: dict[str, set[int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # guards reads
    turn: threading.Lock = field(default_factory=threading.Lock)  # one request at a time

    def get(self, path: str, token: bool) -> str:
        """The body of a GET on the platform (any status), or "" if it could not be read."""
        request = urllib.request.Request(self.api + path)
        if token:
            request.add_header("Authorization", f"Token {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                body = answer.read()
        except urllib.error.HTTPError as error:
            body = error.read()
        except OSError:
            return ""
        with self.lock:
            self.reads += 1
        return body.decode("utf-8", "replace")

    def read_everything(self, match_id: str, full: bool) -> list[str]:
        """Read the match and, when ``full``, everything around it; return the texts read."""
        detail = self.get(f"/api/matches/{match_id}/", token=False)
        try:
            match = json.loads(detail)
        except ValueError:
            match = {}
        if match.get("seed") is not None:
            self.own_seed_shown.append(f"{match_id}: {match['seed']}")
        tournament = match.get("tournament")
        bots = [seat["bot"] for seat in match.get("seats", [])]
        paths = [f"/api/matches/{match_id}/", f"/api/matches/{match_id}/replay/"]
        if tournament is not None:
            paths.append(f"/api/tournaments/{tournament}/")
        if full:
            paths += [
                "/api/matches/",
                "/api/matches/?download=csv",
                "/api/tournaments/",
                "/api/bots/",
                "/api/variants/",
                "/api/ladders/",
                "/api/auth/me/",
                "/",
                "/matches/",
                f"/matches/{match_id}/",
            ]
            if tournament is not None:
                base = f"/api/tournaments/{tournament}/"
                paths += [
                    base + "standings/",
                    base + "standings/?download=csv",
                    base + "fixtures/",
                    base + "fixtures/?download=csv",
                    base + "progress/",
                    f"/tournaments/{tournament}/",
                    f"/tournaments/{tournament}/progress.json",
                ]
            for bot in bots:
                paths += [
                    f"/api/bots/{bot}/",
                    f"/api/bots/{bot}/health-checks/",
                    f"/api/bots/{bot}/ratings/",
                    f"/api/bots/{bot}/rating-history/",
                    f"/bots/{bot}/",
                    f"/api/matches/?bot={bot}",
                ]
        with ThreadPoolExecutor(max_workers=READERS) as pool:
            texts = pool.map(lambda read: self.get(*read), product(paths, (False, True)))
            return [detail, *texts]

    def learn(self, texts: Iterable[str]) -> None:
        """Add every seed the texts could give away, directly or through a known derivation."""
        preimages = small_seed_preimages()
        found: set[int] = set()
        seeds: set[int] = set()
        salts: set[str] = set()
        for text in texts:
            salts.update(SALT.findall(text))
            found.update(n for n in map(int, NUMBER.findall(text)) if n <= MAX_SEED)
            inverted = {preimages[c] for c in COMMITMENT.findall(text) if c in preimages}
            shown = {int(n) for n in SEED_FIELD.findall(text) if int(n) <= MAX_SEED}
            found |= inverted
            # A tournament seed gives its fixtures' seeds by the public derivation.
            seeds |= {
                fixture_seed(n, r, t) for n in inverted | shown for r in ROUNDS for t in ROUNDS
            }
        new = found - self.numbers
        self.numbers |= new
        seeds |= new | {n + d for n in new for d in (-1, 1) if 0 <= n + d <= MAX_SEED}
        # The test process runs on the embedded development key: an installation left on it
        # would deal from these, given the competition's deal salt.
        new_salts = salts - self.salts
        self.salts |= new_salts
        keyed = {deal_seed(n, salt) for n in seeds for salt in self.salts}
        keyed |= {deal_seed(n, salt) for n in self.fixture_seeds for salt in new_salts}
        self.fixture_seeds |= seeds
        self.seeds |= seeds | keyed

    def seed_dealing(self, body: dict) -> int | None:
        """A candidate that deals the bot the hand of this request, if any."""
        match_id, deal, seat, players = (
            body["match_id"],
            body["deal"],
            body["seat"],
            body["players"],
        )
        variant = Variant.from_dict(body["variant"])
        ruled_out = self.ruled_out.setdefault(match_id, set())
        first = self.first_hands[match_id]
        for seed in sorted(self.seeds - ruled_out):
            if set(Game(variant, players, seed).hand(seat)) != first:
                ruled_out.add(seed)
                continue
            dealt = dealt_hands(body["variant"], players, seed, deal)
            if len(dealt) >= deal and dealt[deal - 1][seat] == set(body["hand"]):
                return seed
        return None

    def on_request(self, body: dict) -> None:
        """Read the API for this request; at a deal's first request, predict the others."""
        match_id, deal = body["match_id"], body["deal"]
        with self.turn:
            self.requests += 1
            first_of_deal = not any(
                p.match_id == match_id and p.deal == deal for p in self.predictions
            )
            self.learn(self.read_everything(match_id, full=first_of_deal))
            if deal == 1:
                self.first_hands.setdefault(match_id, frozenset(body["hand"]))
            seed = self.seed_dealing(body) if match_id in self.first_hands else None
            if seed is not None:
                self.found_during_play.append(f"{match_id}, deal {deal}: {seed}")
            if first_of_deal:
                self.predictions.append(predict(body, seed))


def predict(body: dict, seed: int | None) -> Prediction:
    """The other seats' hands: dealt from ``seed`` when the bot has one, else drawn at random
    (fixed by the bot's own hand) from the cards it cannot see."""
    players, seat, deal, size = body["players"], body["seat"], body["deal"], body["hand_size"]
    hand = frozenset(body["hand"])
    others = [s for s in range(players) if s != seat]
    if seed is not None:
        dealt = dealt_hands(body["variant"], players, seed, deal)[deal - 1]
        predicted = {s: frozenset(dealt[s]) for s in others}
    else:
        unseen = sorted(set(CARD_NAMES) - hand - {body["trump_card"]})
        rng = random.Random(",".join(sorted(hand)) + f"/{body['trump_card']}")
        rng.shuffle(unseen)
        predicted = {s: frozenset(unseen[i * size : (i + 1) * size]) for i, s in enumerate(others)}
    return Prediction(
        match_id=body["match_id"],
        deal=deal,
        seat=seat,
        players=players,
        hand_size=size,
        hand=hand,
        trump_card=body["trump_card"],
        predicted=predicted,
        from_seed=seed,
        body=body,
    )


def seat_hits(
    predictions: Iterable[Prediction], truth: dict[str, list[list[set[str]]]]
) -> dict[int, tuple[int, list[tuple[int, int]]]]:
    """For each other seat, counted from the predicting bot's seat: cards guessed right, and
    the draws. ``truth`` holds every seat's hand of each deal, by match id."""
    by_offset: dict[int, tuple[int, list[tuple[int, int]]]] = {}
    for p in predictions:
        hands = truth[p.match_id][p.deal - 1]
        assert hands[p.seat] == set(p.hand)  # the deals line up with what the bot was dealt
        for other, guessed in p.predicted.items():
            offset = (other - p.seat) % p.players
            hits, draws = by_offset.get(offset, (0, []))
            by_offset[offset] = (
                hits + len(guessed & hands[other]),
                [*draws, (p.unseen, p.hand_size)],
            )
    return by_offset


def first_legal_handler(
    name: str, on_request: Callable[[dict], None]
) -> type[BaseHTTPRequestHandler]:
    """An HTTP handler playing the first legal action, handing each decision to ``on_request``."""

    class FirstLegalBot(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            answer: dict = {}
            if body.get("type") == "hello":
                answer = {"name": name}
            elif body.get("type") in ("bid", "play"):
                on_request(body)
                answer = {body["type"] if body["type"] == "bid" else "card": body["legal"][0]}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return FirstLegalBot


def serve_first_legal(name: str, on_request: Callable[[dict], None]) -> ThreadingHTTPServer:
    """Serve a first-legal bot watching every decision on a free loopback port, in a thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), first_legal_handler(name, on_request))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def serve_spy(spy: Spy) -> ThreadingHTTPServer:
    """Serve the spying bot on a free loopback port, in a thread."""
    return serve_first_legal("spy", spy.on_request)


def hypergeometric(unseen: int, size: int) -> list[float]:
    """P(k of ``size`` guessed cards are among the ``size`` cards of one seat), k = 0..size,
    when that seat's cards are any ``size`` of the ``unseen`` cards, all alike likely."""
    total = comb(unseen, size)
    return [comb(size, k) * comb(unseen - size, size - k) / total for k in range(size + 1)]


def chance_tail(draws: Iterable[tuple[int, int]], hits: int) -> float:
    """P(at least ``hits`` right in all), for independent guesses of one seat's hand in several
    deals, each (unseen cards, hand size), by chance: the exact sum of hypergeometric laws."""
    law = [1.0]
    for unseen, size in draws:
        one = hypergeometric(unseen, size)
        summed = [0.0] * (len(law) + len(one) - 1)
        for i, p in enumerate(law):
            for j, q in enumerate(one):
                summed[i + j] += p * q
        law = summed
    return sum(law[hits:])
