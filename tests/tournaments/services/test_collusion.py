"""The stored collusion scans: read from sums kept as the matches are rated, flagged pairs and
bots stored with their evidence, replaced whole, kept while nothing changed."""

from __future__ import annotations

from collections import Counter

import pytest

from config.celery_app import route_task
from tests.support.collusion import Planted, store_season
from tests.support.world import play_and_record, queue_match
from tournaments.dispatch import Task
from tournaments.models import (
    Bot,
    CollusionBotFlag,
    CollusionBotTotal,
    CollusionFlag,
    CollusionPairTotal,
    CollusionScan,
    Match,
    MatchSeat,
    Scrimmage,
    Tournament,
    TournamentStatus,
    Variant,
)
from tournaments.services.collusion import collusion_scan, collusion_scan_all
from tournaments.services.matches import match_create
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.recompute import ratings_recompute

pytestmark = pytest.mark.django_db


@pytest.fixture
def bots(make_bot, owner):
    return [make_bot(owner, status="active") for _ in range(8)]


def test_a_planted_pair_in_stored_matches_is_flagged_with_its_evidence(
    bots, oh_hell, settings
) -> None:
    settings.COLLUSION_MIN_TABLES = 20
    settings.COLLUSION_FALSE_DISCOVERY_RATE = 0.01
    store_season(oh_hell, bots, tables=700, seed=4, planted=Planted(beneficiary=5, partner=1))
    assert collusion_scan(variant_id=oh_hell.pk)
    scan = CollusionScan.objects.get(variant=oh_hell)
    assert scan.matches == 700
    assert scan.pairs_tested == 28
    assert (scan.min_tables, scan.false_discovery_rate) == (20, 0.01)
    flag = CollusionFlag.objects.get(scan=scan)
    assert (flag.beneficiary, flag.partner) == (bots[5], bots[1])
    together = MatchSeat.objects.filter(bot=bots[5], match__seats__bot=bots[1]).count()
    assert flag.tables == together
    assert flag.beneficiary_with > flag.beneficiary_without
    assert flag.partner_with < flag.partner_without
    assert flag.adjusted_p <= 0.01 and flag.p_value <= flag.adjusted_p
    assert flag.lift > 0 and flag.drop > 0 and flag.z > 3


def test_honest_stored_matches_flag_nothing(bots, oh_hell, settings) -> None:
    settings.COLLUSION_MIN_TABLES = 20
    settings.COLLUSION_FALSE_DISCOVERY_RATE = 0.01
    store_season(oh_hell, bots, tables=700, seed=4, planted=None)
    assert collusion_scan(variant_id=oh_hell.pk)
    scan = CollusionScan.objects.get(variant=oh_hell)
    assert scan.pairs_tested == 28 and scan.bots_tested == 8
    assert not CollusionFlag.objects.filter(scan=scan).exists()
    assert not CollusionBotFlag.objects.filter(scan=scan).exists()


def test_a_scan_is_kept_while_nothing_changed_and_replaced_whole_when_it_did(
    bots, oh_hell, settings
) -> None:
    settings.COLLUSION_MIN_TABLES = 20
    store_season(oh_hell, bots, tables=700, seed=4, planted=Planted(beneficiary=5, partner=1))
    assert collusion_scan_all() == {"scanned": 1, "current": 0}
    first = CollusionScan.objects.get(variant=oh_hell)
    assert collusion_scan_all() == {"scanned": 0, "current": 1}
    assert CollusionScan.objects.get(variant=oh_hell).pk == first.pk
    # Other settings change the scan: the old one and its flags go.
    settings.COLLUSION_MIN_REPEAT = 4
    assert collusion_scan(variant_id=oh_hell.pk)
    scan = CollusionScan.objects.get(variant=oh_hell)
    assert scan.pk != first.pk and scan.min_repeat == 4
    assert not CollusionFlag.objects.filter(scan_id=first.pk).exists()
    # So do more rated matches.
    store_season(oh_hell, bots, tables=20, seed=5, planted=None)
    assert collusion_scan(variant_id=oh_hell.pk)
    assert CollusionScan.objects.get(variant=oh_hell).matches == 720


def test_the_sums_hold_every_rated_table_and_a_recompute_rebuilds_them_to_the_last_bit(
    bots, oh_hell
) -> None:
    store_season(oh_hell, bots, tables=300, seed=4, planted=Planted(beneficiary=5, partner=1))
    seated = Counter(MatchSeat.objects.values_list("bot_id", flat=True))
    live_bots = _stored_bots()
    assert {bot: n for bot, (n, *_) in live_bots.items()} == dict(seated)
    live_pairs = _stored_pairs()
    assert len(live_pairs) == 28
    assert ratings_recompute() == 300
    assert _stored_bots() == live_bots
    assert _stored_pairs() == live_pairs


def _stored_bots() -> dict[int, tuple[int, float, float, float]]:
    rows = CollusionBotTotal.objects.values_list("bot_id", "n", "total", "squares", "raw")
    return {bot: (n, total, squares, raw) for bot, n, total, squares, raw in rows}


def _stored_pairs() -> dict[tuple[int, int], tuple[int, list[float]]]:
    rows = CollusionPairTotal.objects.values_list("first_id", "second_id", "tables", "sums")
    return {(first, second): (tables, sums) for first, second, tables, sums in rows}


def test_a_ring_of_ten_partners_lifting_one_bot_is_flagged_where_no_pair_is(
    make_bot, owner, oh_hell, settings
) -> None:
    # The sizes of a ring seen lifting a mid-field bot many places: 49 bots, the beneficiary's
    # ten partners sharing about 6 to 22 tables with it each, too few for the pair test.
    settings.COLLUSION_MIN_TABLES = 20
    settings.COLLUSION_FALSE_DISCOVERY_RATE = 0.01
    bots = [make_bot(owner, status="active") for _ in range(49)]
    ring = Planted(beneficiary=24, partner=30, ring=tuple(range(31, 40)), seated=0.9)
    store_season(oh_hell, bots, tables=1500, seed=1, planted=ring)
    assert collusion_scan(variant_id=oh_hell.pk)
    scan = CollusionScan.objects.get(variant=oh_hell)
    assert scan.bots_tested == 49
    assert not CollusionFlag.objects.filter(scan=scan).exists()
    flag = CollusionBotFlag.objects.get(scan=scan)
    assert flag.bot == bots[24]
    assert flag.partners >= 10 and flag.adjusted_p <= 0.01


def test_a_variant_without_rated_matches_gets_no_scan(bots, oh_hell) -> None:
    assert not collusion_scan(variant_id=oh_hell.pk)
    assert collusion_scan_all() == {"scanned": 0, "current": 0}
    assert not CollusionScan.objects.exists()


def test_the_scan_runs_on_the_bulk_queue_on_a_schedule(settings) -> None:
    route = route_task(Task.SCAN_COLLUSION.value, (), {}, {})
    assert route == {"queue": f"{settings.CELERY_TASK_DEFAULT_QUEUE}.bulk"}
    entry = settings.CELERY_BEAT_SCHEDULE["scan-collusion"]
    assert entry["task"] == Task.SCAN_COLLUSION.value
    assert entry["schedule"] == float(settings.COLLUSION_SECONDS)


def _uncounted(variant: Variant, bots: list[Bot], tables: int) -> None:
    """Matches of a scrimmage and of an unrated tournament, recorded and passed by the rating
    writer: marked rated, with no place in the rating sequence."""
    scrimmage = Scrimmage.objects.create(
        owner=bots[0].owner, bot=bots[0], variant=variant, match_count=tables
    )
    unrated = Tournament.objects.create(
        name="Friendly",
        organiser=bots[0].owner,
        variant=variant,
        format="round_robin",
        status=TournamentStatus.RUNNING,
        table_size=4,
        rated=False,
    )
    for i in range(tables):
        seated = [bots[(i + j) % len(bots)] for j in range(4)]
        play_and_record(
            match_create(
                variant_id=variant.pk,
                bot_ids=[b.pk for b in seated],
                seed=i,
                time_limit_ms=500,
                scrimmage=scrimmage,
                round=i,
            )
        )
        play_and_record(queue_match(unrated, seated, round_=i))
    assert ratings_apply_pending() == 2 * tables
    marked = Match.objects.filter(rated=True, rating_sequence__isnull=True)
    assert marked.count() == 2 * tables


def test_only_matches_that_changed_the_ratings_enter_the_scan(bots, oh_hell, settings) -> None:
    settings.COLLUSION_MIN_TABLES = 20
    store_season(oh_hell, bots, tables=300, seed=4, planted=Planted(beneficiary=5, partner=1))
    sums = (_stored_bots(), _stored_pairs())
    assert collusion_scan(variant_id=oh_hell.pk)
    first = CollusionScan.objects.get(variant=oh_hell)
    _uncounted(oh_hell, bots, tables=10)
    assert (_stored_bots(), _stored_pairs()) == sums
    assert not collusion_scan(variant_id=oh_hell.pk)  # what it covers is unchanged
    scan = CollusionScan.objects.get(variant=oh_hell)
    assert scan.pk == first.pk and scan.matches == 300


def test_a_variant_with_only_scrimmages_and_unrated_tournaments_gets_no_scan(
    bots, short_variant, settings
) -> None:
    settings.COLLUSION_MIN_TABLES = 1
    _uncounted(short_variant, bots, tables=3)
    assert not collusion_scan(variant_id=short_variant.pk)
    assert collusion_scan_all() == {"scanned": 0, "current": 0}
    assert not CollusionScan.objects.exists()
