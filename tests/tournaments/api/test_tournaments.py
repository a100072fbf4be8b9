"""The tournament endpoints, with the fixed cast: organiser, staff, owner, other user, anonymous."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.support.api import draft_round_robin, error_of, started
from tests.support.users import client_for
from tournaments.models import (
    Bot,
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Tournament,
    TournamentEntry,
    TournamentStatus,
)
from tournaments.services.tournaments import tournament_generate


@pytest.fixture
def active_bots(make_bot, owner):
    """Bots of a user who accepts invitations, so organisers may enter them."""
    return [make_bot(owner, status=BotStatus.ACTIVE, accept_invitations=True) for _ in range(6)]


def create(client, entrants, **fields):
    data = {
        "name": "spring cup",
        "variant": "oh-hell",
        "format": "round_robin",
        "bots": [b.pk for b in entrants],
        "table_size": 3,
        **fields,
    }
    return client.post("/api/tournaments/", data, format="json")


def counts() -> tuple[int, int, int]:
    return Tournament.objects.count(), TournamentEntry.objects.count(), Match.objects.count()


@pytest.fixture
def tournament(organiser, oh_hell, active_bots):
    return draft_round_robin(
        organiser, oh_hell, active_bots, name="club night", table_size=3, rounds=3, seed=7
    )


class TestCreate:
    @pytest.mark.parametrize("client_fixture", ["organiser_client", "staff_client"])
    def test_organisers_and_staff_create_a_draft_tournament(
        self, client_fixture, request, active_bots
    ) -> None:
        response = create(request.getfixturevalue(client_fixture), active_bots, rounds=2)
        assert response.status_code == 201, response.content
        body = response.json()
        tournament = Tournament.objects.get(pk=body["id"])
        assert body["status"] == tournament.status == TournamentStatus.DRAFT
        assert body["variant"] == "oh-hell" and body["format"] == "round_robin"
        assert sorted(b["id"] for b in body["bots"]) == sorted(b.pk for b in active_bots)
        assert body["progress"]["total"] == 0 and body["entries"] == 6
        assert tournament.rounds == 2 and tournament.table_size == 3
        assert tournament.entries.count() == 6
        assert tournament.organiser.username == body["organiser"]
        assert body["time_bank_ms"] == tournament.time_bank_ms == 10_000  # the default bank

    @pytest.mark.parametrize("bank", [0, 1, 120_000])
    def test_an_organiser_sets_the_time_bank_within_its_bounds(
        self, organiser_client, active_bots, bank
    ) -> None:
        response = create(organiser_client, active_bots, time_bank_ms=bank)
        assert response.status_code == 201, response.content
        assert response.json()["time_bank_ms"] == bank
        assert Tournament.objects.get(pk=response.json()["id"]).time_bank_ms == bank

    def test_a_start_time_schedules_it_and_the_variant_may_be_given_by_id(
        self, organiser_client, active_bots, oh_hell
    ) -> None:
        start_at = timezone.now() + timedelta(hours=2)
        response = create(
            organiser_client,
            active_bots,
            variant=oh_hell.pk,
            start_at=start_at.isoformat(),
            seed=42,
            description="evening games",
        )
        assert response.status_code == 201
        tournament = Tournament.objects.get()
        assert tournament.status == TournamentStatus.SCHEDULED
        assert tournament.start_at is not None
        assert abs(tournament.start_at - start_at) < timedelta(seconds=1)
        assert (tournament.seed, tournament.description) == (42, "evening games")

    def test_only_staff_mark_a_tournament_rated(
        self, organiser_client, staff_client, active_bots
    ) -> None:
        plain = create(organiser_client, active_bots)
        assert plain.status_code == 201 and plain.json()["rated"] is False
        refused = create(organiser_client, active_bots, rated=True)
        assert refused.status_code == 403
        error = error_of(refused)
        assert error["detail"] == {"rated": ["Only staff may mark a tournament rated."]}
        assert Tournament.objects.count() == 1
        marked = create(staff_client, active_bots, rated=True)
        assert marked.status_code == 201 and marked.json()["rated"] is True
        assert Tournament.objects.get(pk=marked.json()["id"]).rated

    @pytest.mark.parametrize(
        ("client_fixture", "status"),
        [("owner_client", 403), ("other_client", 403), ("anonymous_client", 401)],
    )
    def test_nobody_else_creates_a_tournament_not_even_the_bots_owner(
        self, client_fixture, status, request, active_bots
    ) -> None:
        response = create(request.getfixturevalue(client_fixture), active_bots)
        assert response.status_code == status
        error_of(response)
        assert counts() == (0, 0, 0)

    @pytest.mark.parametrize(
        ("fields", "field", "words"),
        [
            ({"variant": "no-such-variant"}, "variant", "No variant"),
            ({"variant": 999_999}, "variant", "No variant"),
            ({"variant": True}, "variant", "variant id or name"),
            ({"variant": ["oh-hell"]}, "variant", "variant id or name"),
            ({"variant": "v" * 10_000}, "variant", "No variant"),
            ({"variant": "oh-hell\x00"}, "variant", "No variant"),
            ({"name": "cup\x00"}, "name", "Null characters"),
            ({"table_size": 2}, "table_size", "3"),
            ({"table_size": 9}, "table_size", "8"),
            ({"table_size": 8}, "table_size", "8"),
            ({"table_size": "4"}, "table_size", "integer"),
            ({"table_size": 4.5}, "table_size", "integer"),
            ({"format": "knockout"}, "format", "valid choice"),
            ({"format": None}, "format", "null"),
            ({"bots": []}, "bots", "at least 1"),
            ({"bots": "1,2,3"}, "bots", "list"),
            ({"bots": ["a", "b", "c"]}, "bots", "integer"),
            ({"bots": [2**70]}, "bots", "less than or equal"),
            ({"bots": [0]}, "bots", "greater than or equal"),
            ({"name": ""}, "name", "blank"),
            ({"name": 12}, "name", "valid string"),
            ({"name": "n" * 101}, "name", "100"),
            ({"description": "d" * 1001}, "description", "1000"),
            ({"time_limit_ms": 5}, "time_limit_ms", "10"),
            ({"time_limit_ms": 10**9}, "time_limit_ms", "120000"),
            ({"time_bank_ms": -1}, "time_bank_ms", "0"),
            ({"time_bank_ms": 120_001}, "time_bank_ms", "120000"),
            ({"time_bank_ms": "5000"}, "time_bank_ms", "integer"),
            ({"time_bank_ms": 2.5}, "time_bank_ms", "integer"),
            ({"time_bank_ms": None}, "time_bank_ms", "null"),
            ({"rounds": 0}, "rounds", "1"),
            ({"rounds": 10**6}, "rounds", "1000"),
            ({"start_at": "tomorrow"}, "start_at", "format"),
            ({"start_at": "2001-01-01T00:00:00Z"}, "start_at", "past"),
            ({"seed": -1}, "seed", "0"),
        ],
    )
    def test_bad_input_is_refused_naming_the_field_and_nothing_is_written(
        self, organiser_client, active_bots, fields, field, words
    ) -> None:
        response = create(organiser_client, active_bots, **fields)
        assert response.status_code == 400, response.content
        error = error_of(response)
        assert field in error["detail"], error
        assert error["message"].startswith(f"{field}"), error["message"]
        assert words in error["message"], error["message"]
        assert counts() == (0, 0, 0)

    def test_bots_must_be_known_active_distinct_and_enough(
        self, organiser_client, active_bots, make_bot, owner
    ) -> None:
        pending = make_bot(owner, name="not-yet", accept_invitations=True)
        disabled = make_bot(
            owner, status=BotStatus.DISABLED, disabled_cause="admin", accept_invitations=True
        )
        a, b, c = active_bots[:3]
        cases = [
            ([a.pk, b.pk, 999_999], "no bot with id 999999"),
            ([a.pk, b.pk, pending.pk], "not-yet"),
            ([a.pk, b.pk, disabled.pk], disabled.name),
            ([a.pk, b.pk, b.pk], "twice"),
            ([a.pk, b.pk], "at least 3"),
            ([a.pk, b.pk, c.pk], "at least 4"),
        ]
        for i, (ids, words) in enumerate(cases):
            size = 4 if i == len(cases) - 1 else 3
            response = organiser_client.post(
                "/api/tournaments/",
                {
                    "name": "x",
                    "variant": "oh-hell",
                    "format": "swiss",
                    "bots": ids,
                    "table_size": size,
                },
                format="json",
            )
            assert response.status_code == 400, (ids, response.content)
            error = error_of(response)
            assert "bots" in error["detail"] and words in error["message"], error
        assert counts() == (0, 0, 0)

    def test_missing_fields_are_each_named(self, organiser_client) -> None:
        response = organiser_client.post("/api/tournaments/", {}, format="json")
        assert response.status_code == 400
        assert set(error_of(response)["detail"]) == {"name", "variant", "format", "bots"}
        assert counts() == (0, 0, 0)

    @pytest.mark.parametrize(
        ("body", "content_type", "status"),
        [
            (b"{not json", "application/json", 400),
            (b"[1, 2]", "application/json", 400),
            (b'{"name": "' + b"x" * (10 * 1024 * 1024) + b'"}', "application/json", 413),
            (b"name=x", "application/x-www-form-urlencoded", 415),
        ],
    )
    def test_malformed_bodies_are_refused(
        self, organiser_client, body, content_type, status
    ) -> None:
        response = organiser_client.post("/api/tournaments/", body, content_type=content_type)
        assert response.status_code == status
        error_of(response)
        assert counts() == (0, 0, 0)


class TestRead:
    def test_anyone_reads_the_list_and_the_detail_with_progress(
        self, anonymous_client, tournament
    ) -> None:
        body = anonymous_client.get("/api/tournaments/").json()
        assert body["count"] == 1
        row = body["results"][0]
        assert (row["id"], row["entries"], row["matches"]) == (tournament.pk, 6, 0)
        detail = anonymous_client.get(f"/api/tournaments/{tournament.pk}/").json()
        assert detail["progress"]["total"] == 0 and len(detail["bots"]) == 6
        assert detail["organiser"] == "organiser"

    def test_the_list_filters_orders_and_pages(
        self, organiser_client, active_bots, oh_hell
    ) -> None:
        create(organiser_client, active_bots, name="a-cup", format="swiss")
        create(organiser_client, active_bots, name="b-cup", variant="blackout")
        create(organiser_client, active_bots, name="c-cup")
        Tournament.objects.filter(name="c-cup").update(status=TournamentStatus.CANCELLED)

        def names(query):
            body = organiser_client.get(f"/api/tournaments/?{query}").json()
            return [t["name"] for t in body["results"]]

        assert names("ordering=name") == ["a-cup", "b-cup", "c-cup"]
        assert names("format=swiss") == ["a-cup"]
        assert names("variant=BLACKOUT") == ["b-cup"]
        assert names("status=cancelled") == ["c-cup"]
        assert names("ordering=-name&page_size=1") == ["c-cup"]

    @pytest.mark.parametrize(
        "query",
        [
            "status=sleeping",
            "format=knockout",
            "ordering=secret",
            "page=0",
            "page=x",
            "page_size=100000000",
            "name=%00",
            "variant=%00",
            "organiser=%00",
        ],
    )
    def test_bad_query_parameters_are_a_clear_4xx(
        self, anonymous_client, tournament, query
    ) -> None:
        response = anonymous_client.get(f"/api/tournaments/?{query}")
        assert response.status_code in (200, 400, 404)
        if response.status_code != 200:
            error_of(response)

    @pytest.mark.parametrize("path", ["999999", "99999999999999999999999", "abc", "-1"])
    def test_an_unknown_tournament_is_a_json_404(self, anonymous_client, path) -> None:
        for suffix in ("", "progress/", "standings/", "fixtures/"):
            response = anonymous_client.get(f"/api/tournaments/{path}/{suffix}")
            assert response.status_code == 404, (path, suffix)
            error_of(response)

    def test_the_list_makes_the_same_queries_for_many_rows(
        self, anonymous_client, organiser, oh_hell, active_bots
    ) -> None:
        def add(n):
            for _ in range(n):
                t = Tournament.objects.create(
                    name="t", organiser=organiser, variant=oh_hell, format="swiss"
                )
                t.entries.create(bot=active_bots[0])
                Match.objects.create(tournament=t, variant=oh_hell)

        add(5)
        with CaptureQueriesContext(connection) as few:
            assert anonymous_client.get("/api/tournaments/").json()["count"] == 5
        add(45)
        with CaptureQueriesContext(connection) as many:
            assert len(anonymous_client.get("/api/tournaments/").json()["results"]) == 50
        assert len(many) == len(few)


class TestControl:
    @pytest.mark.parametrize("client_fixture", ["organiser_client", "staff_client"])
    def test_the_organiser_or_staff_start_it_and_its_matches_are_queued(
        self, client_fixture, request, tournament
    ) -> None:
        client = request.getfixturevalue(client_fixture)
        response = client.post(f"/api/tournaments/{tournament.pk}/start/")
        assert response.status_code == 202, response.content
        assert response.json()["status"] == TournamentStatus.STARTING
        assert not Match.objects.filter(tournament=tournament).exists()
        assert tournament_generate(tournament_id=tournament.pk) == "running"
        body = client.get(f"/api/tournaments/{tournament.pk}/").json()
        tournament.refresh_from_db()
        assert body["status"] == tournament.status == TournamentStatus.RUNNING
        matches = Match.objects.filter(tournament=tournament)
        assert matches.count() == body["progress"]["total"] == body["progress"]["queued"] > 0
        assert set(matches.values_list("status", flat=True)) == {MatchStatus.QUEUED}
        assert MatchSeat.objects.filter(match__tournament=tournament).count() == 3 * len(matches)

    def test_a_big_round_robin_starts_at_once_and_a_worker_makes_its_fixtures(
        self, organiser, organiser_client, oh_hell, make_bot, owner
    ) -> None:
        bots = [
            make_bot(owner, status=BotStatus.ACTIVE, accept_invitations=True) for _ in range(100)
        ]
        big = draft_round_robin(
            organiser, oh_hell, bots, name="big night", table_size=4, rounds=100
        )
        response = organiser_client.post(f"/api/tournaments/{big.pk}/start/")
        assert response.status_code == 202, response.content
        assert response.json()["status"] == "starting"
        assert not Match.objects.filter(tournament=big).exists()  # none made in the request
        assert tournament_generate(tournament_id=big.pk) == "running"
        assert Match.objects.filter(tournament=big, status=MatchStatus.QUEUED).count() == 2500
        assert tournament_generate(tournament_id=big.pk) == "idle"  # a second delivery
        assert Match.objects.filter(tournament=big).count() == 2500

    def test_pause_resume_and_cancel_move_it_through_its_states(
        self, organiser_client, tournament
    ) -> None:
        started(organiser_client, tournament)
        base = f"/api/tournaments/{tournament.pk}"
        assert organiser_client.post(f"{base}/pause/").json()["status"] == "paused"
        assert organiser_client.post(f"{base}/resume/").json()["status"] == "running"
        body = organiser_client.post(f"{base}/cancel/").json()
        assert body["status"] == "cancelled"
        assert body["progress"]["cancelled"] == body["progress"]["total"]
        assert not Match.objects.filter(tournament=tournament, status="queued").exists()

    @pytest.mark.parametrize(
        ("done", "step"),
        [
            ([], "pause"),
            ([], "resume"),
            (["start"], "start"),
            (["start"], "resume"),
            (["start", "pause"], "pause"),
            (["cancel"], "cancel"),
            (["cancel"], "start"),
        ],
    )
    def test_an_invalid_transition_is_a_409_and_changes_nothing(
        self, organiser_client, tournament, done, step
    ) -> None:
        base = f"/api/tournaments/{tournament.pk}"
        for previous in done:
            if previous == "start":
                started(organiser_client, tournament)
            else:
                assert organiser_client.post(f"{base}/{previous}/").status_code == 200
        before = Tournament.objects.values().get(pk=tournament.pk), Match.objects.count()
        response = organiser_client.post(f"{base}/{step}/")
        assert response.status_code == 409
        error = error_of(response)
        assert error["code"] == "conflict" and "cannot" in error["message"]
        assert (Tournament.objects.values().get(pk=tournament.pk), Match.objects.count()) == before

    @pytest.mark.parametrize(
        ("who", "status"),
        [("other_organiser", 403), ("owner", 403), ("other_user", 403), (None, 401)],
    )
    def test_nobody_else_controls_someone_elses_tournament(
        self, tournament, who, status, request, django_user_model
    ) -> None:
        from django.contrib.auth.models import Group

        if who == "other_organiser":
            user = django_user_model.objects.create_user("second-organiser")
            user.groups.add(Group.objects.get(name="organisers"))
        else:
            user = request.getfixturevalue(who) if who else None
        client = client_for(user)
        before = Tournament.objects.values().get(pk=tournament.pk)
        for step in ("start", "pause", "resume", "cancel"):
            response = client.post(f"/api/tournaments/{tournament.pk}/{step}/")
            assert response.status_code == status, step
            error_of(response)
        assert Tournament.objects.values().get(pk=tournament.pk) == before
        assert Match.objects.count() == 0

    def test_control_takes_no_other_methods(self, organiser_client, tournament) -> None:
        response = organiser_client.get(f"/api/tournaments/{tournament.pk}/start/")
        assert response.status_code == 405
        error_of(response)
        for method in ("put", "patch", "delete"):
            response = getattr(organiser_client, method)(f"/api/tournaments/{tournament.pk}/")
            assert response.status_code == 405
        assert Tournament.objects.filter(pk=tournament.pk).exists()


def finish(match, scores):
    now = timezone.now()
    for seat, score in zip(match.seats.order_by("seat"), scores, strict=True):
        seat.score = score
        seat.rank = 1 + sum(other > score for other in scores)
        seat.bids_total = 10
        seat.bids_exact = 5
        seat.save()
    Match.objects.filter(pk=match.pk).update(
        status=MatchStatus.FINISHED, started_at=now - timedelta(seconds=30), finished_at=now
    )


class TestProgressStandingsFixtures:
    def test_progress_counts_matches_by_state_with_an_estimated_finish(
        self, organiser_client, anonymous_client, tournament
    ) -> None:
        started(organiser_client, tournament)
        matches = list(Match.objects.filter(tournament=tournament).order_by("pk"))
        finish(matches[0], [40, 30, 20])
        Match.objects.filter(pk=matches[1].pk).update(status=MatchStatus.FAILED)
        body = anonymous_client.get(f"/api/tournaments/{tournament.pk}/progress/").json()
        total = len(matches)
        assert body["total"] == total
        assert (body["finished"], body["failed"], body["done"]) == (1, 1, 2)
        assert body["queued"] == total - 2 and body["running"] == 0
        assert body["percent"] == round(100 * 2 / total, 1)
        assert body["estimated_finish"] is not None

    def test_standings_state_the_winner_and_ties(
        self, organiser_client, anonymous_client, tournament
    ) -> None:
        started(organiser_client, tournament)
        match = Match.objects.filter(tournament=tournament).earliest("pk")
        finish(match, [40, 40, 20])
        body = anonymous_client.get(f"/api/tournaments/{tournament.pk}/standings/").json()
        assert body["tie_for_first"] is True and body["final"] is False
        seats = list(match.seats.order_by("seat"))
        assert sorted(body["winners"]) == sorted([seats[0].bot_id, seats[1].bot_id])
        first = body["standings"][0]
        assert first["place"] == 1 and first["total_score"] == 40
        assert first["exact_bid_rate"] == 0.5

    def test_fixtures_list_the_matches_with_seats_by_round_a_page_at_a_time(
        self, organiser_client, anonymous_client, tournament
    ) -> None:
        started(organiser_client, tournament)
        total = Match.objects.filter(tournament=tournament).count()
        body = anonymous_client.get(
            f"/api/tournaments/{tournament.pk}/fixtures/?page_size=1"
        ).json()
        assert body["count"] == total and len(body["results"]) == 1
        fixture = body["results"][0]
        assert fixture["status"] == "queued" and fixture["tournament"] == tournament.pk
        assert [s["seat"] for s in fixture["seats"]] == [0, 1, 2]
        assert {s["bot"] for s in fixture["seats"]} <= set(
            tournament.entries.values_list("bot_id", flat=True)
        )
        rounds = [
            m["round"]
            for m in anonymous_client.get(f"/api/tournaments/{tournament.pk}/fixtures/").json()[
                "results"
            ]
        ]
        assert rounds == sorted(rounds)

    def test_a_huge_page_size_is_capped(
        self, organiser_client, anonymous_client, tournament
    ) -> None:
        started(organiser_client, tournament)
        response = anonymous_client.get(
            f"/api/tournaments/{tournament.pk}/fixtures/?page_size=100000000"
        )
        assert response.status_code == 200
        assert len(response.json()["results"]) <= 200


def test_a_throttled_organiser_creates_nothing_more(
    organiser_client, active_bots, monkeypatch
) -> None:
    from tournaments.api.throttling import WriteRateThrottle

    monkeypatch.setattr(WriteRateThrottle, "THROTTLE_RATES", {"writes": "1/minute"})
    assert create(organiser_client, active_bots).status_code == 201
    response = create(organiser_client, active_bots)
    assert response.status_code == 429
    error_of(response)
    assert Tournament.objects.count() == 1
    assert Bot.objects.count() == 6
