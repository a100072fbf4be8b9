"""The match page links its replay rather than holding it; the replay endpoint answers it
compressed when asked, and cheaply again to a client that has it."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from django.contrib.auth.models import User

from tests.support.world import make_bots, play_and_record, queue_match
from tournaments.models import Match, Replay, Tournament, TournamentStatus, Variant

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished() -> Match:
    owner = User.objects.create_user(username="ada", password="a-long-test-passphrase-42")
    variant = Variant.objects.get(name="oh-hell")
    tournament = Tournament.objects.create(
        name="Replays",
        organiser=owner,
        variant=variant,
        format="round_robin",
        status=TournamentStatus.RUNNING,
        table_size=3,
    )
    match = queue_match(tournament, make_bots(3, [owner]), round_=0)
    play_and_record(match)
    return match


def grow_replay(match: Match, times: int) -> None:
    """Make the stored replay ``times`` as long, as a variant of many deals has."""
    replay = Replay.objects.get(match=match)
    replay.data = {**replay.data, "deals": replay.data["deals"] * times}
    replay.save(update_fields=["data"])


def test_the_match_page_does_not_grow_with_its_replay(client, finished) -> None:
    small = client.get(f"/matches/{finished.pk}/")
    assert small.status_code == 200
    grow_replay(finished, 50)
    large = client.get(f"/matches/{finished.pk}/")
    assert large.status_code == 200
    assert abs(len(large.content) - len(small.content)) < 512
    page = large.content.decode()
    assert 'id="replay-data"' not in page
    url = re.search(r'data-replay-url="([^"]+)"', page)
    assert url and url.group(1) == f"/api/matches/{finished.pk}/replay/"


def test_the_replay_answers_gzip_when_asked_with_the_same_json(client, finished) -> None:
    grow_replay(finished, 20)
    url = f"/api/matches/{finished.pk}/replay/"
    plain = client.get(url)
    assert plain.status_code == 200 and "Content-Encoding" not in plain
    packed = client.get(url, HTTP_ACCEPT_ENCODING="br, gzip;q=0.8")
    assert packed.status_code == 200
    assert packed["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed["Vary"]
    assert len(packed.content) * 4 < len(plain.content)
    assert gzip.decompress(packed.content) == plain.content
    body = json.loads(plain.content)
    assert body["deals"] == Replay.objects.get(match=finished).data["deals"]
    assert plain["Content-Disposition"] == f'attachment; filename="ohhell-match-{finished.pk}.json"'


def test_a_finished_matchs_replay_is_cached_and_answers_304_to_its_etag(client, finished) -> None:
    url = f"/api/matches/{finished.pk}/replay/"
    first = client.get(url)
    assert "public" in first["Cache-Control"] and "max-age=" in first["Cache-Control"]
    again = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again.content == b""
    packed = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert client.get(url, HTTP_IF_NONE_MATCH=packed["ETag"]).status_code == 304
