"""Reads of the always-on ladders."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from tournaments.models import Ladder, LadderStatus, Match, MatchStatus

# The home page tells how busy each ladder has been over this window.
ACTIVITY_WINDOW = timedelta(hours=1)
# The activity read walks the matches' (status, created_at) index (``match_queue_idx``) over
# the matches queued since this long before the window opened, never a ladder's whole history:
# a ladder table waits minutes for a worker, so one queued earlier that finished inside the
# window (after a ladder was paused for longer, say) is left out of the count.
ACTIVITY_QUEUED_BEFORE = timedelta(hours=1)


def ladder_list() -> QuerySet[Ladder]:
    """Ladders with their variant and counts of matches in flight and finished."""
    return Ladder.objects.select_related("variant").annotate(
        matches_in_flight=Count(
            "matches", filter=Q(matches__status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING])
        ),
        matches_finished=Count("matches", filter=Q(matches__status=MatchStatus.FINISHED)),
    )


@dataclass(frozen=True, slots=True)
class LadderActivity:
    """What a running ladder is doing: tables at play now and matches finished lately."""

    ladder: Ladder
    tables_playing: int
    finished_in_window: int
    last_finished_at: datetime | None


def ladders_activity(*, now: datetime | None = None) -> list[LadderActivity]:
    """Each running ladder by variant name with its tables playing now, its matches finished
    within ``ACTIVITY_WINDOW`` and the last one's finish, in three indexed queries."""
    now = now or timezone.now()
    ladders = list(
        Ladder.objects.filter(status=LadderStatus.RUNNING)
        .select_related("variant")
        .order_by("variant__name")
    )
    ids = [ladder.pk for ladder in ladders]
    # A duplicate group plays one rotation at a time, so each match running is a table.
    playing = dict(
        Match.objects.filter(status=MatchStatus.RUNNING, ladder_id__in=ids)
        .values("ladder_id")
        .annotate(n=Count("pk"))
        .order_by()
        .values_list("ladder_id", "n")
    )
    opens = now - ACTIVITY_WINDOW
    recent = (
        Match.objects.filter(
            status=MatchStatus.FINISHED,
            ladder_id__in=ids,
            created_at__gte=opens - ACTIVITY_QUEUED_BEFORE,
            finished_at__gte=opens,
        )
        .values("ladder_id")
        .annotate(n=Count("pk"), last=Max("finished_at"))
        .order_by()
    )
    finished: dict[int, int] = {}
    last: dict[int, datetime] = {}
    for ladder_id, n, at in recent.values_list("ladder_id", "n", "last"):
        finished[ladder_id], last[ladder_id] = n, at
    return [
        LadderActivity(
            ladder=ladder,
            tables_playing=playing.get(ladder.pk, 0),
            finished_in_window=finished.get(ladder.pk, 0),
            last_finished_at=last.get(ladder.pk),
        )
        for ladder in ladders
    ]
