"""A bot that refuses the platform's signature leaves the ladders with the reason in words, and a
match in which it refused every request is rated for the others without it; real HTTP bots on
loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User

from engine.scoring import rating_ranks
from tests.support.rating_world import World, assert_live_equals_recompute
from tests.support.signing_bots import Checks, signing_bot
from tests.support.users import client_for, ladder_teams_apart, make_confirmed_user
from tournaments.maths.ratings import RatingParams, rate
from tournaments.models import (
    Bot,
    BotStatus,
    DisabledCause,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingHistory,
    SharedHost,
)
from tournaments.services.bots import bot_verify
from tournaments.services.ladders import ladder_ensure_default, ladders_top_up
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.runs import match_run

REFUSAL = "your bot refused the platform's signature: check its secret"


@pytest.fixture
def old_secret_bot() -> Iterator[str]:
    """A bot that checks every signature, with a secret the platform no longer has."""
    with signing_bot("the-old-secret") as url:
        yield url


@pytest.fixture
def ladder_of_four(oh_hell, make_bot, owner, settings, loopback_allowed):
    """An oh-hell ladder with three active opted-in bots that check no signature."""
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    settings.BOT_HELLO_TIMEOUT_MS = 2000
    ladder = ladder_ensure_default()

    # A ladder seats one bot of an owner, or of an address, at a table: each bot has an owner
    # of its own, and loopback, where every test bot runs, is a shared host.
    SharedHost.objects.get_or_create(address="127.0.0.1")

    def make(*, of: User | None = None, **fields) -> Bot:
        fields.setdefault("status", BotStatus.ACTIVE)
        owner_of = of or make_confirmed_user(f"ladder-owner-{Bot.objects.count()}")
        return make_bot(owner_of, ladder_opt_in=True, **fields)

    return ladder, make


def test_a_failed_verification_takes_the_bot_off_the_ladder_with_the_reason_in_words(
    ladder_of_four, old_secret_bot, other_client, owner
) -> None:
    _ladder, make = ladder_of_four
    for _ in range(3):
        make()
    with signing_bot("secret-live") as good_url:
        bot = make(of=owner, endpoint_url=good_url, secret="secret-live", status=BotStatus.PENDING)
        passed = bot_verify(bot=bot)
    assert passed.ok and passed.warnings == []
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE
    assert ladders_top_up() == 1
    Match.objects.update(status=MatchStatus.CANCELLED)

    # The bot's server is restarted with a wrong secret: it refuses the platform's signature.
    Bot.objects.filter(pk=bot.pk).update(endpoint_url=old_secret_bot)
    bot.refresh_from_db()
    failed = bot_verify(bot=bot)
    bot.refresh_from_db()
    assert (failed.ok, failed.error_kind) == (False, "refused")
    assert (bot.status, bot.disabled_cause) == (BotStatus.DISABLED, DisabledCause.REFUSED)
    assert bot.disabled_reason.startswith(REFUSAL)
    assert ladders_top_up() == 0  # three bots left: no table

    # The API says why, and shows the latest attempt beside the earlier pass.
    mine = client_for(owner).get(f"/api/bots/{bot.pk}/").json()
    assert mine["status"] == "disabled" and mine["disabled_cause"] == "refused"
    assert mine["disabled_reason"].startswith(REFUSAL)
    assert mine["last_check"]["id"] == failed.pk and mine["last_check"]["status"] == "failed"
    assert mine["last_check"]["error_kind"] == "refused"
    assert "the secret is the likely cause" in mine["last_check"]["error_message"]
    assert mine["last_verified_at"] < mine["last_check"]["at"]
    public = other_client.get(f"/api/bots/{bot.pk}/").json()
    assert public["disabled_reason"] == "refused the platform's signature"
    assert public["last_check"]["error_message"] is None and public["security_warnings"] is None

    # So do the bot's page and "My bots", in words.
    from tests.support.pages import signed_in

    page = signed_in(owner).get(f"/bots/{bot.pk}/").content.decode()
    assert "refused the platform&#x27;s signature: check its secret" in page
    assert 'data-outcome="failed"' in page
    listing = signed_in(owner).get("/my/bots/").content.decode()
    assert "refused the platform&#x27;s signature: check its secret" in listing
    assert "failed: refused" in listing and "last passed" in listing

    # Fixed: the next verification puts it back on the ladder.
    with signing_bot(bot.secret) as fixed_url:
        Bot.objects.filter(pk=bot.pk).update(endpoint_url=fixed_url)
        bot.refresh_from_db()
        assert bot_verify(bot=bot).ok
    bot.refresh_from_db()
    assert (bot.status, bot.disabled_cause, bot.disabled_reason) == (BotStatus.ACTIVE, "", "")
    assert ladders_top_up() == 1


def test_a_bot_refusing_every_request_of_a_match_leaves_the_ladder_and_is_left_out_of_its_rating(
    ladder_of_four, old_secret_bot, playing_bots
) -> None:
    ladder, make = ladder_of_four
    others = playing_bots(3)
    ladder_teams_apart(others)
    Bot.objects.filter(pk__in=[b.pk for b in others]).update(ladder_opt_in=True)
    refusing = make(endpoint_url=old_secret_bot)
    assert ladders_top_up() == 1
    match = Match.objects.get(ladder=ladder)

    assert match_run(match_id=match.pk) == "recorded"

    seats = {s.bot_id: s for s in MatchSeat.objects.filter(match=match)}
    assert seats[refusing.pk].refused_every_request and seats[refusing.pk].disqualified
    assert not any(seats[b.pk].refused_every_request for b in others)
    assert {f.kind for f in seats[refusing.pk].fault_records.all()} == {"refused"}
    refusing.refresh_from_db()
    assert (refusing.status, refusing.disabled_cause) == (BotStatus.DISABLED, "refused")
    assert refusing.disabled_reason.startswith(REFUSAL)
    assert f"match {match.pk}" in refusing.disabled_reason
    assert ladders_top_up() == 0  # the three others make no table of four

    assert ratings_apply_pending() == 1
    # Rated for the other three among themselves, as if the refusing seat had not sat.
    rated = sorted(others, key=lambda b: seats[b.pk].seat)
    params = RatingParams.from_dict(ladder.variant.rating_params)
    scores = [seats[b.pk].score for b in rated]
    assert None not in scores  # the match was recorded
    ranks = rating_ranks(
        [score or 0 for score in scores], [seats[b.pk].disqualified for b in rated]
    )
    expected = rate(params, [(params.mu, params.sigma)] * 3, ranks)
    history = {h.bot_id: h for h in RatingHistory.objects.filter(match=match)}
    assert set(history) == {b.pk for b in others}
    for bot, (mu, sigma) in zip(rated, expected, strict=True):
        assert (history[bot.pk].mu_after, history[bot.pk].sigma_after) == (mu, sigma)
    assert not Rating.objects.filter(bot=refusing).exists()
    assert set(Rating.objects.values_list("matches", flat=True)) == {1}
    assert_live_equals_recompute()


def test_a_bot_that_checks_no_signature_passes_verification_with_warnings_shown_to_its_owner(
    make_bot, owner, other_client, loopback_allowed
) -> None:
    with signing_bot("unused", Checks(signature=False, replay=False)) as url:
        bot = make_bot(owner, endpoint_url=url)
        check = bot_verify(bot=bot)
    bot.refresh_from_db()
    assert check.ok and bot.status == BotStatus.ACTIVE
    assert set(check.warnings) == {"unsigned", "forged", "replayed", "stale"}
    mine = client_for(owner).get(f"/api/bots/{bot.pk}/").json()
    assert len(mine["security_warnings"]) == 4
    assert any("it accepted a request with no signature" in w for w in mine["security_warnings"])
    assert mine["last_check"]["warnings"] == mine["security_warnings"]
    assert other_client.get(f"/api/bots/{bot.pk}/").json()["security_warnings"] is None
    from tests.support.pages import signed_in

    page = signed_in(owner).get(f"/my/bots/{bot.pk}/").content.decode()
    assert 'id="security-warnings"' in page and "it does not refuse replays" in page


def test_rotating_the_secret_takes_an_active_bot_off_the_ladder_until_it_verifies_again(
    make_bot, owner
) -> None:
    bot = make_bot(owner, status=BotStatus.ACTIVE, ladder_opt_in=True)
    response = client_for(owner).post(f"/api/bots/{bot.pk}/rotate-secret/")
    assert response.status_code == 200 and response.json()["status"] == "pending"
    bot.refresh_from_db()
    assert bot.status == BotStatus.PENDING and bot.secret == response.json()["secret"]


@pytest.fixture
def world(organiser, oh_hell) -> World:
    return World.create(organiser=organiser, variant=oh_hell)


def test_a_match_left_with_one_bot_that_did_not_refuse_changes_no_rating(
    world, make_bot, owner
) -> None:
    bots = [make_bot(owner) for _ in range(2)]
    match = world.single(bots)
    world.finish(match, minute=1)
    MatchSeat.objects.filter(match=match, bot=bots[1]).update(
        refused_every_request=True, disqualified=True
    )
    assert ratings_apply_pending() == 1
    match.refresh_from_db()
    assert match.rated and match.rating_sequence is not None
    assert not RatingHistory.objects.exists() and not Rating.objects.exists()
    # The next match is rated as usual, in a recompute too.
    world.finish(world.single(bots), minute=2)
    assert ratings_apply_pending() == 1
    assert RatingHistory.objects.count() == 2
    assert_live_equals_recompute()


def test_a_duplicate_group_leaves_out_a_bot_that_refused_every_request_of_a_rotation(
    world, make_bot, owner
) -> None:
    bots = [make_bot(owner) for _ in range(3)]
    members = world.group(bots, "g")
    for minute, match in enumerate(members):
        world.finish(match, minute=minute, seed=3)
    MatchSeat.objects.filter(match=members[1], bot=bots[2]).update(refused_every_request=True)
    assert ratings_apply_pending() == 3
    assert set(RatingHistory.objects.values_list("bot_id", flat=True)) == {bots[0].pk, bots[1].pk}
    assert_live_equals_recompute()


def test_a_bot_disabled_for_refusing_comes_back_only_when_its_owner_verifies_it(
    make_bot, owner, loopback_allowed, django_capture_on_commit_callbacks
) -> None:
    from django.test import override_settings

    from tests.support.pages import signed_in
    from tournaments.services.bots import bots_check_health, bots_refused_signature

    # A bot that answers hello with the right secret, and refused every request of a match.
    with signing_bot("secret-live") as url:
        bot = make_bot(owner, endpoint_url=url, secret="secret-live", status=BotStatus.ACTIVE)
        assert bots_refused_signature(bot_ids=[bot.pk], match_id=1) == 1
        # The periodic health check leaves it disabled, passing hello or not.
        assert bots_check_health()["checked"] == 0
        bot.refresh_from_db()
        assert (bot.status, bot.disabled_cause) == (BotStatus.DISABLED, DisabledCause.REFUSED)
        page = signed_in(owner).get(f"/my/bots/{bot.pk}/").content.decode()
        assert 'id="refusal-note"' in page and "comes back only when you verify it" in page
        # Its owner asks: the verification puts it back.
        with (
            override_settings(CELERY_TASK_ALWAYS_EAGER=True),
            django_capture_on_commit_callbacks(execute=True),
        ):
            response = client_for(owner).post(f"/api/bots/{bot.pk}/verify/")
        assert response.status_code == 202
    bot.refresh_from_db()
    assert (bot.status, bot.disabled_cause) == (BotStatus.ACTIVE, DisabledCause.NONE)


def test_a_second_match_refused_within_the_grace_ranks_the_bot_last(
    ladder_of_four, old_secret_bot, playing_bots, settings
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from tournaments.selectors.rated_matches import match_standing, seats_by_match

    settings.REFUSAL_GRACE_DAYS = 30
    ladder, make = ladder_of_four
    others = playing_bots(3)
    ladder_teams_apart(others)
    Bot.objects.filter(pk__in=[b.pk for b in others]).update(ladder_opt_in=True)
    refusing = make(endpoint_url=old_secret_bot)

    def play() -> tuple[Match, MatchSeat]:
        # Back on the ladder, as after its owner verified it: it answers hello but refuses
        # every request of a match, e.g. after seeing a bad first hand.
        Bot.objects.filter(pk=refusing.pk).update(
            status=BotStatus.ACTIVE, disabled_cause="", disabled_reason=""
        )
        assert ladders_top_up() == 1
        match = Match.objects.get(ladder=ladder, status=MatchStatus.QUEUED)
        assert match_run(match_id=match.pk) == "recorded"
        return match, MatchSeat.objects.get(match=match, bot=refusing)

    first, seat = play()
    assert seat.refused_every_request and not seat.refusal_counted
    second, seat = play()
    assert seat.refused_every_request and seat.refusal_counted

    assert ratings_apply_pending() == 2
    assert not RatingHistory.objects.filter(match=first, bot=refusing).exists()
    # The second is rated with the refusing bot in it, last.
    standing = match_standing(seats_by_match([second.pk])[second.pk])
    place = dict(zip(standing.bots, standing.ranks, strict=True))
    assert set(place) == {refusing.pk, *(b.pk for b in others)}
    assert place[refusing.pk] > max(place[b.pk] for b in others)
    lost = RatingHistory.objects.get(match=second, bot=refusing)
    assert lost.mu_after < lost.mu_before
    assert Rating.objects.get(bot=refusing).matches == 1
    assert_live_equals_recompute()

    # Past the grace, a refusal is forgiven again.
    Match.objects.filter(pk__in=[first.pk, second.pk]).update(
        finished_at=timezone.now() - timedelta(days=31)
    )
    _third, seat = play()
    assert seat.refused_every_request and not seat.refusal_counted
