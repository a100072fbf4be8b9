"""The match endpoints: lists, per-seat results and faults, replay downloads, match_retry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from engine.seeds import seed_matches, seed_sha256
from tests.support.api import error_of
from tournaments.errors import ApplicationError
from tournaments.leases import claim_token
from tournaments.models import (
    Bot,
    BotStatus,
    Ladder,
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    SeatFault,
    Tournament,
    Variant,
)
from tournaments.services.matches import match_claim, match_fail_attempt, match_retry


class SeatedMatches:
    """Makes matches with the first three of ``players`` seated in order."""

    def __init__(self, players: list[Bot], variant: Variant) -> None:
        self.players = players
        self.variant = variant

    def __call__(
        self,
        scores: list[int] | None = None,
        *,
        tournament: Tournament | None = None,
        variant: Variant | None = None,
        replay: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Match:
        """Create a match of the seated bots; finished with ``scores`` when given."""
        match = Match.objects.create(
            variant=variant or self.variant, tournament=tournament, seed=11, **fields
        )
        for i, bot in enumerate(self.players[:3]):
            MatchSeat.objects.create(match=match, seat=i, bot=bot)
        if scores is not None:
            now = timezone.now()
            for seat, score in zip(match.seats.order_by("seat"), scores, strict=True):
                seat.score, seat.rank = score, 1 + sum(s > score for s in scores)
                seat.bids_exact, seat.bids_total = 3, 4
                seat.save()
            Match.objects.filter(pk=match.pk).update(
                status=MatchStatus.FINISHED, started_at=now, finished_at=now
            )
        if replay is not None:
            Replay.objects.create(match=match, data=replay)
        return Match.objects.get(pk=match.pk)


@pytest.fixture
def seated(make_bot, owner, oh_hell) -> SeatedMatches:
    """Four active bots of one owner, the first three seated in every match made."""
    return SeatedMatches([make_bot(owner, status=BotStatus.ACTIVE) for _ in range(4)], oh_hell)


class TestList:
    def test_anyone_lists_matches_with_their_seats(self, anonymous_client, seated) -> None:
        match = seated([30, 20, 10], replay={"deals": []})
        seated()
        body = anonymous_client.get("/api/matches/").json()
        assert body["count"] == 2
        row = next(m for m in body["results"] if m["id"] == match.pk)
        assert row["status"] == "finished" and row["variant"] == "oh-hell"
        assert row["has_replay"] is True
        assert [(s["seat"], s["score"], s["rank"]) for s in row["seats"]] == [
            (0, 30, 1),
            (1, 20, 2),
            (2, 10, 3),
        ]
        assert row["seats"][0]["bot_name"] == seated.players[0].name

    def test_the_list_filters_by_tournament_variant_status_and_bot(
        self, anonymous_client, seated, organiser, oh_hell, make_bot, owner
    ) -> None:

        cup = Tournament.objects.create(
            name="cup", organiser=organiser, variant=oh_hell, format="swiss"
        )
        in_cup = seated([1, 2, 3], tournament=cup)
        blackout = seated(variant=Variant.objects.get(name="blackout"))
        loner = make_bot(owner, status=BotStatus.ACTIVE)
        solo = Match.objects.create(variant=oh_hell)
        MatchSeat.objects.create(match=solo, seat=0, bot=loner)

        def ids(query):
            return {
                m["id"] for m in anonymous_client.get(f"/api/matches/?{query}").json()["results"]
            }

        assert ids(f"tournament={cup.pk}") == {in_cup.pk}
        assert ids("variant=blackout") == {blackout.pk}
        assert ids("status=finished") == {in_cup.pk}
        assert ids(f"bot={loner.pk}") == {solo.pk}
        assert ids(f"bot={seated.players[0].pk}") == {in_cup.pk, blackout.pk}
        assert ids("ordering=id") == {in_cup.pk, blackout.pk, solo.pk}

    @pytest.mark.parametrize(
        "query",
        [
            "status=sleeping",
            "tournament=abc",
            "tournament=1.5",
            "tournament=99999999999999999999999999",
            "bot=-1",
            "bot=1e400",
            "rated=perhaps",
            "ordering=secret",
            "page=0",
            "page=999",
            "page_size=-5",
            "page_size=99999999999",
            "variant=" + "v" * 5000,
            "variant=%00",
            "tournament=%00",
        ],
    )
    def test_odd_query_strings_never_answer_500(self, anonymous_client, seated, query) -> None:
        seated([1, 2, 3])
        response = anonymous_client.get(f"/api/matches/?{query}")
        assert response.status_code in (200, 400, 404), (query, response.content[:200])
        if response.status_code != 200:
            error_of(response)
        else:
            assert len(response.json()["results"]) <= 200

    def test_the_list_makes_the_same_queries_for_5_or_50_matches(
        self, anonymous_client, seated
    ) -> None:
        for _ in range(5):
            seated([3, 2, 1], replay={})
        with CaptureQueriesContext(connection) as few:
            assert len(anonymous_client.get("/api/matches/").json()["results"]) == 5
        for _ in range(45):
            seated([3, 2, 1])
        with CaptureQueriesContext(connection) as many:
            assert len(anonymous_client.get("/api/matches/").json()["results"]) == 50
        assert len(many) == len(few)

    def test_a_match_names_its_ladder_or_its_tournament_and_null_for_the_other(
        self, anonymous_client, seated, owner, oh_hell
    ) -> None:
        ladder, _ = Ladder.objects.get_or_create(variant=oh_hell)
        cup = Tournament.objects.create(
            name="Cup", organiser=owner, variant=oh_hell, format="round_robin"
        )
        on_ladder = seated([3, 2, 1], ladder=ladder)
        in_cup = seated([3, 2, 1], tournament=cup)
        rows = {m["id"]: m for m in anonymous_client.get("/api/matches/").json()["results"]}
        assert (rows[on_ladder.pk]["ladder"], rows[on_ladder.pk]["tournament"]) == (ladder.pk, None)
        assert (rows[in_cup.pk]["ladder"], rows[in_cup.pk]["tournament"]) == (None, cup.pk)
        detail = anonymous_client.get(f"/api/matches/{on_ladder.pk}/").json()
        assert (detail["ladder"], detail["tournament"], detail["variant"]) == (
            ladder.pk,
            None,
            "oh-hell",
        )
        assert anonymous_client.get(f"/api/ladders/{detail['ladder']}/").json()["variant"] == (
            "oh-hell"
        )
        csv_text = anonymous_client.get("/api/matches/", {"download": "csv"}).content.decode()
        assert "ladder" in csv_text.splitlines()[0].split(",")


class TestDetail:
    def test_a_match_shows_per_seat_results_and_faults(self, anonymous_client, seated) -> None:
        match = seated([30, 20, 10])
        seat = match.seats.get(seat=1)
        SeatFault.objects.create(
            seat=seat, kind="timeout", count=2, sample="no answer in 1000 ms", latency_ms=1001
        )
        MatchSeat.objects.filter(pk=seat.pk).update(faults=2, disqualified=True)
        body = anonymous_client.get(f"/api/matches/{match.pk}/").json()
        assert body["id"] == match.pk and body["has_replay"] is False
        second = body["seats"][1]
        assert second["bot"] == seated.players[1].pk
        assert second["bot_name"] == seated.players[1].name
        assert (second["score"], second["rank"], second["disqualified"]) == (20, 2, True)
        assert (second["bids_exact"], second["bids_total"], second["exact_bid_rate"]) == (
            3,
            4,
            0.75,
        )
        # The sample is the owner's and staff's to read; anyone sees the kind of fault.
        assert second["fault_records"] == [
            {"kind": "timeout", "count": 2, "sample": None, "latency_ms": 1001}
        ]
        assert body["seats"][0]["fault_records"] == []

    @pytest.mark.parametrize(
        ("viewer", "sees"),
        [
            ("anonymous_client", False),
            ("owner_client", False),  # owns every bot at the table: still not the platform's
            ("other_client", False),
            ("staff_client", True),
        ],
    )
    def test_a_platform_error_is_shown_to_staff_only(self, request, seated, viewer, sees) -> None:
        error = 'IntegrityError: duplicate key value violates "match_seat" (note)=(internal)'
        match = seated(status=MatchStatus.FAILED, error=error)
        client = request.getfixturevalue(viewer)
        response = client.get(f"/api/matches/{match.pk}/")
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "failed"  # everyone sees that it failed
        assert body["error"] == (error if sees else None)
        # Nor do the lists and downloads of matches carry it, to anyone.
        assert "IntegrityError" not in client.get("/api/matches/").content.decode()
        download = client.get("/api/matches/", {"download": "csv"})
        assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")
        assert "IntegrityError" not in download.content.decode()

    def test_anyone_sees_a_voided_deal_but_not_the_error(
        self, anonymous_client, staff_client, seated
    ) -> None:
        match = seated()
        published = seed_sha256(match.seed)
        token = claim_token()
        assert match_claim(match_id=match.pk, token=token)
        error = "OperationalError('server closed the connection at db-7.internal')"
        assert match_fail_attempt(match_id=match.pk, token=token, error=error) == "queued"
        body = anonymous_client.get(f"/api/matches/{match.pk}/").json()
        (voided,) = body["voided_deals"]
        assert voided["seed_sha256"] == published != body["seed_sha256"]
        assert voided["reason"] == "platform_error" and voided["voided_at"]
        assert body["error"] is None
        assert "db-7.internal" not in anonymous_client.get(f"/api/matches/{match.pk}/").text
        staff = staff_client.get(f"/api/matches/{match.pk}/").json()
        assert staff["error"] == error and staff["voided_deals"] == body["voided_deals"]

    def test_a_voided_deals_seed_is_shown_once_the_match_has_ended(
        self, anonymous_client, seated
    ) -> None:
        match = seated(max_attempts=2)
        published = [seed_sha256(match.seed)]
        for expected in ("queued", "failed"):
            token = claim_token()
            assert match_claim(match_id=match.pk, token=token)
            assert match_fail_attempt(match_id=match.pk, token=token, error="boom") == expected
            body = anonymous_client.get(f"/api/matches/{match.pk}/").json()
            # An attempt of a voided deal may still be playing on, and its outcome may still
            # count: only the commitments are shown, failed or not.
            assert [d["seed_sha256"] for d in body["voided_deals"]] == published
            assert [d["seed"] for d in body["voided_deals"]] == [None] * len(published)
            assert body["seed"] is None
            published.append(body["seed_sha256"])
        Match.objects.filter(pk=match.pk).update(status=MatchStatus.FINISHED)
        body = anonymous_client.get(f"/api/matches/{match.pk}/").json()
        deals = body["voided_deals"]
        assert [d["seed_sha256"] for d in deals] == published[:2]
        assert all(seed_matches(d["seed"], d["seed_sha256"]) for d in deals)
        assert seed_matches(body["seed"], published[2])

    @pytest.mark.parametrize("path", ["999999", "99999999999999999999999", "abc", "1.5"])
    def test_an_unknown_match_is_a_json_404(self, anonymous_client, path) -> None:
        for suffix in ("", "replay/"):
            response = anonymous_client.get(f"/api/matches/{path}/{suffix}")
            assert response.status_code == 404
            error_of(response)

    def test_matches_cannot_be_written_through_the_api(self, staff_client, seated) -> None:
        match = seated()
        before = Match.objects.values().get(pk=match.pk)
        assert staff_client.post("/api/matches/", {}, format="json").status_code == 405
        for method in ("put", "patch", "delete"):
            response = getattr(staff_client, method)(f"/api/matches/{match.pk}/")
            assert response.status_code == 405
            error_of(response)
        assert Match.objects.values().get(pk=match.pk) == before


class TestReplay:
    def test_the_replay_downloads_as_a_json_attachment(self, anonymous_client, seated) -> None:
        data = {"players": 3, "deals": [{"scores": [1, 2, 3]}]}
        match = seated([1, 2, 3], replay=data)
        response = anonymous_client.get(f"/api/matches/{match.pk}/replay/")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("application/json")
        assert response["Content-Disposition"] == (
            f'attachment; filename="ohhell-match-{match.pk}.json"'
        )
        assert json.loads(response.content) == {**data, "seed_sha256": seed_sha256(match.seed)}

    def test_a_match_without_a_replay_yet_is_a_json_404(self, anonymous_client, seated) -> None:
        match = seated()
        response = anonymous_client.get(f"/api/matches/{match.pk}/replay/")
        assert response.status_code == 404
        error = error_of(response)
        assert error["code"] == "not_found" and "no replay yet" in error["message"]
        assert "Content-Disposition" not in response


class TestRetry:
    def test_a_failed_match_is_queued_again_with_fresh_attempts(self, seated) -> None:
        match = seated(status=MatchStatus.FAILED, attempts=3, error="broker lost")
        Match.objects.filter(pk=match.pk).update(finished_at=timezone.now())
        match_retry(match=match)
        match.refresh_from_db()
        assert (match.status, match.attempts, match.error) == (MatchStatus.QUEUED, 0, "")
        assert match.finished_at is None and match.claimed_by == ""

    @pytest.mark.parametrize("status", ["queued", "running", "cancelled"])
    def test_only_failed_matches_are_retried(self, seated, status) -> None:
        match = seated(status=status)
        before = Match.objects.values().get(pk=match.pk)
        with pytest.raises(ApplicationError, match="only a failed match"):
            match_retry(match=match)
        assert Match.objects.values().get(pk=match.pk) == before

    def test_a_finished_match_is_never_retried(self, seated) -> None:
        match = seated([1, 2, 3])
        with pytest.raises(ApplicationError):
            match_retry(match=match)
        assert Match.objects.get(pk=match.pk).status == MatchStatus.FINISHED

    def test_a_failed_match_of_a_cancelled_tournament_stays_failed(
        self, seated, organiser, oh_hell
    ) -> None:
        cup = Tournament.objects.create(
            name="cup", organiser=organiser, variant=oh_hell, format="swiss", status="cancelled"
        )
        match = seated(tournament=cup, status=MatchStatus.FAILED, attempts=3)
        with pytest.raises(ApplicationError, match="cancelled"):
            match_retry(match=match)
        assert Match.objects.get(pk=match.pk).status == MatchStatus.FAILED
