"""Whatever bytes a bot sends, its matches and health checks are recorded, as safe text."""

from __future__ import annotations

import pytest

from tests.support.hostile_bots import hostile_bots
from tournaments.models import MatchSeat, MatchStatus, SeatFault
from tournaments.services.bots import bot_verify
from tournaments.services.matches import match_create
from tournaments.services.runs import match_run

__all__ = ["hostile_bots"]

pytestmark = pytest.mark.django_db

HOSTILE = [
    ("gzip_nul", "not_json"),
    ("gzip_nul_undeclared", "not_json"),
    ("redirects_not_utf8", "redirect"),
]


def _safe(text: str) -> bool:
    return "\x00" not in text and len(text) <= 500 and text.encode("utf-8") is not None


@pytest.mark.parametrize(("behaviour", "kind"), HOSTILE)
def test_a_match_with_a_bot_sending_hostile_bytes_is_finished_with_its_faults(
    playing_bots, short_variant, make_bot, owner, hostile_bots, behaviour, kind
) -> None:
    good = playing_bots(3)
    hostile = make_bot(owner, endpoint_url=hostile_bots[behaviour], status="active")
    match = match_create(
        variant_id=short_variant.pk,
        bot_ids=[hostile.pk, *(b.pk for b in good)],
        seed=5,
        time_limit_ms=300,
    )
    assert match_run(match_id=match.pk) == "recorded"
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.attempts == 1
    seat = MatchSeat.objects.get(match=match, bot=hostile)
    fault = SeatFault.objects.get(seat=seat)
    assert fault.kind == kind and fault.count == seat.faults > 0
    assert fault.sample and _safe(fault.sample)


@pytest.mark.parametrize(("behaviour", "kind"), HOSTILE)
def test_a_health_check_of_a_bot_sending_hostile_bytes_is_stored(
    make_bot, owner, loopback_allowed, hostile_bots, settings, behaviour, kind
) -> None:
    settings.BOT_HELLO_TIMEOUT_MS = 500
    settings.HEALTH_FAILURES_TO_DISABLE = 1
    bot = make_bot(owner, endpoint_url=hostile_bots[behaviour], status="active")
    check = bot_verify(bot=bot)
    check.refresh_from_db()
    bot.refresh_from_db()
    assert not check.ok and check.error_kind == kind
    assert check.error_message and _safe(check.error_message)
    assert bot.status == "disabled" and _safe(bot.disabled_reason)
