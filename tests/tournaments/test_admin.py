"""The admin: every model listed, searchable and filterable, with the bot actions."""

from __future__ import annotations

from datetime import timedelta
from typing import TypeVar

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Model
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from tests.support.admin_forms import change_form_data
from tests.support.scripted_bot import ScriptedBot
from tournaments import models
from tournaments.admin import MatchAdmin, RatingRecomputeAdmin, TournamentAdmin
from tournaments.models import (
    Bot,
    BotHealthCheck,
    BotStatus,
    Match,
    MatchSeat,
    Rating,
    SeatFault,
    Tournament,
)
from tournaments.models.competitions import DEALS
from tournaments.services.tournaments import (
    tournament_advance,
    tournament_generate,
    tournament_start,
)

ALL_MODELS = [
    models.Bot,
    models.ConfirmedEmail,
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
    models.RatingRecompute,
    models.SharedHost,
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
    models.SharedHost.objects.create(address="192.0.2.80", note="course bots")
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
        models.RatingRecompute.objects.create(status="finished")
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


ModelAdminT = TypeVar("ModelAdminT", bound=admin.ModelAdmin)


def registered(model: type[Model], kind: type[ModelAdminT]) -> ModelAdminT:
    """The admin the site has registered for ``model``, which must be a ``kind``."""
    model_admin = admin.site.get_model_admin(model)
    assert isinstance(model_admin, kind), model_admin
    return model_admin


def test_every_model_is_registered() -> None:
    assert all(admin.site.is_registered(model) for model in ALL_MODELS)


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_every_list_page_renders_with_search_and_filters(admin_client, populated, model) -> None:
    url = reverse(f"admin:tournaments_{model._meta.model_name}_changelist")
    assert admin_client.get(url).status_code == 200
    assert admin_client.get(url, {"q": "bot"}).status_code == 200
    model_admin = admin.site.get_model_admin(model)
    assert model_admin.list_display and model_admin.search_fields and model_admin.list_filter


@pytest.mark.parametrize(
    "model",
    [
        models.Bot,
        models.MatchSeat,
        models.SeatFault,
        models.Rating,
        models.Tournament,
        models.Match,
        models.RatingHistory,
        models.RatingRecompute,
    ],
)
def test_list_pages_make_the_same_queries_for_more_rows(
    admin_client, populated, make_bot, owner, model
) -> None:
    url = reverse(f"admin:tournaments_{model._meta.model_name}_changelist")
    with CaptureQueriesContext(connection) as before:
        admin_client.get(url)
    populated_again(populated, make_bot, owner)
    with CaptureQueriesContext(connection) as after:
        admin_client.get(url)
    assert len(after) == len(before)


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_every_change_page_renders_without_the_secret(admin_client, populated, model) -> None:
    row = model.objects.first()
    url = reverse(f"admin:tournaments_{model._meta.model_name}_change", args=[row.pk])
    response = admin_client.get(url)
    assert response.status_code == 200
    for bot in Bot.objects.all():
        assert bot.secret not in response.content.decode()


def test_staff_list_a_shared_host_which_records_who_did(admin_client, staff) -> None:
    url = reverse("admin:tournaments_sharedhost_add")
    response = admin_client.post(url, {"address": "::ffff:192.0.2.9", "note": "course server"})
    assert response.status_code == 302
    host = models.SharedHost.objects.get()
    assert (host.address, host.note, host.created_by) == ("192.0.2.9", "course server", staff)


def test_staff_disable_and_enable_bots_from_the_list(admin_client, make_bot, owner) -> None:
    bots = [make_bot(owner, status=BotStatus.ACTIVE) for _ in range(2)]
    url = reverse("admin:tournaments_bot_changelist")
    ids = [b.pk for b in bots]
    admin_client.post(url, {"action": "disable_bots", "_selected_action": ids})
    assert set(Bot.objects.values_list("status", "disabled_cause")) == {("disabled", "admin")}
    assert all("staff" in b.disabled_reason for b in Bot.objects.all())
    admin_client.post(url, {"action": "enable_bots", "_selected_action": ids})
    assert set(Bot.objects.values_list("status", "disabled_cause")) == {("pending", "")}


def test_staff_verify_bots_from_the_list_queues_the_checks(
    admin_client, make_bot, owner, scripted_bot_server, loopback_allowed
) -> None:
    bots = [make_bot(owner, endpoint_url=f"{scripted_bot_server}/ok") for _ in range(25)]
    ScriptedBot.received.clear()
    url = reverse("admin:tournaments_bot_changelist")
    response = admin_client.post(
        url, {"action": "verify_bots", "_selected_action": [b.pk for b in bots]}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        "Queued a hello check of 25 bot(s); the outcomes appear under health checks as workers "
        "call the bots."
    ]
    assert ScriptedBot.received == []  # the request called no bot
    checks = BotHealthCheck.objects.filter(bot__in=bots)
    assert checks.count() == 25 and not checks.exclude(ok__isnull=True).exists()


def test_a_match_shows_its_duration(admin_client, oh_hell) -> None:
    now = timezone.now()
    match = Match.objects.create(
        variant=oh_hell,
        status="finished",
        started_at=now - timedelta(seconds=3),
        finished_at=now,
    )
    assert registered(Match, MatchAdmin).duration(match) == "3.0 s"


def test_non_staff_cannot_reach_the_admin(client, owner) -> None:
    client.force_login(owner)
    response = client.get(reverse("admin:tournaments_bot_changelist"))
    assert response.status_code == 302


@pytest.fixture
def cup(organiser, oh_hell, make_bot, owner):
    from tournaments.services.tournaments import tournament_create

    bots = [make_bot(owner, status=BotStatus.ACTIVE, accept_invitations=True) for _ in range(3)]
    return tournament_create(
        organiser=organiser,
        name="cup",
        variant=oh_hell,
        format="round_robin",
        bot_ids=[b.pk for b in bots],
        table_size=3,
    )


def test_the_tournament_list_shows_progress(admin_client, cup, rf) -> None:
    tournament_admin = registered(Tournament, TournamentAdmin)
    row = tournament_admin.get_queryset(rf.get("/")).get(pk=cup.pk)
    assert tournament_admin.progress(row) == "-"
    assert tournament_admin.entry_count(row) == 3
    admin_client.post(
        reverse("admin:tournaments_tournament_changelist"),
        {"action": "start_tournaments", "_selected_action": [cup.pk]},
    )
    assert tournament_generate(tournament_id=cup.pk) == "running"
    row = tournament_admin.get_queryset(rf.get("/")).get(pk=cup.pk)
    assert tournament_admin.progress(row) == "0/1 (0%)"


def test_staff_start_pause_resume_and_cancel_tournaments_from_the_list(admin_client, cup) -> None:
    url = reverse("admin:tournaments_tournament_changelist")

    def act(action):
        response = admin_client.post(
            url, {"action": action, "_selected_action": [cup.pk]}, follow=True
        )
        cup.refresh_from_db()
        return [str(m) for m in response.context["messages"]]

    assert act("start_tournaments") == ["Started 1 of 1."] and cup.status == "starting"
    assert tournament_generate(tournament_id=cup.pk) == "running"
    assert Match.objects.filter(tournament=cup, status="queued").count() == 1
    assert act("pause_tournaments") == ["Paused 1 of 1."] and cup.status == "paused"
    assert act("resume_tournaments") == ["Resumed 1 of 1."] and cup.status == "running"
    assert act("cancel_tournaments") == ["Cancelled 1 of 1."] and cup.status == "cancelled"
    messages = act("start_tournaments")
    assert cup.status == "cancelled"
    assert messages == ["cup: a cancelled tournament cannot be started"]


def test_staff_retry_failed_matches_and_other_matches_are_left_alone(admin_client, oh_hell) -> None:
    failed = Match.objects.create(variant=oh_hell, status="failed", attempts=3, error="lost")
    finished = Match.objects.create(variant=oh_hell, status="finished", finished_at=timezone.now())
    response = admin_client.post(
        reverse("admin:tournaments_match_changelist"),
        {"action": "retry_failed_matches", "_selected_action": [failed.pk, finished.pk]},
        follow=True,
    )
    messages = [str(m) for m in response.context["messages"]]
    assert "Queued again 1 of 2." in messages
    assert any("only a failed match" in m for m in messages)
    failed.refresh_from_db()
    assert (failed.status, failed.attempts, failed.error) == ("queued", 0, "")
    assert Match.objects.get(pk=finished.pk).status == "finished"


def test_match_seats_are_shown_read_only(admin_client, populated) -> None:
    match = Match.objects.earliest("pk")
    url = reverse("admin:tournaments_match_change", args=[match.pk])
    response = admin_client.get(url)
    assert response.status_code == 200
    assert b'name="seats-0-score"' not in response.content


@pytest.mark.parametrize(
    "model", [models.Rating, models.RatingHistory, models.Replay, models.SeatFault]
)
def test_results_and_ratings_are_read_only(admin_client, populated, model) -> None:
    row = model.objects.first()
    before = model.objects.count()
    change = reverse(f"admin:tournaments_{model._meta.model_name}_change", args=[row.pk])
    delete = reverse(f"admin:tournaments_{model._meta.model_name}_delete", args=[row.pk])
    add = reverse(f"admin:tournaments_{model._meta.model_name}_add")
    assert admin_client.post(change, {}).status_code == 403
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert admin_client.get(add).status_code == 403
    assert model.objects.count() == before


def test_staff_request_a_recompute_from_the_admin(admin_client, staff) -> None:
    add = reverse("admin:tournaments_ratingrecompute_add")
    assert admin_client.get(add).status_code == 200
    response = admin_client.post(add, {})
    job = models.RatingRecompute.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "admin:tournaments_ratingrecompute_change", args=[job.pk]
    )
    assert (job.status, job.requested_by) == ("queued", staff)
    admin_client.post(add, {})
    assert models.RatingRecompute.objects.count() == 1
    admin_client.post(
        reverse("admin:tournaments_ratingrecompute_changelist"),
        {"action": "request_recompute", "_selected_action": [job.pk]},
    )
    assert models.RatingRecompute.objects.count() == 1
    assert (
        registered(models.RatingRecompute, RatingRecomputeAdmin).live_progress(job) == "0/0 (0.0%)"
    )


def test_a_started_or_finished_tournament_keeps_its_definition_and_status_in_the_admin(
    admin_client, cup, oh_hell
) -> None:
    tournament_start(tournament=cup)
    assert tournament_generate(tournament_id=cup.pk) == "running"
    Match.objects.filter(tournament=cup).update(status="cancelled")
    assert tournament_advance(tournament_id=cup.pk) == "finished"
    entries = set(cup.entries.values_list("bot_id", flat=True))
    url = reverse("admin:tournaments_tournament_change", args=[cup.pk])
    data = change_form_data(admin_client, cup, name="renamed", status="draft", format="swiss")
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    cup.refresh_from_db()
    assert cup.name == "renamed"  # the name and description stay editable
    assert (cup.status, cup.format, cup.variant_id) == ("finished", "round_robin", oh_hell.pk)
    assert set(cup.entries.values_list("bot_id", flat=True)) == entries
    inline = admin_client.get(url).context["inline_admin_formsets"][0]
    assert not (inline.has_add_permission or inline.has_change_permission)
    assert not inline.has_delete_permission


def test_a_draft_tournaments_status_moves_only_through_the_actions(admin_client, cup) -> None:
    url = reverse("admin:tournaments_tournament_change", args=[cup.pk])
    for status in ("running", "finished"):
        response = admin_client.post(url, change_form_data(admin_client, cup, status=status))
        assert response.status_code == 302
        cup.refresh_from_db()
        assert cup.status == "draft"


def test_the_tournament_form_says_duplicate_deals_come_round_again(admin_client) -> None:
    body = admin_client.get(reverse("admin:tournaments_tournament_add")).content.decode()
    assert DEALS["duplicate"] in body  # the admin shows help text as written


def test_staff_cannot_change_what_a_match_deals_in_the_admin(admin_client, oh_hell) -> None:
    match = Match.objects.create(variant=oh_hell, seed=41, time_limit_ms=500)
    before = (match.seed, match.variant_id, match.duplicate_group, match.time_limit_ms)
    url = reverse("admin:tournaments_match_change", args=[match.pk])
    assert admin_client.get(url).status_code == 200  # shown, read only
    data = {"seed": match.seed + 1, "duplicate_group": "other", "time_limit_ms": 77}
    assert admin_client.post(url, data).status_code == 403
    match.refresh_from_db()
    assert (match.seed, match.variant_id, match.duplicate_group, match.time_limit_ms) == before


def test_staff_may_withdraw_a_confirmed_address_in_the_admin(admin_client, owner) -> None:
    assert models.is_email_confirmed(owner)
    url = reverse("admin:tournaments_confirmedemail_delete", args=[owner.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    owner = User.objects.get(pk=owner.pk)
    assert not models.is_email_confirmed(owner)
