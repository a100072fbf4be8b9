"""Scrimmages from a bot's pages: letting other owners choose the bot, asking for a practice
scrimmage, following one on its own page, and cancelling it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from tournaments.dashboard.author_pages import mine, over_write_limit, owned_bot, submitted
from tournaments.dashboard.forms import PracticeForm, ScrimmageAcceptForm
from tournaments.errors import ApplicationError, QuotaExceededError
from tournaments.models import Bot, Match, ReferencePlayer, Scrimmage, Variant, signed_in
from tournaments.selectors.matches import seed_revealed
from tournaments.selectors.scrimmages import (
    practice_opponents,
    scrimmage_matches,
    scrimmage_status,
    scrimmage_visible,
)
from tournaments.services.bots import bot_update
from tournaments.services.scrimmages import ScrimmageRequest, scrimmage_cancel, scrimmage_create


@dataclass(frozen=True)
class ScrimmageRow:
    """A scrimmage as a page lists it, with its status read from its matches."""

    scrimmage: Scrimmage
    status: str


@dataclass(frozen=True)
class ScrimmageMatchRow:
    """A scrimmage's match as its page shows it: the deal's seed once it may be shown."""

    match: Match
    seed: int | None


def scrimmage_row_status(scrimmage: Any) -> str:
    """The status of a scrimmage read with its progress counts (``scrimmages_of``)."""
    return scrimmage_status(
        match_count=scrimmage.match_count,
        ended=scrimmage.ended,
        started=scrimmage.started,
        cancelled=scrimmage.cancelled_at is not None,
    )


@mine
@require_POST
def my_bot_scrimmages(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Let other owners choose the bot as a scrimmage opponent, or stop letting them."""
    bot = owned_bot(request, bot_id)
    if refused := over_write_limit(request):
        return refused
    form = ScrimmageAcceptForm(request.POST)
    enabled = form.is_valid() and form.cleaned_data["enabled"]
    bot_update(bot=bot, data={"accepts_scrimmages": enabled})
    return redirect(f"{reverse('dashboard:my-bot', args=[bot.pk])}#scrimmages-title")


def _practice_form(bot: Bot, data: QueryDict | None) -> PracticeForm:
    opponents = [
        (b.pk, b.name if b.owner_id == bot.owner_id else f"{b.name} (by {b.owner.username})")
        for b in practice_opponents(bot=bot)
    ]
    return PracticeForm(
        data,
        references=[(p.value, p.label) for p in ReferencePlayer],
        opponents=opponents,
        variants=[(v.name, v.name) for v in Variant.objects.order_by("-is_preset", "name")],
        max_matches=settings.SCRIMMAGE_MAX_MATCHES,
    )


@never_cache
@mine
@require_http_methods(["GET", "HEAD", "POST"])
def my_bot_practice(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Practice: ask for an unrated scrimmage of the bot against chosen opponents, then follow
    it on its own page. Past the day's quota the form is shown again with a 429."""
    bot = owned_bot(request, bot_id)
    context = {
        "bot": bot,
        "per_day": settings.SCRIMMAGE_MATCHES_PER_DAY,
        "variants": Variant.objects.order_by("-is_preset", "name"),
    }

    def asked(form: PracticeForm) -> HttpResponse:
        data = form.cleaned_data
        try:
            scrimmage = scrimmage_create(
                owner=signed_in(request.user),
                request=ScrimmageRequest(
                    bot_id=bot.pk,
                    variant=Variant.objects.get(name=data["variant"]),
                    matches=data["matches"],
                    opponent_ids=data["opponents"],
                    reference_players=data["reference_players"],
                    seed=data["seed"],
                    time_bank_ms=data["time_bank_ms"],
                ),
            )
        except QuotaExceededError as error:
            form.add_service_error(error)
            page = {"form": form, **context}
            response = render(request, "dashboard/my_bot_practice.html", page, status=429)
            response["Retry-After"] = str(error.retry_after)
            return response
        return redirect("dashboard:my-scrimmage", scrimmage_id=scrimmage.pk)

    return submitted(
        request,
        lambda data: _practice_form(bot, data),
        scope="writes",
        act=asked,
        template="dashboard/my_bot_practice.html",
        context=lambda: context,
    )


@never_cache
@mine
@require_safe
def my_scrimmage(request: HttpRequest, scrimmage_id: int) -> HttpResponse:
    """One of the user's scrimmages: its progress, each match's result and a link to its replay;
    the page follows the matches until every one has ended (scrimmage.js)."""
    scrimmage = scrimmage_visible(user=request.user, scrimmage_id=scrimmage_id)
    if scrimmage is None:
        raise Http404(f"You have no scrimmage {scrimmage_id}.")
    matches = [
        ScrimmageMatchRow(
            m, m.seed if seed_revealed(status=m.status, group_still_playing=False) else None
        )
        for m in scrimmage_matches(scrimmage=scrimmage)
    ]
    status = scrimmage_row_status(scrimmage)
    context = {
        "scrimmage": scrimmage,
        "status": status,
        "live": status not in ("finished", "cancelled"),
        "matches": matches,
        "opponents": [entry.bot for entry in scrimmage.opponent_entries.all()],
        "api_url": f"/api/scrimmages/{scrimmage.pk}/",
    }
    return render(request, "dashboard/my_scrimmage.html", context)


@never_cache
@mine
@require_POST
def my_scrimmage_cancel(request: HttpRequest, scrimmage_id: int) -> HttpResponse:
    """Cancel one of the user's scrimmages and show its page again, saying what came of it."""
    scrimmage = scrimmage_visible(user=request.user, scrimmage_id=scrimmage_id)
    if scrimmage is None:
        raise Http404(f"You have no scrimmage {scrimmage_id}.")
    try:
        scrimmage_cancel(scrimmage=scrimmage, by=signed_in(request.user))
    except ApplicationError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, "Cancelled: its matches not yet ended will not be played.")
    return redirect("dashboard:my-scrimmage", scrimmage_id=scrimmage_id)
