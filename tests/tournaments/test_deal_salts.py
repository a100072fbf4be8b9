"""Deals never come round again across competitions, whatever seeds organisers choose: a match's
deal is keyed with its tournament's or ladder's deal salt (tournaments/seeds.py), while the
rotations of a duplicate group still share theirs and a tournament's seed still gives the same
schedule."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from engine import Game
from tests.support.migrating import historical, migrate, migrate_to_latest
from tests.support.starting import start_and_generate
from tests.support.users import client_for
from tournaments.models import Bot, BotStatus, Match, Tournament, TournamentFormat, Variant
from tournaments.services.tournaments import tournament_create

BEFORE = ("tournaments", "0019_voided_deal_superseded")
AFTER = ("tournaments", "0020_competition_deal_salts")
# More than two of the batches that migration fills its rows in.
MANY_TOURNAMENTS = 2500


def same_seed_tournament(
    organiser: User, variant: Variant, bots: list[Bot], fmt: str
) -> Tournament:
    """A tournament of ``bots`` in ``fmt`` with the seed every tournament here is given."""
    return tournament_create(
        organiser=organiser,
        name=f"{fmt} with seed 2024",
        variant=variant,
        format=fmt,
        bot_ids=[b.pk for b in bots],
        table_size=3,
        rounds=2,
        seed=2024,
    )


def matches_of(tournament: Tournament) -> list[Match]:
    return list(tournament.matches.order_by("pk").prefetch_related("seats"))


def seating(match: Match) -> tuple[int, ...]:
    return tuple(seat.bot_id for seat in sorted(match.seats.all(), key=lambda s: s.seat))


def first_hands(match: Match) -> list[frozenset[str]]:
    """Every seat's hand in the match's first deal."""
    game = Game(match.variant.to_engine(), match.seats.count(), match.seed)
    return [frozenset(game.hand(seat)) for seat in range(match.seats.count())]


@pytest.fixture
def six_bots(organiser: User, make_bot: Callable[..., Bot]) -> list[Bot]:
    return [make_bot(organiser, status=BotStatus.ACTIVE) for _ in range(6)]


@pytest.mark.parametrize("fmt", TournamentFormat.values)
def test_two_tournaments_given_the_same_seed_deal_different_cards(
    fmt, organiser, oh_hell, six_bots
) -> None:
    first, second = (
        start_and_generate(same_seed_tournament(organiser, oh_hell, six_bots, fmt))
        for _ in range(2)
    )
    one, other = matches_of(first), matches_of(second)
    assert one and len(one) == len(other)
    # The seed still gives the same schedule: the same tables, seated the same way.
    assert [(m.round, m.duplicate_group, seating(m)) for m in one] == [
        (m.round, m.duplicate_group, seating(m)) for m in other
    ]
    assert not {m.seed for m in one} & {m.seed for m in other}
    for mine, theirs in zip(one, other, strict=True):
        assert first_hands(mine) != first_hands(theirs)


def test_the_rotations_of_a_duplicate_group_share_a_deal_no_other_tournament_has(
    organiser, oh_hell, six_bots
) -> None:
    first, second = (
        start_and_generate(
            same_seed_tournament(organiser, oh_hell, six_bots, TournamentFormat.DUPLICATE)
        )
        for _ in range(2)
    )
    deals: list[set[int]] = []
    for tournament in (first, second):
        groups: dict[str, list[Match]] = {}
        for match in matches_of(tournament):
            groups.setdefault(match.duplicate_group, []).append(match)
        assert len(groups) > 1 and all(len(rotations) == 3 for rotations in groups.values())
        for rotations in groups.values():
            assert len({m.seed for m in rotations}) == 1
            # Each bot holds, in its rotation, the hand another bot held in the first.
            hands = [dict(zip(seating(m), first_hands(m), strict=True)) for m in rotations]
            assert {frozenset(h.values()) for h in hands} == {frozenset(hands[0].values())}
        seeds = {rotations[0].seed for rotations in groups.values()}
        assert len(seeds) == len(groups)  # every group its own deal
        deals.append(seeds)
    assert not deals[0] & deals[1]


def test_every_competition_has_a_salt_of_its_own_that_is_never_shown(
    organiser, oh_hell, six_bots
) -> None:
    tournament = start_and_generate(
        same_seed_tournament(organiser, oh_hell, six_bots, TournamentFormat.ROUND_ROBIN)
    )
    again = same_seed_tournament(organiser, oh_hell, six_bots, TournamentFormat.ROUND_ROBIN)
    assert len(tournament.deal_salt) == 32 and tournament.deal_salt != again.deal_salt
    client = client_for(organiser)
    base = f"/api/tournaments/{tournament.pk}/"
    for path in (base, "/api/tournaments/", base + "fixtures/", f"/tournaments/{tournament.pk}/"):
        response = client.get(path)
        assert response.status_code == 200 and tournament.deal_salt not in response.content.decode()
    copied = Tournament.objects.get(pk=again.pk)
    copied.pk = None
    copied.deal_salt = tournament.deal_salt
    with pytest.raises(IntegrityError), transaction.atomic():
        copied.save()  # a copied row cannot bring another competition's deals with it


@pytest.mark.django_db(transaction=True)
def test_existing_competitions_each_get_a_salt_and_their_matches_keep_their_deals(presets) -> None:
    from tests.support.users import make_user

    migrate(BEFORE)
    try:
        organiser = make_user("organiser-before-salts")
        variant = historical(BEFORE, "Variant").objects.get(name="oh-hell")
        old_tournament = historical(BEFORE, "Tournament")
        made = old_tournament.objects.bulk_create(
            old_tournament(
                name=f"cup {n}",
                organiser_id=organiser.pk,
                variant_id=variant.pk,
                format=TournamentFormat.ROUND_ROBIN,
                seed=2024,
            )
            for n in range(MANY_TOURNAMENTS)
        )
        old_match = historical(BEFORE, "Match")
        match = old_match.objects.create(tournament_id=made[0].pk, variant_id=variant.pk, seed=77)
        historical(BEFORE, "Ladder").objects.get_or_create(variant_id=variant.pk)
        with CaptureQueriesContext(connection) as queries:
            migrate(AFTER)
        table = old_tournament._meta.db_table
        updates = [q for q in queries if q["sql"].startswith(f'UPDATE "{table}"')]
        # Filled a batch at a time, not a row at a time, while the table is locked.
        assert 0 < len(updates) < MANY_TOURNAMENTS // 100
        salts = list(historical(AFTER, "Tournament").objects.values_list("deal_salt", flat=True))
        assert len(salts) >= MANY_TOURNAMENTS
        salts += historical(AFTER, "Ladder").objects.values_list("deal_salt", flat=True)
        assert len(salts) > MANY_TOURNAMENTS and len(set(salts)) == len(salts)
        assert all(len(salt) == 32 and int(salt, 16) >= 0 for salt in salts)
        assert historical(AFTER, "Match").objects.get(pk=match.pk).seed == 77
    finally:
        migrate_to_latest()
