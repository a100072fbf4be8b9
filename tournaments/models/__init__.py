"""The data model: bots, variants, tournaments, matches, ratings.

Invariants that matter live in the database (unique and check constraints, foreign keys),
so they hold whichever process writes: API, admin, Celery worker or a shell.
"""

from tournaments.models.analytics import SeatTally
from tournaments.models.bots import (
    Bot,
    BotHealthCheck,
    BotStatus,
    BotVersion,
    DisabledCause,
    HealthCheckStatus,
    ReferencePlayer,
    SharedHost,
)
from tournaments.models.collusion import (
    CollusionBotFlag,
    CollusionBotTotal,
    CollusionFlag,
    CollusionPairTotal,
    CollusionScan,
)
from tournaments.models.competitions import (
    Tournament,
    TournamentEntry,
    TournamentFormat,
    TournamentStatus,
)
from tournaments.models.faults import FaultKind
from tournaments.models.ladders import (
    SHARE_OWED,
    Ladder,
    LadderShare,
    LadderStatus,
    new_tiebreak,
)
from tournaments.models.matches import (
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    SeatFault,
    VoidedDeal,
    VoidReason,
)
from tournaments.models.rank_intervals import RankFit, RankInterval
from tournaments.models.ratings import Rating, RatingHistory, RatingRecompute, RecomputeStatus
from tournaments.models.scrimmages import Scrimmage, ScrimmageOpponent, ScrimmageStatus
from tournaments.models.users import (
    ORGANISERS_GROUP,
    ConfirmedEmail,
    UsernameKey,
    email_confirmed_q,
    is_email_confirmed,
    is_organiser,
    sees_bot_privately,
    sees_platform_errors,
    signed_in,
)
from tournaments.models.variants import Variant

__all__ = [
    "ORGANISERS_GROUP",
    "SHARE_OWED",
    "Bot",
    "BotHealthCheck",
    "BotStatus",
    "BotVersion",
    "CollusionBotFlag",
    "CollusionBotTotal",
    "CollusionFlag",
    "CollusionPairTotal",
    "CollusionScan",
    "ConfirmedEmail",
    "DisabledCause",
    "FaultKind",
    "HealthCheckStatus",
    "Ladder",
    "LadderShare",
    "LadderStatus",
    "Match",
    "MatchSeat",
    "MatchStatus",
    "RankFit",
    "RankInterval",
    "Rating",
    "RatingHistory",
    "RatingRecompute",
    "RecomputeStatus",
    "ReferencePlayer",
    "Replay",
    "Scrimmage",
    "ScrimmageOpponent",
    "ScrimmageStatus",
    "SeatFault",
    "SeatTally",
    "SharedHost",
    "Tournament",
    "TournamentEntry",
    "TournamentFormat",
    "TournamentStatus",
    "UsernameKey",
    "Variant",
    "VoidReason",
    "VoidedDeal",
    "email_confirmed_q",
    "is_email_confirmed",
    "is_organiser",
    "new_tiebreak",
    "sees_bot_privately",
    "sees_platform_errors",
    "signed_in",
]
