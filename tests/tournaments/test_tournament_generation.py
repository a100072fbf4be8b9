"""Starting big tournaments never stalls the workers or the web: the start counts the matches
instead of making them, a scheduled start skips a tournament another run holds, the matches are
made in batches a second delivery carries on, and a tournament sends only a window of its
matches, so a cancelled one leaves few messages in front of other tournaments' matches."""

from __future__ import annotations

import importlib
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from tests.support.api import draft_round_robin, error_of
from tests.support.workers import broker_queue, needs_postgres_and_redis, queue_length, wait_for
from tournaments import formats
from tournaments.leases import claim_token
from tournaments.models import Bot, BotStatus, Match, MatchStatus, Tournament, TournamentStatus
from tournaments.services import tournaments as tournaments_service
from tournaments.services.matches import match_claim, matches_create
from tournaments.services.tournaments import (
    MAX_ENTRIES,
    MAX_FIXTURES,
    tournament_advance,
    tournament_cancel,
    tournament_create,
    tournament_generate,
    tournament_start,
    tournament_start_due,
)


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """Fail with ``what`` if the block runs longer than ``seconds`` (interrupts Python code)."""

    def expired(signum: int, frame: object) -> None:
        raise AssertionError(f"{what} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _entered_bots(owner, count: int) -> list[Bot]:
    return Bot.objects.bulk_create(
        Bot(
            owner=owner,
            name=f"entrant-{i}",
            endpoint_url=f"https://entrant{i}.example.org/play",
            secret=f"secret-{i}",
            status=BotStatus.ACTIVE,
            accept_invitations=True,
        )
        for i in range(count)
    )


def test_the_largest_tournament_allowed_starts_at_once_and_one_larger_is_refused(
    organiser, organiser_client, oh_hell, owner
) -> None:
    bots = _entered_bots(owner, MAX_ENTRIES)
    rounds = MAX_FIXTURES * 4 // MAX_ENTRIES  # every bot plays `rounds` matches at tables of 4
    largest = draft_round_robin(organiser, oh_hell, bots, name="largest", rounds=rounds)
    larger = draft_round_robin(organiser, oh_hell, bots, name="larger", rounds=rounds + 1)
    with deadline(20, "starting the largest tournament"):
        response = organiser_client.post(f"/api/tournaments/{largest.pk}/start/")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == TournamentStatus.STARTING
    with deadline(20, "refusing a larger one"):
        refused = organiser_client.post(f"/api/tournaments/{larger.pk}/start/")
    assert refused.status_code == 400
    error = error_of(refused)
    assert "rounds" in error["detail"], error
    assert error["message"].startswith(f"rounds: {MAX_FIXTURES + MAX_ENTRIES // 4} matches")
    assert not Match.objects.exists()  # the worker makes them, not the request
    larger.refresh_from_db()
    assert larger.status == TournamentStatus.DRAFT


def _scheduled(organiser, variant, bots, name: str) -> Tournament:
    return tournament_create(
        organiser=organiser,
        name=name,
        variant=variant,
        format="round_robin",
        bot_ids=[b.pk for b in bots],
        start_at=timezone.now() + timedelta(seconds=1),
    )


@needs_postgres_and_redis
@pytest.mark.django_db(transaction=True)
def test_a_scheduled_start_skips_a_tournament_another_run_holds_instead_of_waiting(
    organiser, oh_hell, owner
) -> None:
    bots = _entered_bots(owner, 4)
    held = _scheduled(organiser, oh_hell, bots, "held")
    free = _scheduled(organiser, oh_hell, bots, "free")
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                Tournament.objects.select_for_update().get(pk=held.pk)
                locked.set()
                release.wait(120)
        finally:
            connection.close()

    started: list[int] = []

    def start_due() -> None:
        try:
            started.append(tournament_start_due(now=timezone.now() + timedelta(seconds=5)))
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(30)
        runner = threading.Thread(target=start_due)
        runner.start()
        runner.join(timeout=30)
        answered = not runner.is_alive()
    finally:
        release.set()
        holder.join(timeout=60)
    runner.join(timeout=60)
    assert answered, "the start of due tournaments waited for a row another run holds"
    assert started == [1]
    held.refresh_from_db()
    free.refresh_from_db()
    assert (held.status, free.status) == (TournamentStatus.SCHEDULED, TournamentStatus.STARTING)
    # The next run starts the one that was held.
    assert tournament_start_due(now=timezone.now() + timedelta(seconds=5)) == 1


@pytest.mark.slow
@needs_postgres_and_redis
@pytest.mark.django_db(transaction=True)
def test_a_cancelled_tournament_leaves_only_its_window_in_front_of_another_tournament(
    organiser, playing_bots, short_variant, start_worker, settings
) -> None:
    settings.TOURNAMENT_MATCHES_IN_FLIGHT = 5
    bots = playing_bots(8)
    big = draft_round_robin(
        organiser, short_variant, bots, name="big", table_size=4, rounds=200, time_limit_ms=500
    )
    tournament_start(tournament=big)
    assert tournament_generate(tournament_id=big.pk) == "running"
    assert big.matches.count() == 400
    tournament_cancel(tournament=big)
    small = draft_round_robin(
        organiser, short_variant, bots[:4], name="small", table_size=4, time_limit_ms=500
    )
    tournament_start(tournament=small)
    assert tournament_generate(tournament_id=small.pk) == "running"
    # In front of the small tournament's one match: the big one's window, not its 400.
    assert queue_length(broker_queue("matches")) == 5 + 1
    start_worker("solo", concurrency=1)
    wait_for(
        lambda: small.matches.filter(status=MatchStatus.FINISHED).count() == 1,
        timeout=120,
        what="the small tournament's match to be played",
    )
    assert big.matches.filter(status=MatchStatus.CANCELLED).count() == 400


def test_a_second_delivery_carries_on_where_a_stopped_worker_left_off(
    organiser, oh_hell, owner, monkeypatch
) -> None:
    monkeypatch.setattr(tournaments_service, "GENERATE_BATCH", 7)
    bots = _entered_bots(owner, 12)
    cup = draft_round_robin(organiser, oh_hell, bots, name="cup", rounds=5)
    tournament_start(tournament=cup)
    fixtures = formats.round_robin(sorted(b.pk for b in bots), 4, 5, cup.seed)
    # A worker stopped after its first batch: those matches exist, the rest do not.
    matches_create(fixtures=fixtures[:7], competition=cup, held=True)
    assert tournament_generate(tournament_id=cup.pk) == "running"
    made = list(cup.matches.order_by("pk").prefetch_related("seats"))
    assert [tuple(s.bot_id for s in sorted(m.seats.all(), key=lambda s: s.seat)) for m in made] == [
        f.seats for f in fixtures
    ]
    assert tournament_generate(tournament_id=cup.pk) == "idle"
    assert cup.matches.count() == len(fixtures) == 15


def test_a_tournament_sends_a_window_of_its_matches_and_more_as_they_end(
    organiser, oh_hell, owner, settings
) -> None:
    settings.TOURNAMENT_MATCHES_IN_FLIGHT = 4
    bots = _entered_bots(owner, 8)
    cup = draft_round_robin(organiser, oh_hell, bots, name="cup", rounds=6)
    tournament_start(tournament=cup)
    assert tournament_generate(tournament_id=cup.pk) == "running"
    assert cup.matches.count() == 12
    sent = cup.matches.filter(unsent=False).order_by("pk")
    assert (
        list(sent.values_list("pk", flat=True))
        == sorted(cup.matches.values_list("pk", flat=True))[:4]
    )
    held = cup.matches.filter(unsent=True).earliest("pk")
    assert not match_claim(match_id=held.pk, token=claim_token())  # its message is still to come
    first = sent.earliest("pk")
    assert match_claim(match_id=first.pk, token=claim_token())
    Match.objects.filter(pk=first.pk).update(
        status=MatchStatus.FINISHED, finished_at=timezone.now()
    )
    assert tournament_advance(tournament_id=cup.pk) == "sent"
    assert cup.matches.filter(unsent=False).count() == 5
    assert tournament_advance(tournament_id=cup.pk) == "running"  # the window is full again
    tournament_cancel(tournament=cup)
    assert cup.matches.filter(status=MatchStatus.QUEUED).count() == 0
    assert cup.matches.filter(status=MatchStatus.CANCELLED).count() == 11


@needs_postgres_and_redis
@pytest.mark.django_db(transaction=True)
def test_the_largest_round_robin_plays_its_first_match_while_later_fixtures_are_being_made(
    organiser, organiser_client, oh_hell, owner, monkeypatch
) -> None:
    # Count the rounds grouped so far (the costly part of making a round robin's fixtures).
    grouping = importlib.import_module("tournaments.formats.round_robin")
    grouped: list[int] = []
    real = grouping._best_grouping

    def counting(*args: Any, **kwargs: Any) -> Any:
        grouped.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(grouping, "_best_grouping", counting)
    bots = _entered_bots(owner, 200)
    cup = draft_round_robin(organiser, oh_hell, bots, name="largest", rounds=1000)
    assert organiser_client.post(f"/api/tournaments/{cup.pk}/start/").status_code == 202
    outcome: list[str] = []

    def generate() -> None:
        try:
            outcome.append(tournament_generate(tournament_id=cup.pk))
        finally:
            connection.close()

    maker = threading.Thread(target=generate)
    maker.start()
    try:
        wait_for(lambda: cup.matches.filter(unsent=False).exists(), 300, "a first match sent")
        first = cup.matches.filter(unsent=False).earliest("pk")
        assert match_claim(match_id=first.pk, token=claim_token())
        assert len(grouped) < 100  # of its 1,000 rounds
        # Claimed, while the tournament is still starting and most fixtures are still to come.
        progress = organiser_client.get(f"/api/tournaments/{cup.pk}/progress/").json()
        assert Tournament.objects.get(pk=cup.pk).status == TournamentStatus.STARTING
        assert progress["running"] == 1 and progress["total"] == 50_000
        assert progress["to_make"] > 0 and cup.matches.count() < 50_000
        assert progress["queued"] + progress["running"] + progress["to_make"] == 50_000
    finally:
        tournament_cancel(tournament=cup)  # the maker stops at its next batch
        maker.join(timeout=300)
    assert outcome == ["idle"]
    assert cup.matches.count() < 50_000
