"""The admin: every model listed, searchable and filterable, with the bot actions."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from tournaments import models
from tournaments.models import Bot, BotStatus, Match, MatchSeat, Rating, SeatFault, Tournament

ALL_MODELS = [
    models.Bot,
    models.BotHealthCheck,
    models.Variant,
    models.Tournament,
    models.TournamentEntry,
    models.Match,
    models.MatchSeat,
    models.SeatFault,
    models.Replay,
    models.Rating,
    models.RatingHistory,
]


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def populated(make_bot, owner, organiser, oh_hell):
    """A few rows of every model, so list pages have joins to make."""
    tournament = Tournament.objects.create(
        name="cup", organiser=organiser, variant=oh_hell, format="swiss"
    )
    populated_again(tournament, make_bot, owner)
    return tournament


def populated_again(tournament, make_bot, owner):
    oh_hell = tournament.variant
    for i in range(3):
        bot = make_bot(owner)
        tournament.entries.create(bot=bot)
        match = Match.objects.create(variant=oh_hell, tournament=tournament, round=i)
        seat = MatchSeat.objects.create(match=match, seat=0, bot=bot, score=10, rank=1)
        SeatFault.objects.create(seat=seat, kind="timeout", sample="late")
        models.Replay.objects.create(match=match, data={})
        Rating.objects.create(bot=bot, variant=oh_hell)
        bot.health_checks.create(ok=True)
        now = timezone.now()
        Match.objects.filter(pk=match.pk).update(
            status="finished", finished_at=now, rated=True, rated_at=now, rating_sequence=match.pk
        )
        models.RatingHistory.objects.create(
            bot=bot,
            variant=oh_hell,
            match=match,
            sequence=match.pk,
            mu_before=25,
            sigma_before=8,
            mu_after=26,
            sigma_after=7,
        )


def test_every_model_is_registered():
    assert all(model in admin.site._registry for model in ALL_MODELS)


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_every_list_page_renders_with_search_and_filters(admin_client, populated, model):
    url = reverse(f"admin:tournaments_{model._meta.model_name}_changelist")
    assert admin_client.get(url).status_code == 200
    assert admin_client.get(url, {"q": "bot"}).status_code == 200
    model_admin = admin.site._registry[model]
    assert model_admin.list_display and model_admin.search_fields and model_admin.list_filter


@pytest.mark.parametrize("model", [models.Bot, models.MatchSeat, models.SeatFault, models.Rating])
def test_list_pages_make_the_same_queries_for_more_rows(
    admin_client, populated, make_bot, owner, model
):
    url = reverse(f"admin:tournaments_{model._meta.model_name}_changelist")
    with CaptureQueriesContext(connection) as before:
        admin_client.get(url)
    populated_again(populated, make_bot, owner)
    with CaptureQueriesContext(connection) as after:
        admin_client.get(url)
    assert len(after) == len(before)


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_every_change_page_renders_without_the_secret(admin_client, populated, model):
    row = model.objects.first()
    url = reverse(f"admin:tournaments_{model._meta.model_name}_change", args=[row.pk])
    response = admin_client.get(url)
    assert response.status_code == 200
    for bot in Bot.objects.all():
        assert bot.secret not in response.content.decode()


def test_staff_disable_and_enable_bots_from_the_list(admin_client, make_bot, owner):
    bots = [make_bot(owner, status=BotStatus.ACTIVE) for _ in range(2)]
    url = reverse("admin:tournaments_bot_changelist")
    ids = [b.pk for b in bots]
    admin_client.post(url, {"action": "disable_bots", "_selected_action": ids})
    assert set(Bot.objects.values_list("status", "disabled_cause")) == {("disabled", "admin")}
    assert all("staff" in b.disabled_reason for b in Bot.objects.all())
    admin_client.post(url, {"action": "enable_bots", "_selected_action": ids})
    assert set(Bot.objects.values_list("status", "disabled_cause")) == {("pending", "")}


def test_staff_verify_bots_from_the_list(
    admin_client, make_bot, owner, scripted_bot_server, loopback_allowed
):
    bot = make_bot(owner, endpoint_url=f"{scripted_bot_server}/ok")
    url = reverse("admin:tournaments_bot_changelist")
    response = admin_client.post(
        url, {"action": "verify_bots", "_selected_action": [bot.pk]}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [f"{bot.name}: passed"]
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE and bot.health_checks.count() == 1


def test_a_match_shows_its_duration(admin_client, oh_hell):
    now = timezone.now()
    match = Match.objects.create(
        variant=oh_hell,
        status="finished",
        started_at=now - timezone.timedelta(seconds=3),
        finished_at=now,
    )
    assert admin.site._registry[Match].duration(match) == "3.0 s"


def test_non_staff_cannot_reach_the_admin(client, owner):
    client.force_login(owner)
    response = client.get(reverse("admin:tournaments_bot_changelist"))
    assert response.status_code == 302
