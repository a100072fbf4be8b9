"""Always-on ladders: who gets seated, tables in flight, independent deals by default,
duplicate rotations when staff switch them on, pause and resume."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tournaments.errors import ApplicationError, ConflictError
from tournaments.models import (
    BotStatus,
    Ladder,
    LadderStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    SharedHost,
)
from tournaments.services.ladders import (
    bot_set_ladder_opt_in,
    ladder_create,
    ladder_ensure_default,
    ladder_pause,
    ladder_resume,
    ladder_update,
    ladders_top_up,
)
from tournaments.services.matches import match_claim


@pytest.fixture
def duplicate_ladder(ladder) -> Ladder:
    """The ladder with duplicate switched on, as staff may do in the admin."""
    ladder.duplicate = True
    ladder.save(update_fields=["duplicate", "updated_at"])
    return ladder


def open_seats() -> list[int]:
    return list(
        MatchSeat.objects.filter(
            match__status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING]
        ).values_list("bot_id", flat=True)
    )


def groups(ladder: Ladder) -> dict[str, list[Match]]:
    found: dict[str, list[Match]] = {}
    for match in Match.objects.filter(ladder=ladder).order_by("pk"):
        found.setdefault(match.duplicate_group, []).append(match)
    return found


def finish(matches) -> None:
    Match.objects.filter(pk__in=[m.pk for m in matches]).update(
        status=MatchStatus.FINISHED, finished_at=timezone.now()
    )


def test_the_oh_hell_ladder_runs_by_default_with_independent_deals(oh_hell) -> None:
    ladder = ladder_ensure_default()
    assert ladder is not None
    assert ladder.variant == oh_hell and ladder.status == LadderStatus.RUNNING
    assert not ladder.duplicate
    again = ladder_ensure_default()
    assert again is not None and again.pk == ladder.pk


def test_only_active_opted_in_bots_are_seated_each_at_one_open_table(
    ladder, ladder_bots, make_bot, owner, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 3
    playing = ladder_bots(13)
    not_opted = ladder_bots(3, ladder_opt_in=False)
    pending = ladder_bots(3, status=BotStatus.PENDING)
    assert ladders_top_up() == 3  # three tables of four
    seated = open_seats()
    assert set(seated) <= {b.pk for b in playing}
    assert not set(seated) & {b.pk for b in not_opted + pending}
    assert len(seated) == len(set(seated)) == 12


def test_every_table_is_one_match_with_a_deal_of_its_own(ladder, ladder_bots, settings) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 3
    ladder_bots(12)
    ladders_top_up()
    matches = list(Match.objects.filter(ladder=ladder))
    assert len(matches) == 3 and {m.duplicate_group for m in matches} == {""}
    assert len({m.seed for m in matches}) == 3


def test_a_duplicate_group_is_every_seat_rotation_of_one_deal(
    duplicate_ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder_bots(4)
    ladders_top_up()
    (members,) = groups(duplicate_ladder).values()
    assert len(members) == 4 and len({m.seed for m in members}) == 1
    seatings = [tuple(m.seats.order_by("seat").values_list("bot_id", flat=True)) for m in members]
    for seat in range(4):
        assert len({seating[seat] for seating in seatings}) == 4  # each bot held each seat once


def test_a_later_rotation_waits_for_the_earlier_one(
    duplicate_ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder_bots(4)
    ladders_top_up()
    first, second, *_ = next(iter(groups(duplicate_ladder).values()))
    assert not match_claim(match_id=second.pk, token="t2")
    assert match_claim(match_id=first.pk, token="t1")
    assert not match_claim(match_id=second.pk, token="t2")  # the first is running
    finish([first])
    assert match_claim(match_id=second.pk, token="t2")


def test_the_ladder_keeps_its_tables_in_flight_and_no_more(ladder, ladder_bots, settings) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 2
    ladder_bots(12)
    assert ladders_top_up() == 2
    assert ladders_top_up() == 0
    finish(Match.objects.filter(ladder=ladder).order_by("pk")[:1])
    assert ladders_top_up() == 1
    assert Match.objects.filter(ladder=ladder).count() == 3


def test_a_duplicate_group_in_flight_is_one_table(duplicate_ladder, ladder_bots, settings) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 2
    ladder_bots(12)
    ladders_top_up()
    assert ladders_top_up() == 0
    assert len(groups(duplicate_ladder)) == 2
    finish(next(iter(groups(duplicate_ladder).values())))
    assert ladders_top_up() == 4  # one new group of four rotations
    assert len(groups(duplicate_ladder)) == 3


def test_a_ladder_switched_on_deals_independently_unless_asked(
    ladder, ladder_bots, settings
) -> None:
    from tournaments.models import Variant

    settings.LADDER_MATCHES_IN_FLIGHT = 2
    ladder_pause(ladder=ladder)
    blackout = Variant.objects.get(name="blackout")
    ladder = ladder_create(variant=blackout, table_size=3)
    assert not ladder.duplicate
    ladder_bots(7)
    assert ladders_top_up() == 2
    assert all(m.duplicate_group == "" for m in Match.objects.filter(ladder=ladder))
    assert sorted(set(MatchSeat.objects.values_list("seat", flat=True))) == [0, 1, 2]


def test_too_few_bots_make_no_table(ladder, ladder_bots) -> None:
    ladder_bots(3)
    assert ladders_top_up() == 0 and not Match.objects.exists()


def test_a_paused_ladder_makes_no_tables_and_its_matches_wait(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder_bots(4)
    ladders_top_up()
    first = Match.objects.get(ladder=ladder)
    ladder_pause(ladder=ladder)
    assert not match_claim(match_id=first.pk, token="t")
    finish(Match.objects.filter(ladder=ladder))
    assert ladders_top_up() == 0
    with pytest.raises(ConflictError):
        ladder_pause(ladder=ladder)
    ladder_resume(ladder=ladder)
    assert ladders_top_up() == 1
    with pytest.raises(ApplicationError):
        ladder_resume(ladder=ladder)


def test_a_disabled_bot_leaves_until_it_is_active_again(ladder, ladder_bots, settings) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    bots = ladder_bots(4)
    ladders_top_up()
    bots[0].status, bots[0].disabled_cause = BotStatus.DISABLED, "health"
    bots[0].save()
    assert ladders_top_up() == 0  # three bots left: no table
    assert set(Match.objects.values_list("status", flat=True)) == {MatchStatus.CANCELLED}
    bots[0].status, bots[0].disabled_cause = BotStatus.ACTIVE, ""
    bots[0].save()
    assert ladders_top_up() == 1


def test_opting_out_leaves_the_ladder(ladder, ladder_bots, settings) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    bots = ladder_bots(4)
    bot_set_ladder_opt_in(bot=bots[1], enabled=False)
    assert ladders_top_up() == 0
    bot_set_ladder_opt_in(bot=bots[1], enabled=True)
    assert ladders_top_up() == 1


def test_uncertain_and_behind_bots_are_seated_first(ladder, ladder_bots, settings) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    settled = ladder_bots(8)
    newcomer = ladder_bots(1)[0]
    for bot in settled:
        Rating.objects.create(bot=bot, variant=ladder.variant, mu=25, sigma=1.0, matches=50)
    ladders_top_up()
    assert newcomer.pk in open_seats()


def test_a_second_ladder_or_an_unseatable_table_is_refused(ladder) -> None:
    from tournaments.models import Variant

    with pytest.raises(ConflictError):
        ladder_create(variant=ladder.variant)
    with pytest.raises(ApplicationError) as refused:
        ladder_create(variant=Variant.objects.get(name="blackout"), table_size=8)
    assert refused.value.field == "table_size"


def test_a_ladder_group_is_rated_as_one_once_every_rotation_has_ended(
    duplicate_ladder, ladder_bots, settings
) -> None:
    from tournaments.models import RatingHistory, Replay
    from tournaments.services.ratings import ratings_apply_pending

    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder_bots(4)
    ladders_top_up()
    members = next(iter(groups(duplicate_ladder).values()))

    def record(match: Match) -> None:
        seats = list(match.seats.order_by("seat"))
        for seat in seats:
            seat.score = (seat.bot_id * 7) % 11
            seat.save(update_fields=["score"])
        Replay.objects.create(match=match, data={"deals": [{"scores": [s.score for s in seats]}]})
        finish([match])

    record(members[0])
    assert ratings_apply_pending() == 0  # the other rotations are still queued
    for match in members[1:]:
        record(match)
    assert ratings_apply_pending() == 4
    rated = Match.objects.filter(ladder=duplicate_ladder)
    assert len(set(rated.values_list("rating_group", flat=True))) == 1
    assert RatingHistory.objects.count() == 4  # one update for the four bots


def test_in_process_tasks_never_chain_ladder_top_ups(
    ladder, ladder_bots, django_capture_on_commit_callbacks
) -> None:
    from django.test import override_settings

    ladder_bots(3)
    (newcomer,) = ladder_bots(1, ladder_opt_in=False)
    # The Celery app reads its settings from Django's (config/celery_app.py).
    with (
        override_settings(CELERY_TASK_ALWAYS_EAGER=True),
        django_capture_on_commit_callbacks() as callbacks,
    ):
        bot_set_ladder_opt_in(bot=newcomer, enabled=True)
    # Run eagerly, a top-up would play its matches and each would top up again, without end.
    assert callbacks == []
    with (
        override_settings(CELERY_TASK_ALWAYS_EAGER=False),
        django_capture_on_commit_callbacks() as callbacks,
    ):
        bot_set_ladder_opt_in(bot=newcomer, enabled=False)
        bot_set_ladder_opt_in(bot=newcomer, enabled=True)
    assert len(callbacks) == 1  # on real workers, opting in tops the ladders up


def open_tables(ladder: Ladder) -> list[Match]:
    return list(Match.objects.filter(ladder=ladder, status__in=[MatchStatus.QUEUED]).order_by("pk"))


def tables_of(ladder: Ladder) -> list[set[int]]:
    seated: dict[int, set[int]] = {}
    for match_id, bot_id in MatchSeat.objects.filter(match__ladder=ladder).values_list(
        "match_id", "bot_id"
    ):
        seated.setdefault(match_id, set()).add(bot_id)
    return list(seated.values())


def play_tables(ladder: Ladder, count: int) -> list[set[int]]:
    """Top up and finish the oldest open table, again and again, until ``count`` were made."""
    for _ in range(10 * count):
        ladders_top_up()
        if Match.objects.filter(ladder=ladder).count() >= count:
            break
        finish(open_tables(ladder)[:1])
    tables = tables_of(ladder)
    assert len(tables) >= count, "the ladder stopped making tables"
    return tables


def test_four_bots_of_one_owner_never_share_a_table(ladder, ladder_bots, owner, settings) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 2
    settings.LADDER_MAX_BOTS_PER_OWNER = 4
    mine = {bot.pk for bot in ladder_bots(4, owner=owner)}
    ladder_bots(4)
    tables = play_tables(ladder, 200)
    assert max(len(table & mine) for table in tables) == 1
    assert {bot for table in tables for bot in table} >= mine  # each of them still plays


def test_the_ladder_waits_while_only_bots_of_one_owner_are_free(
    ladder, ladder_bots, owner, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 2
    settings.LADDER_MAX_BOTS_PER_OWNER = 4
    ladder_bots(4, owner=owner)
    ladder_bots(4)
    assert ladders_top_up() == 1  # the three bots left free are all the owner's but one
    assert ladders_top_up() == 0
    (table,) = tables_of(ladder)
    assert len(table & set(owner.bots.values_list("pk", flat=True))) == 1


def test_bots_behind_one_address_are_one_team_unless_it_is_a_shared_host(
    ladder, ladder_bots, settings, staff
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 2
    course = ["192.0.2.10"]
    together = {bot.pk for bot in ladder_bots(4, endpoint_addresses=course)}
    assert ladders_top_up() == 0  # four owners, one server: one team
    SharedHost.objects.create(address="192.0.2.10", note="course server", created_by=staff)
    assert ladders_top_up() == 1
    assert tables_of(ladder) == [together]


def test_bots_behind_one_address_never_sit_together_over_many_tables(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 2
    farm = {bot.pk for bot in ladder_bots(3, endpoint_addresses=["198.51.100.7", "2001:db8::1"])}
    # Another address of the same IPv6 /64 is the same host.
    farm |= {bot.pk for bot in ladder_bots(1, endpoint_addresses=["2001:db8::2"])}
    for n in range(6):
        ladder_bots(1, endpoint_addresses=[f"203.0.113.{n}"])
    tables = play_tables(ladder, 60)
    assert max(len(table & farm) for table in tables) == 1


def test_an_owner_may_opt_in_only_so_many_bots(ladder, ladder_bots, owner, settings) -> None:
    settings.LADDER_MAX_BOTS_PER_OWNER = 3
    first, second, third, fourth = ladder_bots(4, owner=owner, ladder_opt_in=False)
    for bot in (first, second, third):
        bot_set_ladder_opt_in(bot=bot, enabled=True)
    with pytest.raises(ConflictError) as refused:
        bot_set_ladder_opt_in(bot=fourth, enabled=True)
    assert refused.value.field == "ladder_opt_in"
    fourth.refresh_from_db()
    assert not fourth.ladder_opt_in
    bot_set_ladder_opt_in(bot=first, enabled=False)
    assert bot_set_ladder_opt_in(bot=fourth, enabled=True).ladder_opt_in


def test_only_an_owners_oldest_opted_in_bots_play_beyond_the_cap(
    ladder, ladder_bots, owner, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 10
    settings.LADDER_MAX_BOTS_PER_OWNER = 2
    settings.LADDER_MAX_TABLES_PER_OWNER = 10
    mine = [bot.pk for bot in ladder_bots(5, owner=owner)]  # opted in before the cap
    ladder_bots(12)
    seated = {bot for table in play_tables(ladder, 30) for bot in table}
    assert seated & set(mine) == set(mine[:2])


def test_an_owners_bots_sit_at_no_more_than_their_share_of_tables(
    ladder, ladder_bots, owner, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 4
    settings.LADDER_MAX_TABLES_PER_OWNER = 2
    mine = {bot.pk for bot in ladder_bots(3, owner=owner)}
    ladder_bots(13)
    assert ladders_top_up() == 3  # a fourth table would need the owner's third bot
    for _ in range(30):
        held = [table for table in map(set, _open_seatings(ladder)) if table & mine]
        assert len(held) <= 2
        finish(open_tables(ladder)[:1])
        ladders_top_up()


def _open_seatings(ladder: Ladder) -> list[list[int]]:
    return [list(match.seats.values_list("bot_id", flat=True)) for match in open_tables(ladder)]


def test_a_ladder_change_refuses_a_table_the_variant_cannot_seat_and_writes_nothing(ladder) -> None:
    with pytest.raises(ApplicationError) as refused:
        ladder_update(ladder=ladder, data={"table_size": 9, "time_limit_ms": 500})
    assert refused.value.field == "table_size"
    ladder.refresh_from_db()
    assert (ladder.table_size, ladder.time_limit_ms) == (4, 1000)


def test_a_ladder_keeps_its_round_unless_the_tables_or_the_round_change(ladder) -> None:
    Ladder.objects.filter(pk=ladder.pk).update(current_round="round-1")
    ladder = ladder_update(ladder=ladder, data={"time_limit_ms": 800})
    assert (ladder.time_limit_ms, ladder.current_round) == (800, "round-1")
    ladder = ladder_update(ladder=ladder, data={"round_tables": 2})
    assert Ladder.objects.get(pk=ladder.pk).current_round == ""
