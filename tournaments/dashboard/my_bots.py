"""The "My bots" pages: the user's bots, registering one (its secret shown once), and each
bot's page with its checks, faults, secret rotation, verification and ladder opt-in."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from tournaments.dashboard.author_pages import mine, over_write_limit, owned_bot, submitted
from tournaments.dashboard.forms import BotRegisterForm, LadderForm
from tournaments.dashboard.scrimmages import ScrimmageRow, scrimmage_row_status
from tournaments.dashboard.write_a_bot import STARTER_PORT
from tournaments.errors import ConflictError, PermissionDeniedError, TooManyRequestsError
from tournaments.models import Bot, is_email_confirmed, signed_in
from tournaments.selectors.bots import (
    bot_health_check,
    bot_health_checks,
    bot_recent_faults,
    bots_of_owner,
)
from tournaments.selectors.scrimmages import scrimmages_faced, scrimmages_of
from tournaments.services.bots import bot_register, bot_rotate_secret, bot_verify_request
from tournaments.services.ladders import CONFIRM_EMAIL, bot_set_ladder_opt_in

# The secret of a bot just registered or rotated waits here for one page view, then is gone.
SECRET_SESSION_KEY = "onboarding_secret"
# The value the confirmation form of a rotation posts (dashboard/my_bot_rotate.html).
ROTATE_CONFIRMATION = "rotate"


def _show_secret_once(request: HttpRequest, bot: Bot, secret: str) -> HttpResponse:
    request.session[SECRET_SESSION_KEY] = {"bot": bot.pk, "secret": secret}
    return redirect("dashboard:my-bot", bot_id=bot.pk)


@never_cache
@mine
@require_http_methods(["GET", "HEAD", "POST"])
def my_bots(request: HttpRequest) -> HttpResponse:
    """List the user's bots; register a new one (its secret is shown on the next page, once)."""

    def registered(form: BotRegisterForm) -> HttpResponse:
        bot, secret = bot_register(owner=signed_in(request.user), **form.cleaned_data)
        return _show_secret_once(request, bot, secret)

    return submitted(
        request,
        BotRegisterForm,
        scope="writes",
        act=registered,
        template="dashboard/my_bots.html",
        context=lambda: {
            "bots": list(bots_of_owner(owner=request.user)),
            "email_confirmed": is_email_confirmed(request.user),
            "loopback_allowed": settings.BOT_ALLOW_LOOPBACK,
        },
    )


def _starter_port(endpoint_url: str) -> int:
    """The port to start the starter bot on: the registered endpoint's, when it has one."""
    try:
        return urlsplit(endpoint_url).port or STARTER_PORT
    except ValueError:
        return STARTER_PORT


@never_cache
@mine
@require_safe
def my_bot(request: HttpRequest, bot_id: int) -> HttpResponse:
    """One of the user's bots: its secret right after it was made, checks, faults, actions."""
    bot = owned_bot(request, bot_id)
    shown = request.session.get(SECRET_SESSION_KEY)
    secret = None
    if shown and shown.get("bot") == bot.pk:
        secret = shown["secret"]
        del request.session[SECRET_SESSION_KEY]
    check_id = request.GET.get("check", "")
    check = bot_health_check(bot=bot, check_id=int(check_id)) if check_id.isdecimal() else None
    context = {
        "bot": bot,
        "secret": secret,
        "check": check,
        "hello_seconds": settings.BOT_HELLO_TIMEOUT_MS / 1000,
        "checks_in_flight": settings.CHECKS_IN_FLIGHT_PER_OWNER,
        "checks_per_hour": settings.CHECK_REQUESTS_PER_HOUR,
        "refusal_grace_days": settings.REFUSAL_GRACE_DAYS,
        # With tasks run in-process nothing plays in the background, so ladders stand still.
        "ladders_run": not settings.CELERY_TASK_ALWAYS_EAGER,
        "ladder_full": request.GET.get("ladder") == "full" and not bot.ladder_opt_in,
        "email_confirmed": is_email_confirmed(signed_in(request.user)),
        "confirm_email": CONFIRM_EMAIL,
        "ladder_cap": settings.LADDER_MAX_BOTS_PER_OWNER,
        "port": _starter_port(bot.endpoint_url),
        "health_checks": list(bot_health_checks(bot=bot, limit=5)),
        "faults": bot_recent_faults(bot=bot),
        "scrimmages": [
            ScrimmageRow(s, scrimmage_row_status(s))
            for s in scrimmages_of(user=request.user).filter(bot=bot)[:5]
        ],
        "faced": scrimmages_faced(bot=bot),
    }
    return render(request, "dashboard/my_bot.html", context)


@never_cache
@mine
@require_http_methods(["GET", "HEAD", "POST"])
def my_bot_rotate(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Ask to confirm, then give the bot a new signing secret, shown once on its page.

    A POST without the confirmation (an old form, a stray click) shows the question again.
    """
    bot = owned_bot(request, bot_id)
    confirmed = request.method == "POST" and request.POST.get("confirm") == ROTATE_CONFIRMATION
    if not confirmed:
        status = 400 if request.method == "POST" else 200
        context = {"bot": bot, "confirmation": ROTATE_CONFIRMATION}
        return render(request, "dashboard/my_bot_rotate.html", context, status=status)
    if refused := over_write_limit(request):
        return refused
    return _show_secret_once(request, bot, bot_rotate_secret(bot=bot))


@mine
@require_POST
def my_bot_verify(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Queue a ``hello`` check; the bot's page shows it pending, then its result."""
    bot = owned_bot(request, bot_id)
    if refused := over_write_limit(request):
        return refused
    try:
        check = bot_verify_request(bot=bot)
    except TooManyRequestsError as error:
        response = HttpResponse(error.message, status=429)
        response["Retry-After"] = str(error.retry_after)
        return response
    return redirect(f"{reverse('dashboard:my-bot', args=[bot.pk])}?check={check.pk}#verify")


@mine
@require_POST
def my_bot_ladder(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Opt the bot into the always-on ladders, or out of them."""
    bot = owned_bot(request, bot_id)
    if refused := over_write_limit(request):
        return refused
    form = LadderForm(request.POST)
    try:
        bot_set_ladder_opt_in(bot=bot, enabled=form.is_valid() and form.cleaned_data["enabled"])
    except PermissionDeniedError:
        # The page says why: the account's email address is not confirmed.
        return redirect(f"{reverse('dashboard:my-bot', args=[bot.pk])}#ladder-title")
    except ConflictError:
        # The page says why: the account has as many bots on the ladders as it may.
        return redirect(f"{reverse('dashboard:my-bot', args=[bot.pk])}?ladder=full#ladder-title")
    return redirect("dashboard:my-bot", bot_id=bot.pk)
