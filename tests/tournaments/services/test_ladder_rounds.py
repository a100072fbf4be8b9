"""Ladder rounds: tables started one after another, no bot or team at two of them, rated as one
update of all their bots once the last one ends, exactly as a recompute rates them."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.support.rating_world import assert_live_equals_recompute
from tests.support.trueskill_package import package_env
from tournaments.maths.ratings import ROUND_TABLES, RatingParams
from tournaments.models import (
    CollusionPairTotal,
    Ladder,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingHistory,
)
from tournaments.selectors.rated_matches import latest_finishes
from tournaments.services.ladders import ladders_top_up
from tournaments.services.ratings import ratings_apply_pending

pytestmark = pytest.mark.django_db


def rounds(ladder: Ladder) -> dict[str, list[Match]]:
    found: dict[str, list[Match]] = {}
    for match in Match.objects.filter(ladder=ladder).order_by("pk"):
        found.setdefault(match.table_round, []).append(match)
    return found


def seated(match: Match) -> list[int]:
    return list(match.seats.order_by("seat").values_list("bot_id", flat=True))


def record(match: Match, scores: list[int], disqualified: int | None = None) -> None:
    """Finish ``match`` with these points by seat (and one seat disqualified, if given)."""
    for seat in match.seats.all():
        seat.score = scores[seat.seat]
        seat.disqualified = seat.seat == disqualified
        seat.save(update_fields=["score", "disqualified"])
    Match.objects.filter(pk=match.pk).update(
        status=MatchStatus.FINISHED, finished_at=timezone.now()
    )


def test_the_ladder_rates_its_tables_in_rounds_by_default(ladder) -> None:
    assert ladder.round_tables == ROUND_TABLES > 1
    assert not ladder.duplicate


def test_tables_started_one_after_another_join_a_round_until_it_is_full(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 5
    ladder.round_tables = 2
    ladder.save(update_fields=["round_tables"])
    ladder_bots(20)
    assert ladders_top_up() == 5
    sizes = sorted(len(tables) for tables in rounds(ladder).values())
    assert sizes == [1, 2, 2]
    ladder.refresh_from_db()
    (last,) = [key for key, tables in rounds(ladder).items() if len(tables) == 1]
    assert ladder.current_round == last

    # The round with room takes the next table while none of its tables has ended.
    first = Match.objects.filter(ladder=ladder).order_by("pk").first()
    assert first is not None
    record(first, [10, 20, 30, 40])
    assert ladders_top_up() == 1
    newest = Match.objects.filter(ladder=ladder).order_by("-pk").first()
    assert newest is not None and newest.table_round == last


def test_a_round_takes_no_table_once_one_of_its_tables_has_ended(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder_bots(8)
    ladders_top_up()
    (first,) = Match.objects.filter(ladder=ladder)
    record(first, [10, 20, 30, 40])
    assert ladders_top_up() == 1
    second = Match.objects.filter(ladder=ladder).exclude(pk=first.pk).get()
    assert second.table_round not in {"", first.table_round}


def test_no_owner_or_address_sits_at_two_tables_of_one_round(
    ladder, ladder_bots, owner, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 4
    settings.LADDER_MAX_BOTS_PER_OWNER = 4
    settings.LADDER_MAX_TABLES_PER_OWNER = 4
    mine = {bot.pk for bot in ladder_bots(4, owner=owner)}
    behind_one_host = ladder_bots(2, endpoint_addresses=["203.0.113.9"])
    ladder_bots(10)
    assert ladders_top_up() >= 2
    host = {bot.pk for bot in behind_one_host}
    for tables in rounds(ladder).values():
        bots = [bot for match in tables for bot in seated(match)]
        assert len(bots) == len(set(bots))
        assert len(mine & set(bots)) <= 1
        assert len(host & set(bots)) <= 1
    playing = set(MatchSeat.objects.filter(match__ladder=ladder).values_list("bot_id", flat=True))
    assert len(rounds(ladder)) >= len(mine & playing) >= 2  # each of the owner's in its own


def test_a_ladder_that_rates_tables_alone_makes_no_rounds(ladder, ladder_bots, settings) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 3
    ladder.round_tables = 1
    ladder.save(update_fields=["round_tables"])
    ladder_bots(12)
    ladders_top_up()
    assert set(rounds(ladder)) == {""}


def _expected(tables: list[tuple[list[int], list[int]]], params: RatingParams) -> dict:
    """The trueskill package's own free-for-all update of every bot of the tables, ranked by
    points across them (a shared total a shared place), the bots listed by seat, then id."""
    env = package_env(params)
    seats = sorted(
        (seat, bot, points)
        for bots, scores in tables
        for seat, (bot, points) in enumerate(zip(bots, scores, strict=True))
    )
    bots = [bot for _, bot, _ in seats]
    points = [p for _, _, p in seats]
    ranks = [1 + sum(other > mine for other in points) for mine in points]
    after = env.rate([(env.create_rating(),) for _ in bots], ranks=ranks)
    return {bot: (new.mu, new.sigma) for bot, (new,) in zip(bots, after, strict=True)}


def test_a_round_is_rated_as_one_update_once_its_last_table_has_ended(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 3
    ladder_bots(12)
    assert ladders_top_up() == 3
    (tables,) = rounds(ladder).values()
    scores = [[55, 31, 12, 40], [31, 70, 8, 25], [66, 12, 31, 19]]  # 31 and 12 at three tables
    record(tables[0], scores[0])
    record(tables[1], scores[1])
    assert ratings_apply_pending() == 0  # the third table still plays
    assert not Rating.objects.exists()
    record(tables[2], scores[2])
    assert ratings_apply_pending() == 3

    expected = _expected(
        [(seated(m), s) for m, s in zip(tables, scores, strict=True)],
        RatingParams.from_dict(ladder.variant.rating_params),
    )
    ratings = {r.bot_id: (r.mu, r.sigma) for r in Rating.objects.all()}
    assert ratings.keys() == expected.keys()
    for bot, (mu, sigma) in expected.items():
        assert ratings[bot] == pytest.approx((mu, sigma), rel=1e-9, abs=1e-9)
    history = list(RatingHistory.objects.all())
    assert len(history) == 12 and len({row.sequence for row in history}) == 1
    tables_of = {m.pk: seated(m) for m in tables}
    for row in history:  # each bot's row on the table it played
        assert row.match_id is not None and row.bot_id in tables_of[row.match_id]
    groups = set(Match.objects.filter(ladder=ladder).values_list("rating_group", flat=True))
    assert len(groups) == 1 and "" not in groups
    assert_live_equals_recompute()
    # The batch ranks and the collusion scan read each table of a round as a unit of its own:
    # only tables dealt alike (duplicate rotations) are read together.
    units = latest_finishes(variant_id=ladder.variant_id, limit=10)
    assert sorted(sorted(unit[0].bots) for unit in units) == sorted(
        sorted(seated(m)) for m in tables
    )
    assert all(len(unit) == 1 for unit in units)
    # So do the collusion sums: two bots of the round at different tables never met.
    met = set(CollusionPairTotal.objects.values_list("first_id", "second_id"))
    assert met == {(a, b) for m in tables for a in seated(m) for b in seated(m) if a < b}


def test_a_round_ranks_a_disqualified_bot_last_and_leaves_a_refusing_one_out(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 2
    ladder_bots(8)
    ladders_top_up()
    (tables,) = rounds(ladder).values()
    record(tables[0], [90, 30, 20, 10], disqualified=0)
    MatchSeat.objects.filter(match=tables[1], seat=3).update(refused_every_request=True)
    record(tables[1], [50, 40, 35, 0])
    assert ratings_apply_pending() == 2
    dropped = seated(tables[0])[0]
    refused = seated(tables[1])[3]
    ratings = {r.bot_id: r.mu for r in Rating.objects.all()}
    assert refused not in ratings and len(ratings) == 7
    assert ratings[dropped] == min(ratings.values())
    assert_live_equals_recompute()


def test_a_round_waiting_for_its_last_table_holds_up_no_other_match(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 3
    ladder.round_tables = 2
    ladder.save(update_fields=["round_tables"])
    ladder_bots(12)
    ladders_top_up()
    by_round = sorted(rounds(ladder).values(), key=len)
    (alone,), (waiting, playing) = by_round
    record(waiting, [1, 2, 3, 4])
    record(alone, [4, 3, 2, 1])
    assert ratings_apply_pending() == 1  # the single table, not the waiting one
    assert Match.objects.filter(rated=False, status=MatchStatus.FINISHED).get() == waiting
    record(playing, [9, 9, 9, 9])
    assert ratings_apply_pending() == 2
    assert_live_equals_recompute()
