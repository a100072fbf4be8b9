"""The stored collusion scans: read from the rated matches as the batch ranks read them,
flagged pairs stored with their evidence, replaced whole, kept while nothing changed."""

from __future__ import annotations

import pytest

from config.celery_app import route_task
from tests.support.collusion import Planted, store_season
from tests.support.world import play_and_record, queue_match
from tournaments.dispatch import Task
from tournaments.models import (
    Bot,
    CollusionFlag,
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
    assert scan.pairs_tested == 28
    assert not CollusionFlag.objects.filter(scan=scan).exists()


def test_a_scan_is_kept_while_nothing_changed_and_replaced_whole_when_it_did(
    bots, oh_hell, settings
) -> None:
    settings.COLLUSION_MIN_TABLES = 20
    store_season(oh_hell, bots, tables=700, seed=4, planted=Planted(beneficiary=5, partner=1))
    assert collusion_scan_all() == {"scanned": 1, "current": 0}
    first = CollusionScan.objects.get(variant=oh_hell)
    assert collusion_scan_all() == {"scanned": 0, "current": 1}
    assert CollusionScan.objects.get(variant=oh_hell).pk == first.pk
    # Reading fewer matches changes the scan: the old one and its flags go.
    settings.COLLUSION_MAX_MATCHES = 100
    assert collusion_scan(variant_id=oh_hell.pk)
    scan = CollusionScan.objects.get(variant=oh_hell)
    assert scan.pk != first.pk and scan.matches == 100
    assert not CollusionFlag.objects.filter(scan_id=first.pk).exists()
    # Only the latest rated matches are read, and unrated ones never.
    Match.objects.filter(rating_sequence__gt=650).update(
        rated=False, rated_at=None, rating_sequence=None
    )
    assert collusion_scan(variant_id=oh_hell.pk)
    assert CollusionScan.objects.get(variant=oh_hell).matches == 100


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
    settings.COLLUSION_MAX_MATCHES = 100
    store_season(oh_hell, bots, tables=300, seed=4, planted=Planted(beneficiary=5, partner=1))
    assert collusion_scan(variant_id=oh_hell.pk)
    first = CollusionScan.objects.get(variant=oh_hell)
    # Newer than every rated match, they would be the first read if they were read at all.
    _uncounted(oh_hell, bots, tables=10)
    assert not collusion_scan(variant_id=oh_hell.pk)  # what it reads is unchanged
    scan = CollusionScan.objects.get(variant=oh_hell)
    assert scan.pk == first.pk and scan.matches == 100


def test_a_variant_with_only_scrimmages_and_unrated_tournaments_gets_no_scan(
    bots, short_variant, settings
) -> None:
    settings.COLLUSION_MIN_TABLES = 1
    _uncounted(short_variant, bots, tables=3)
    assert not collusion_scan(variant_id=short_variant.pk)
    assert collusion_scan_all() == {"scanned": 0, "current": 0}
    assert not CollusionScan.objects.exists()
