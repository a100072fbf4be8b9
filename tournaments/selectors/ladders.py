"""Reads of the always-on ladders."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from tournaments.models import Ladder, MatchStatus


def ladder_list() -> QuerySet[Ladder]:
    """Ladders with their variant and counts of matches in flight and finished."""
    return Ladder.objects.select_related("variant").annotate(
        matches_in_flight=Count(
            "matches", filter=Q(matches__status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING])
        ),
        matches_finished=Count("matches", filter=Q(matches__status=MatchStatus.FINISHED)),
    )
