"""Dashboard pages: server-rendered views over the selectors, each a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_safe

from engine import PRESET_NOTES
from engine.errors import InvalidReplayError
from engine.replay import verify_replay
from engine.seeds import seed_matches, seed_sha256
from tournaments.dashboard.charts import rating_band_chart, rating_chart
from tournaments.dashboard.study import ranking_study
from tournaments.maths.ratings import margin
from tournaments.models import (
    Bot,
    FaultKind,
    Match,
    MatchStatus,
    Replay,
    Tournament,
    TournamentStatus,
    Variant,
    sees_bot_privately,
    sees_platform_errors,
)
from tournaments.models.competitions import DEALS
from tournaments.provisional import is_provisional
from tournaments.selectors import dashboard as reads
from tournaments.selectors.analytics import bot_analytics, played_variants
from tournaments.selectors.bots import bot_health_checks
from tournaments.selectors.ladders import ACTIVITY_WINDOW, ladders_activity
from tournaments.selectors.matches import match_replay_id, match_seed_revealed, seat_hidden
from tournaments.selectors.rank_intervals import rank_fit
from tournaments.selectors.ratings import bot_ratings, leaderboard
from tournaments.selectors.tournaments import (
    shared_owner_matches,
    tournament_list,
    tournament_progress,
    tournament_standings,
)
from tournaments.selectors.variants import variant_rules

BOARD_PAGE_SIZE = 50
FIXTURES_PAGE_SIZE = 40
TOURNAMENTS_PAGE_SIZE = 30
BOTS_PAGE_SIZE = 50
MATCHES_PAGE_SIZE = 40
VARIANT_TOP_BOTS = 10
CHART_TOP_BOTS = 8
# Once a tournament is in one of these states and nothing runs, its progress cannot change.
SETTLED = {TournamentStatus.FINISHED, TournamentStatus.CANCELLED}


def _page(request: HttpRequest, rows: Any, size: int) -> Page:
    """One page of ``rows``; a bad or out-of-range ``page`` gives the nearest real page."""
    return Paginator(rows, size).get_page(request.GET.get("page"))


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """Show every variant's best bots, the ladders at play, live tournaments and the latest
    results."""
    context = {
        "variants": reads.variants_with_top_bots(top=3),
        "ladders": ladders_activity(),
        "activity_minutes": int(ACTIVITY_WINDOW.total_seconds() // 60),
        "tournaments": reads.live_tournaments(),
        "matches": reads.recent_matches(),
        "counts": reads.site_counts(),
        "api_url": "/api/",
    }
    return render(request, "dashboard/home.html", context)


@require_safe
def leaderboard_index(request: HttpRequest) -> HttpResponse:
    """Send visitors to the leaderboard of the variant with the most rated bots."""
    variants = reads.variants_with_top_bots(top=0)
    if not variants:
        raise Http404("No variants yet.")
    best = max(variants, key=lambda v: (v.rated_bots, v.name == "oh-hell"))
    return redirect("dashboard:leaderboard", variant=best.name)


@require_safe
def leaderboard_page(request: HttpRequest, variant: str) -> HttpResponse:
    """Rank the variant's bots by conservative rating, a page at a time, with a chart of the top."""
    variants = reads.variants_with_top_bots(top=0)
    chosen = next((v for v in variants if v.name == variant), None)
    if chosen is None:
        raise Http404(f"No variant named {variant!r}.")
    page = _page(request, leaderboard(variant=chosen), BOARD_PAGE_SIZE)
    lines = reads.leaderboard_page_lines(
        variant=chosen, ratings=list(page.object_list), first_place=page.start_index()
    )
    # The chart follows the top of the board whichever page is shown: one more small query.
    top = list(leaderboard(variant=chosen)[:CHART_TOP_BOTS])
    rows = reads.rating_series(variant=chosen, bot_ids=[r.bot_id for r in top])
    chart = rating_chart(rows, lambda r: r.bot_id, {r.bot_id: r.bot.name for r in top})
    context = {
        "variant": chosen,
        "variants": [v for v in variants if v.rated_bots or v.pk == chosen.pk],
        "page": page,
        "lines": lines,
        "chart": chart,
        "trend_matches": reads.TREND_MATCHES,
        "rank_fit": rank_fit(variant_id=chosen.pk),
        "rank_min_matches": settings.RANK_INTERVALS_MIN_MATCHES,
        "api_url": f"/api/leaderboard/?variant={chosen.name}",
        "intervals_api_url": f"/api/leaderboard/intervals/?variant={chosen.name}",
    }
    return render(request, "dashboard/leaderboard.html", context)


@require_safe
def bot_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Show one bot: ratings, analytics of one variant (``?variant=``, by default the one it
    played most), matches, faults and health."""
    bot = reads.bot_profile(bot_id=bot_id)
    if bot is None:
        raise Http404(f"No bot {bot_id}.")
    ratings = list(bot_ratings(bot_id=bot.pk))
    for rating in ratings:
        rating.provisional = is_provisional(rating.matches)
        rating.three_sigma = margin(rating.sigma)
    played = played_variants(bot_id=bot.pk)
    asked = request.GET.get("variant", "")
    chosen = (
        next((v for v in played if v.name == asked), None) if asked else next(iter(played), None)
    )
    if asked and chosen is None:
        raise Http404(f"variant: bot {bot.pk} has no finished match in {asked!r}.")
    analytics = (
        None
        if chosen is None
        else bot_analytics(bot_id=bot.pk, variant_id=chosen.variant_id, variant_name=chosen.name)
    )
    summary = reads.bot_play_summary(bot=bot)
    context = {
        "bot": bot,
        # Error texts can name the bot's host, port and path: its owner and staff only.
        "private": sees_bot_privately(request.user, bot.owner_id),
        "ratings": ratings,
        "played": played,
        "analytics": analytics,
        "chart": rating_band_chart(analytics.rating) if analytics else {},
        "summary": summary,
        "matches": reads.bot_recent_matches(bot=bot),
        "faults": reads.bot_fault_rates(bot=bot, matches=summary["matches"]),
        "health_checks": list(bot_health_checks(bot=bot, limit=15)),
        "api_url": f"/api/bots/{bot.pk}/",
        "analytics_api_url": f"/api/bots/{bot.pk}/analytics/"
        + (f"?variant={chosen.name}" if chosen else ""),
        "history_api_url": f"/api/bots/{bot.pk}/rating-history/",
    }
    return render(request, "dashboard/bot.html", context)


@require_safe
def bot_index(request: HttpRequest) -> HttpResponse:
    """List every bot by name with its owner, status and finished matches."""
    page = _page(request, reads.bots_for_page(), BOTS_PAGE_SIZE)
    return render(request, "dashboard/bot_list.html", {"page": page, "api_url": "/api/bots/"})


@require_safe
def match_index(request: HttpRequest) -> HttpResponse:
    """List matches newest first; ``bot`` and ``fault`` narrow them to a bot's faulty matches."""
    problems = []
    bot = None
    raw_bot = request.GET.get("bot", "")
    if raw_bot:
        bot = (
            Bot.objects.filter(pk=int(raw_bot)).first()
            if raw_bot.isascii() and raw_bot.isdecimal()
            else None
        )
        if bot is None:
            problems.append(f"bot: no bot with id {raw_bot!r}.")
    fault = request.GET.get("fault", "")
    if fault and fault not in FaultKind.values:
        problems.append(f"fault: {fault!r} is not one of {', '.join(FaultKind.values)}.")
    if problems:
        context: dict[str, Any] = {"problems": problems, "page": None}
        return render(request, "dashboard/match_list.html", context, status=400)
    rows = reads.matches_for_page(bot_id=bot.pk if bot else None, fault=fault or None)
    query = "".join(
        f"{key}={value}&" for key, value in (("bot", raw_bot), ("fault", fault)) if value
    )
    api = "/api/matches/" + (f"?bot={bot.pk}" if bot else "")
    context = {
        "page": _page(request, rows, MATCHES_PAGE_SIZE),
        "bot": bot,
        "fault": FaultKind(fault).label if fault else "",
        "query": query,
        "api_url": api,
    }
    return render(request, "dashboard/match_list.html", context)


@require_safe
def tournament_index(request: HttpRequest) -> HttpResponse:
    """List tournaments, newest first, with how far each has got."""
    page = _page(request, tournament_list().order_by("-created_at", "-pk"), TOURNAMENTS_PAGE_SIZE)
    context = {"page": page, "api_url": "/api/tournaments/"}
    return render(request, "dashboard/tournament_list.html", context)


def _tournament(tournament_id: int) -> Tournament:
    tournament = tournament_list().filter(pk=tournament_id).first()
    if tournament is None:
        raise Http404(f"No tournament {tournament_id}.")
    return tournament


def _progress_state(tournament: Tournament) -> dict[str, Any]:
    progress = tournament_progress(tournament=tournament).to_dict()
    finish = progress["estimated_finish"]
    progress["estimated_finish"] = finish.isoformat() if finish else None
    progress["status"] = tournament.status
    progress["status_label"] = tournament.get_status_display()
    progress["settled"] = tournament.status in SETTLED and not progress["running"]
    return progress


@require_safe
def tournament_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Show a tournament: live progress, standings and its fixtures, a page at a time."""
    tournament = _tournament(tournament_id)
    standings = tournament_standings(tournament=tournament)
    page = _page(request, reads.tournament_fixtures_page(tournament=tournament), FIXTURES_PAGE_SIZE)
    context = {
        "tournament": tournament,
        "progress": _progress_state(tournament),
        "standings": standings["standings"],
        "winners": set(standings["winners"]) if standings["final"] else set(),
        "tie_for_first": standings["tie_for_first"],
        "ranking_rule": standings["ranking_rule"],
        "shared_owner_tables": standings["shared_owner_tables"],
        "shared_owner_matches": shared_owner_matches(tournament=tournament),
        "deals_rule": DEALS[tournament.format],
        "page": page,
        "now": timezone.now(),
        "api_url": f"/api/tournaments/{tournament.pk}/",
    }
    return render(request, "dashboard/tournament.html", context)


@require_safe
def tournament_progress_json(request: HttpRequest, tournament_id: int) -> JsonResponse:
    """Answer the tournament's progress for the page's live bar (two queries)."""
    return JsonResponse(_progress_state(_tournament(tournament_id)))


def _replay_id(match: Match) -> int | None:
    # Hands are hidden until the deal is revealed: the match and every other match dealt the
    # same cards (its duplicate group) have ended.
    if match.status != MatchStatus.FINISHED:
        return None
    return match_replay_id(match=match)


# How long whether a replay re-plays is remembered: a stored replay never changes.
REPLAY_CHECK_CACHE_S = 86400


def _replay_check(replay_id: int, commitment: str) -> str:
    """Why the stored replay does not re-deal and re-play from the revealed seed, or "" when
    it does; checked once and remembered, so a page view never reads a large replay."""
    key = f"replay-check:{replay_id}:{commitment}"
    found = cache.get(key)
    if found is None:
        data = Replay.objects.filter(pk=replay_id).values_list("data", flat=True)[0]
        try:
            verify_replay({**data, "seed_sha256": commitment})
        except InvalidReplayError as exc:
            found = str(exc)
        else:
            found = ""
        cache.set(key, found, REPLAY_CHECK_CACHE_S)
    return str(found)


@dataclass(frozen=True, slots=True)
class VoidedDealShown:
    """A voided deal as the fair-deal box shows it: its commitment, and its seed once the
    match's seed is revealed (None before)."""

    commitment: str
    seed: int | None
    reason: str
    voided_at: datetime


def _fair_deal(match: Match, replay_id: int | None) -> dict[str, Any]:
    """The deal's commitment, and once revealed, whether the seed matches it and re-deals the
    replay (engine/seeds.py, engine/replay.py); and the deals that did not count, each with its
    commitment, and its seed once revealed."""
    revealed = match_seed_revealed(match)
    voided = [
        VoidedDealShown(
            commitment=seed_sha256(deal.seed),
            seed=deal.seed if revealed else None,
            reason=deal.get_reason_display(),
            voided_at=deal.voided_at,
        )
        for deal in match.voided_deals.all()
    ]
    fair: dict[str, Any] = {
        "commitment": seed_sha256(match.seed),
        "revealed": False,
        "voided": voided,
    }
    if not revealed:
        return fair
    fair.update(
        revealed=True, seed=match.seed, matches=seed_matches(match.seed, fair["commitment"])
    )
    if replay_id is not None:
        error = _replay_check(replay_id, fair["commitment"])
        if error:
            fair["replay_error"] = error
        else:
            fair["replay_ok"] = True
    return fair


@require_safe
def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    """Show a match: each seat's result and faults, the replay viewer once it has finished, and
    to staff the platform's last error with it."""
    match = reads.match_with_seats(match_id=match_id, user=request.user)
    if match is None:
        raise Http404(f"No match {match_id}.")
    seats = list(match.seats.all())
    for seat in seats:
        seat.private = sees_bot_privately(request.user, seat.bot.owner_id)
        seat.hidden = seat_hidden(match=match, owner_id=seat.bot.owner_id, user=request.user)
    replay_id = _replay_id(match)
    context = {
        "match": match,
        "error": match.error if sees_platform_errors(request.user) else "",
        "seats": seats,
        "has_replay": replay_id is not None,
        "fair": _fair_deal(match, replay_id),
        "seat_names": [f"seat {s.seat + 1}" if s.hidden else s.bot.name for s in seats],
        "api_url": f"/api/matches/{match.pk}/",
        "replay_api_url": f"/api/matches/{match.pk}/replay/",
    }
    return render(request, "dashboard/match.html", context)


@require_safe
def variants_page(request: HttpRequest) -> HttpResponse:
    """List every variant with its rules in words, as the engine states them."""
    variants: list[Variant] = list(reads.variants_for_page())
    for variant in variants:
        variant.rules = variant_rules(variant=variant)
        variant.note = PRESET_NOTES.get(variant.name, "") if variant.is_preset else ""
    context = {
        "presets": [v for v in variants if v.is_preset],
        "custom": [v for v in variants if not v.is_preset],
        "study": ranking_study(),
        "api_url": "/api/variants/",
    }
    return render(request, "dashboard/variants.html", context)


@require_safe
def variant_page(request: HttpRequest, name: str) -> HttpResponse:
    """One variant: its rules in words, its best bots and its latest matches."""
    variant = reads.variants_for_page().filter(name=name).first()
    if variant is None:
        raise Http404(f"No variant named {name!r}.")
    variant.rules = variant_rules(variant=variant)
    variant.note = PRESET_NOTES.get(variant.name, "") if variant.is_preset else ""
    context = {
        "variant": variant,
        "top": list(leaderboard(variant=variant)[:VARIANT_TOP_BOTS]),
        "matches": list(reads.matches_for_page(variant=variant)[: MATCHES_PAGE_SIZE // 2]),
        "api_url": f"/api/variants/{variant.name}/",
    }
    return render(request, "dashboard/variant.html", context)
