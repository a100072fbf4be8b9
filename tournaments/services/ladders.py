"""Always-on ladders: which bots play on them."""

from __future__ import annotations

from django.db import transaction

from tournaments.models import Bot


@transaction.atomic
def bot_set_ladder_opt_in(*, bot: Bot, enabled: bool) -> Bot:
    """Opt a bot into the ladders or out of them; only its active periods are scheduled.

    A bot that is pending verification or disabled keeps its choice and is left out of ladder
    tables until it passes ``hello`` again.
    """
    if not isinstance(enabled, bool):
        raise TypeError("enabled must be a bool")
    if bot.ladder_opt_in != enabled:
        bot.ladder_opt_in = enabled
        bot.save(update_fields=["ladder_opt_in", "updated_at"])
    return bot
