"""Replays: the versioned JSON record of a game, and re-playing one to verify it."""

from __future__ import annotations

from typing import Any

from engine.errors import EngineError, InvalidReplayError
from engine.game import Game, Phase
from engine.seeds import seed_matches
from engine.variant import Variant

FORMAT = "ohhell-replay/1"


def to_replay(game: Game) -> dict[str, Any]:
    """Return the replay of ``game`` (finished or not) as a JSON-ready dict."""
    return {
        "format": FORMAT,
        "variant": game.variant.to_dict(),
        "players": game.players,
        "seed": game.seed,
        "first_dealer": game.first_dealer,
        "deals": [deal.to_dict(i + 1) for i, deal in enumerate(game.deals)],
        "finished": game.is_over,
        "totals": list(game.totals),
        "bonus": list(game.bonus),
        "ranks": game.ranks(),
    }


def replay_game(data: Any) -> Game:
    """Re-play a replay through the rules and return the game; refuse any mismatch."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidReplayError(f"not a replay: 'format' must be {FORMAT!r}")
    try:
        game = Game(Variant.from_dict(data["variant"]), data["players"], data["seed"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidReplayError(f"cannot set up the game: {exc}") from None
    _expect("first_dealer", data.get("first_dealer"), game.first_dealer)
    deals = data.get("deals")
    if not isinstance(deals, list) or not deals:
        raise InvalidReplayError("'deals' must be a non-empty list")
    for number, deal in enumerate(deals, start=1):
        if game.is_over:
            raise InvalidReplayError(f"deal {number}: the game was already over")
        _replay_deal(game, number, deal)
    if data.get("finished") and not game.is_over:
        raise InvalidReplayError("the replay says finished but the game is not over")
    summary = to_replay(game)
    for key in ("finished", "totals", "bonus", "ranks"):
        _expect(key, data.get(key), summary[key])
    return game


def verify_replay(data: Any) -> dict[str, Any]:
    """Re-play ``data`` and return a short summary; raise InvalidReplayError when it differs.

    A replay published with a commitment (``seed_sha256``, see engine/seeds.py) must reveal the
    seed it committed to; ``seed_committed`` in the summary says whether one was checked.
    """
    commitment = data.get("seed_sha256") if isinstance(data, dict) else None
    if commitment is not None:
        seed = data.get("seed")
        if not isinstance(commitment, str) or not isinstance(seed, int) or isinstance(seed, bool):
            raise InvalidReplayError("'seed_sha256' must be a hex string and 'seed' an integer")
        try:
            committed = seed_matches(seed, commitment)
        except ValueError as exc:
            raise InvalidReplayError(str(exc)) from None
        if not committed:
            raise InvalidReplayError(
                f"the seed {seed} does not match its commitment seed_sha256 {commitment}"
            )
    game = replay_game(data)
    return {
        "deals": len(game.deals),
        "finished": game.is_over,
        "totals": list(game.totals),
        "seed_committed": commitment is not None,
    }


def _expect(what: str, found: Any, wanted: Any) -> None:
    if found != wanted:
        raise InvalidReplayError(f"{what}: the replay says {found!r}, the rules give {wanted!r}")


def _replay_deal(game: Game, number: int, deal: Any) -> None:
    if not isinstance(deal, dict):
        raise InvalidReplayError(f"deal {number}: must be an object")
    record = game.deals[-1].to_dict(number)
    for key in ("dealer", "hand_size", "hands", "trump", "trump_card"):
        _expect(f"deal {number} {key}", deal.get(key), record[key])
    bids = deal.get("bids")
    if not isinstance(bids, list) or len(bids) != game.players:
        raise InvalidReplayError(f"deal {number}: 'bids' must list one bid per seat")
    try:
        _replay_actions(game, number, deal, bids)
    except EngineError as exc:
        if isinstance(exc, InvalidReplayError):
            raise
        raise InvalidReplayError(f"deal {number}: {exc}") from None
    # Whatever the actions did not already check (tricks won, scores, the shape of the
    # record) must still match what the rules give, or an edited record would pass.
    record = game.deals[number - 1].to_dict(number)
    for key, wanted in record.items():
        _expect(f"deal {number} {key}", deal.get(key), wanted)


def _replay_actions(game: Game, number: int, deal: dict[str, Any], bids: list[Any]) -> None:
    while game.phase is Phase.BID and game.deal_number == number:
        if bids[game.acting_seat] is None:
            return  # an unfinished game stops here
        game.bid(bids[game.acting_seat])
    tricks = deal.get("tricks")
    if not isinstance(tricks, list) or len(tricks) > game.hand_size:
        raise InvalidReplayError(
            f"deal {number}: 'tricks' must be a list of at most {game.hand_size} tricks"
        )
    for t, trick in enumerate(tricks, start=1):
        _replay_trick(game, number, t, trick)


def _replay_trick(game: Game, number: int, t: int, trick: Any) -> None:
    if not isinstance(trick, dict) or not isinstance(trick.get("cards"), list):
        raise InvalidReplayError(f"deal {number} trick {t}: must hold a list of cards")
    _expect(f"deal {number} trick {t} leader", trick.get("leader"), game.to_act)
    if len(trick["cards"]) > game.players:
        raise InvalidReplayError(f"deal {number} trick {t}: more cards than players")
    for card in trick["cards"]:
        game.play(card)
    if len(trick["cards"]) == game.players:
        winner = game.deals[number - 1].winners[t - 1]
        _expect(f"deal {number} trick {t} winner", trick.get("winner"), winner)
