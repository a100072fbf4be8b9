"""A competition's time bank: set on ladders and tournaments, copied into every match when it is
made, and played by the match with the bank it was made under, against a real slow bot."""

from __future__ import annotations

import pytest

from arena.timebank import DEFAULT_TIME_BANK_MS
from tests.support.starting import start_and_generate
from tests.support.users import make_confirmed_user
from tournaments.models import Ladder, Match, Replay, Tournament
from tournaments.services.ladders import ladder_ensure_default, ladders_top_up
from tournaments.services.matches import match_create
from tournaments.services.runs import match_play, match_run
from tournaments.services.tournaments import tournament_create

pytestmark = pytest.mark.django_db


def test_a_tournament_gives_its_bank_to_every_match_it_makes(
    organiser, playing_bots, short_variant
) -> None:
    bots = playing_bots(3)
    tournament = tournament_create(
        organiser=organiser,
        name="banked cup",
        variant=short_variant,
        format="round_robin",
        bot_ids=[b.pk for b in bots],
        table_size=3,
        time_limit_ms=500,
        time_bank_ms=2500,
    )
    assert Tournament.objects.get(pk=tournament.pk).time_bank_ms == 2500
    start_and_generate(tournament)
    banks = set(Match.objects.filter(tournament=tournament).values_list("time_bank_ms", flat=True))
    assert banks == {2500}


def test_a_ladder_match_keeps_the_bank_it_was_made_under(oh_hell, make_bot, settings) -> None:

    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder = ladder_ensure_default()
    assert ladder is not None and ladder.time_bank_ms == DEFAULT_TIME_BANK_MS
    Ladder.objects.filter(pk=ladder.pk).update(time_bank_ms=4000)
    for i in range(4):
        make_bot(make_confirmed_user(f"p{i}"), status="active", ladder_opt_in=True)
    assert ladders_top_up() == 1
    Ladder.objects.filter(pk=ladder.pk).update(time_bank_ms=0)  # staff change it later
    (match,) = Match.objects.filter(ladder=ladder)
    assert match.time_bank_ms == 4000


def test_a_tournament_given_no_bank_gets_the_default(
    organiser, playing_bots, short_variant
) -> None:
    tournament = tournament_create(
        organiser=organiser,
        name="default cup",
        variant=short_variant,
        format="round_robin",
        bot_ids=[b.pk for b in playing_bots(3)],
        table_size=3,
    )
    assert tournament.time_bank_ms == DEFAULT_TIME_BANK_MS


@pytest.fixture
def slow_first_seat(playing_bots, short_variant, make_bot, owner, scripted_bot_server):
    """A bot that answers every request 3 s late (with ``{}``), and three bots that do not."""
    slow = make_bot(owner, endpoint_url=f"{scripted_bot_server}/slow", status="active")
    return [slow.pk, *(b.pk for b in playing_bots(3))]


def _match(variant_id: int, bot_ids: list[int], time_bank_ms: int) -> Match:
    return match_create(
        variant_id=variant_id, bot_ids=bot_ids, seed=5, time_limit_ms=300, time_bank_ms=time_bank_ms
    )


def test_a_match_plays_with_its_own_bank(short_variant, slow_first_seat) -> None:
    # The slow seat's first decision is a bid (600 ms): with a 4000 ms bank it is cut only at
    # 4700 ms, so its answer 3 s late arrives and draws about 2400 ms; the next, a play cut at
    # 300 + about 1600 + 100 ms, is a timeout that empties the bank.
    banked = match_play(match_id=_match(short_variant.pk, slow_first_seat, 4000).pk)
    unbanked = match_play(match_id=_match(short_variant.pk, slow_first_seat, 0).pk)

    def slow_seat(outcome) -> list[dict]:
        return [d for d in outcome.replay["decisions"] if d["seat"] == 0]

    first, second = slow_seat(banked)[:2]
    assert first["fault"] == "wrong_shape"  # its `{}` came in time: it is no bid
    assert first["latency_ms"] >= 3000
    assert 4000 - first["time_bank_ms"] == pytest.approx(first["latency_ms"] - 600, abs=1.1)
    assert second["fault"] == "timeout" and second["time_bank_ms"] == 0
    assert banked.seats[0].to_dict()["timing"]["time_bank_ms"] == 4000
    assert slow_seat(unbanked)[0]["fault"] == "timeout"
    assert unbanked.seats[0].to_dict()["timing"]["time_bank_used_ms"] == 0


def test_the_match_and_its_stored_replay_show_the_bank(
    playing_bots, short_variant, anonymous_client
) -> None:
    match = match_create(
        variant_id=short_variant.pk,
        bot_ids=[b.pk for b in playing_bots(4)],
        seed=3,
        time_limit_ms=500,
        time_bank_ms=1500,
    )
    assert match_run(match_id=match.pk) == "recorded"
    decisions = Replay.objects.get(match=match).data["decisions"]
    assert decisions and {d["time_bank_ms"] for d in decisions} <= set(range(1501))
    assert all("time_bank_ms" in d for d in decisions)
    assert anonymous_client.get(f"/api/matches/{match.pk}/").json()["time_bank_ms"] == 1500
