"""Admin for every model, one module per area: what staff and organisers need to look after
bots and matches."""

from __future__ import annotations

from django.contrib import admin

from tournaments.admin.bots import BotAdmin, BotHealthCheckAdmin, SharedHostAdmin
from tournaments.admin.collusion import CollusionFlagAdmin, CollusionScanAdmin
from tournaments.admin.ladders import LadderAdmin
from tournaments.admin.matches import MatchAdmin, MatchSeatAdmin, ReplayAdmin, SeatFaultAdmin
from tournaments.admin.ratings import RatingAdmin, RatingHistoryAdmin, RatingRecomputeAdmin
from tournaments.admin.scrimmages import ScrimmageAdmin
from tournaments.admin.tournaments import TournamentAdmin, TournamentEntryAdmin
from tournaments.admin.users import ConfirmedEmailAdmin
from tournaments.admin.variants import VariantAdmin

# The admin's "View site" link opens the dashboard.
admin.site.site_url = "/"

__all__ = [
    "BotAdmin",
    "BotHealthCheckAdmin",
    "CollusionFlagAdmin",
    "CollusionScanAdmin",
    "ConfirmedEmailAdmin",
    "LadderAdmin",
    "MatchAdmin",
    "MatchSeatAdmin",
    "RatingAdmin",
    "RatingHistoryAdmin",
    "RatingRecomputeAdmin",
    "ReplayAdmin",
    "ScrimmageAdmin",
    "SeatFaultAdmin",
    "SharedHostAdmin",
    "TournamentAdmin",
    "TournamentEntryAdmin",
    "VariantAdmin",
]
