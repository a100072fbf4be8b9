"""The tournament's matches download streams: the same bytes as before, in a fixed number of
queries however many matches it has."""

from __future__ import annotations

import pytest

from tests.support.exports import fixture_tournament
from tournaments.models import (
    Match,
    MatchSeat,
    Tournament,
)

pytestmark = pytest.mark.django_db


# The download as the serializer-based renderer wrote it (ids filled in by the test).
EXPECTED = (
    "id,tournament,ladder,scrimmage,variant,round,duplicate_group,seed,seed_sha256,status,attempts,"
    "max_attempts,rated,started_at,finished_at,created_at,has_replay,seat_seat,seat_bot,"
    "seat_bot_name,seat_score,seat_rank,seat_faults,seat_disqualified\r\n"
    "{m0},{t},,,oh-hell,0,g0,7000,b698d86c67a2cff80405bd47af322216c552fd3a52f9c58a70f7b3a3313895b1,"
    "finished,1,3,True,2024-05-01T12:00:01.123456Z,2024-05-01T12:00:09.123456Z,2024-05-01T12:00:00.123456Z,True,"
    "0,{b0},bot-0000,-5,3,0,False\r\n"
    "{m0},{t},,,oh-hell,0,g0,7000,b698d86c67a2cff80405bd47af322216c552fd3a52f9c58a70f7b3a3313895b1,"
    "finished,1,3,True,2024-05-01T12:00:01.123456Z,2024-05-01T12:00:09.123456Z,2024-05-01T12:00:00.123456Z,True,"
    "1,{b1},bot-0001,5,2,1,False\r\n"
    "{m0},{t},,,oh-hell,0,g0,7000,b698d86c67a2cff80405bd47af322216c552fd3a52f9c58a70f7b3a3313895b1,"
    "finished,1,3,True,2024-05-01T12:00:01.123456Z,2024-05-01T12:00:09.123456Z,2024-05-01T12:00:00.123456Z,True,"
    "2,{b2},bot-0002,15,1,0,True\r\n"
    "{m1},{t},,,oh-hell,0,,7001,931a4ddcbb47a6b7f558cd19c1405582f56dc9c2cd3590f47b5d8a0bde61c646,"
    "cancelled,0,3,False,2024-05-01T12:01:01.123456Z,,2024-05-01T12:01:00.123456Z,False,"
    "0,{b1},bot-0001,,,0,False\r\n"
    "{m1},{t},,,oh-hell,0,,7001,931a4ddcbb47a6b7f558cd19c1405582f56dc9c2cd3590f47b5d8a0bde61c646,"
    "cancelled,0,3,False,2024-05-01T12:01:01.123456Z,,2024-05-01T12:01:00.123456Z,False,"
    "1,{b2},bot-0002,,,1,False\r\n"
    "{m1},{t},,,oh-hell,0,,7001,931a4ddcbb47a6b7f558cd19c1405582f56dc9c2cd3590f47b5d8a0bde61c646,"
    "cancelled,0,3,False,2024-05-01T12:01:01.123456Z,,2024-05-01T12:01:00.123456Z,False,"
    "2,{b3},'=cmd|' /C calc'!A0,,,0,False\r\n"
    "{m2},{t},,,oh-hell,1,,,2378926a9bcc79f385034655e9f4e1027eb6ca96cfbfb872dcbb5d09dbbc196e,"
    "queued,0,3,False,,,2024-05-01T12:02:00.123456Z,False,"
    "0,{b2},bot-0002,,,0,False\r\n"
    "{m2},{t},,,oh-hell,1,,,2378926a9bcc79f385034655e9f4e1027eb6ca96cfbfb872dcbb5d09dbbc196e,"
    "queued,0,3,False,,,2024-05-01T12:02:00.123456Z,False,"
    "1,{b3},'=cmd|' /C calc'!A0,,,1,False\r\n"
    "{m2},{t},,,oh-hell,1,,,2378926a9bcc79f385034655e9f4e1027eb6ca96cfbfb872dcbb5d09dbbc196e,"
    "queued,0,3,False,,,2024-05-01T12:02:00.123456Z,False,"
    "2,{b0},bot-0000,,,0,False\r\n"
    "{m3},{t},,,oh-hell,1,,7003,46ece05546fb2626da88a216af6aa066b5172e824ad9eae6742d8e12ef6fbcc8,"
    "finished,1,3,False,2024-05-01T12:03:01.123456Z,2024-05-01T12:03:09.123456Z,2024-05-01T12:03:00.123456Z,True,"
    "0,{b3},'=cmd|' /C calc'!A0,-5,3,0,False\r\n"
    "{m3},{t},,,oh-hell,1,,7003,46ece05546fb2626da88a216af6aa066b5172e824ad9eae6742d8e12ef6fbcc8,"
    "finished,1,3,False,2024-05-01T12:03:01.123456Z,2024-05-01T12:03:09.123456Z,2024-05-01T12:03:00.123456Z,True,"
    "1,{b0},bot-0000,5,2,1,False\r\n"
    "{m3},{t},,,oh-hell,1,,7003,46ece05546fb2626da88a216af6aa066b5172e824ad9eae6742d8e12ef6fbcc8,"
    "finished,1,3,False,2024-05-01T12:03:01.123456Z,2024-05-01T12:03:09.123456Z,2024-05-01T12:03:00.123456Z,True,"
    "2,{b1},bot-0001,15,1,0,False\r\n"
    "{m4},{t},,,oh-hell,2,g2,7004,6586fa95bc8f7da4564098ce83dd9c4198669a5815704816a9a98da51284abbe,"
    "cancelled,0,3,False,2024-05-01T12:04:01.123456Z,,2024-05-01T12:04:00.123456Z,False,"
    "0,{b0},bot-0000,,,0,False\r\n"
    "{m4},{t},,,oh-hell,2,g2,7004,6586fa95bc8f7da4564098ce83dd9c4198669a5815704816a9a98da51284abbe,"
    "cancelled,0,3,False,2024-05-01T12:04:01.123456Z,,2024-05-01T12:04:00.123456Z,False,"
    "1,{b1},bot-0001,,,1,False\r\n"
    "{m4},{t},,,oh-hell,2,g2,7004,6586fa95bc8f7da4564098ce83dd9c4198669a5815704816a9a98da51284abbe,"
    "cancelled,0,3,False,2024-05-01T12:04:01.123456Z,,2024-05-01T12:04:00.123456Z,False,"
    "2,{b2},bot-0002,,,0,False\r\n"
    "{m5},{t},,,oh-hell,2,,,a441fa0449240669bde1c537efb9f5b1acee68ff3112b4a182063791d064e7f7,"
    "queued,0,3,False,,,2024-05-01T12:05:00.123456Z,False,"
    "0,{b1},bot-0001,,,0,False\r\n"
    "{m5},{t},,,oh-hell,2,,,a441fa0449240669bde1c537efb9f5b1acee68ff3112b4a182063791d064e7f7,"
    "queued,0,3,False,,,2024-05-01T12:05:00.123456Z,False,"
    "1,{b2},bot-0002,,,1,False\r\n"
    "{m5},{t},,,oh-hell,2,,,a441fa0449240669bde1c537efb9f5b1acee68ff3112b4a182063791d064e7f7,"
    "queued,0,3,False,,,2024-05-01T12:05:00.123456Z,False,"
    "2,{b3},'=cmd|' /C calc'!A0,,,0,True\r\n"
)


def fixtures_csv(client, tournament: Tournament) -> bytes:
    response = client.get(f"/api/tournaments/{tournament.pk}/fixtures/", {"download": "csv"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="tournament-{tournament.pk}-matches.csv"'
    )
    return b"".join(response) if response.streaming else response.content


def test_the_matches_download_keeps_its_bytes(client) -> None:
    tournament = fixture_tournament(6)
    matches = Match.objects.filter(tournament=tournament).order_by("pk")
    ids = {f"m{n}": pk for n, pk in enumerate(matches.values_list("pk", flat=True))}
    bots = MatchSeat.objects.filter(match__tournament=tournament).order_by("bot_id")
    bot_ids = sorted(set(bots.values_list("bot_id", flat=True)))
    ids |= {f"b{n}": pk for n, pk in enumerate(bot_ids)}
    assert fixtures_csv(client, tournament).decode() == EXPECTED.format(t=tournament.pk, **ids)


@pytest.mark.parametrize("matches", [3, 60])
def test_the_matches_download_streams_in_a_fixed_number_of_queries(
    client, django_assert_max_num_queries, matches
) -> None:
    tournament = fixture_tournament(matches)
    with django_assert_max_num_queries(4):
        response = client.get(f"/api/tournaments/{tournament.pk}/fixtures/", {"download": "csv"})
        assert response.streaming
        body = b"".join(response)
    assert body.count(b"\r\n") == 1 + 3 * matches
