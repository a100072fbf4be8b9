"""Pages for bot authors: accounts (sign up, in and out, passwords, the email address and its
confirmation, the API token), "My bots" and "Write a bot".

Every write goes through the services (tournaments/services/), which hold the rules; these
views only turn forms into service calls and refusals into errors beside the field at fault.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.contrib.auth.views import (
    PasswordResetCompleteView,
    PasswordResetConfirmView,
    PasswordResetDoneView,
    PasswordResetView,
)
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from tournaments.api.throttling import (
    TooMany,
    WriteRateThrottle,
    mail_wait,
    retry_after_seconds,
    too_many_message,
)
from tournaments.dashboard import protocol_doc
from tournaments.dashboard.forms import (
    BotRegisterForm,
    EmailChangeForm,
    LadderForm,
    PasswordChangeForm,
    PracticeForm,
    ResetPasswordForm,
    ScrimmageAcceptForm,
    SignUpForm,
)
from tournaments.errors import (
    ApplicationError,
    ConflictError,
    PermissionDeniedError,
    QuotaExceededError,
    TooManyRequestsError,
)
from tournaments.lockout import sign_in_lockout
from tournaments.models import (
    Bot,
    Match,
    ReferencePlayer,
    Scrimmage,
    Variant,
    is_email_confirmed,
    signed_in,
)
from tournaments.selectors.bots import (
    bot_health_check,
    bot_health_checks,
    bot_recent_faults,
    bots_of_owner,
)
from tournaments.selectors.matches import seed_revealed
from tournaments.selectors.scrimmages import (
    practice_opponents,
    scrimmage_matches,
    scrimmage_status,
    scrimmage_visible,
    scrimmages_faced,
    scrimmages_of,
)
from tournaments.selectors.users import user_api_token
from tournaments.services.bots import (
    bot_register,
    bot_rotate_secret,
    bot_update,
    bot_verify_request,
)
from tournaments.services.ladders import CONFIRM_EMAIL, bot_set_ladder_opt_in
from tournaments.services.scrimmages import ScrimmageRequest, scrimmage_create
from tournaments.services.users import (
    user_change_email,
    user_change_password,
    user_confirm_email,
    user_request_email_confirmation,
    user_request_password_reset,
    user_revoke_token,
    user_sign_up,
)

SIGN_IN_URL = "dashboard:signin"
# The secret of a bot just registered or rotated waits here for one page view, then is gone.
SECRET_SESSION_KEY = "onboarding_secret"
STARTER_PORT = 8001
# The value the confirmation form of a rotation posts (dashboard/my_bot_rotate.html).
ROTATE_CONFIRMATION = "rotate"

mine = login_required(login_url=SIGN_IN_URL)


def _throttle_wait(request: HttpRequest, scope: str) -> int | None:
    """Count one write against the API's throttle of ``scope``; seconds to wait when over it.

    The pages share the API's counters (per user, or per address when signed out), so a page
    is no way around the API's limits.
    """
    throttle = WriteRateThrottle()
    if throttle.allow_request(request, SimpleNamespace(throttle_scope=scope)):
        return None
    return retry_after_seconds(throttle.wait())


def _too_many(wait: int) -> HttpResponse:
    """A plain 429 for a write from a button (no form to show again)."""
    response = HttpResponse(too_many_message(TooMany.THROTTLED, wait), status=429)
    response["Retry-After"] = str(wait)
    return response


def _over_write_limit(request: HttpRequest) -> HttpResponse | None:
    """A plain 429 when a write from a button is over the limit."""
    wait = _throttle_wait(request, "writes")
    return None if wait is None else _too_many(wait)


def _no_lockout() -> int | None:
    return None


def _next_param(request: HttpRequest) -> str:
    return request.POST.get("next") or request.GET.get("next") or ""


def _next_url(request: HttpRequest) -> str:
    """Where to go after signing in: a local ``next`` if one was given, else "My bots"."""
    target = _next_param(request)
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return reverse("dashboard:my-bots")


def _submitted(
    request: HttpRequest,
    make_form: Callable[[QueryDict | None], Any],
    *,
    scope: str,
    act: Callable[[Any], HttpResponse],
    template: str,
    context: Callable[[], dict[str, Any]],
    locked_out: Callable[[], int | None] = _no_lockout,
    mails: bool = False,
) -> HttpResponse:
    """The one way a page's form is sent: a GET shows it; a POST counts against the throttle
    of ``scope`` (429), and when it ``mails`` a link also against the mail throttles (429),
    then a valid form is acted on (its response), and a refusal by the
    service or the form shows the form again with its errors (400), unless ``locked_out``
    then gives seconds to wait (429).

    A 429 shows the form empty, its input never validated: validating a sign-in checks the
    password, and the page would tell a right guess from a wrong one.
    """

    def page(form: Any, status: int, **extra: str) -> HttpResponse:
        return render(request, template, {"form": form, **context(), **extra}, status=status)

    def too_many(wait: int, reason: TooMany) -> HttpResponse:
        response = page(make_form(None), 429, refusal=too_many_message(reason, wait))
        response["Retry-After"] = str(wait)
        return response

    if request.method != "POST":
        return page(make_form(None), 200)
    wait = _throttle_wait(request, scope)
    if wait is None and mails:
        wait = mail_wait(request)
    if wait is not None:
        return too_many(wait, TooMany.THROTTLED)
    form = make_form(request.POST)
    if form.is_valid():
        try:
            return act(form)
        except TooManyRequestsError as error:
            response = page(make_form(None), 429, refusal=error.message)
            response["Retry-After"] = str(error.retry_after)
            return response
        except ApplicationError as error:
            form.add_service_error(error)
    if (wait := locked_out()) is not None:
        return too_many(wait, TooMany.LOCKED_OUT)
    return page(form, 400)


def _signing_page(
    request: HttpRequest,
    make_form: Callable[[QueryDict | None], Any],
    *,
    act: Callable[[Any], HttpResponse],
    template: str,
    locked_out: Callable[[], int | None] = _no_lockout,
) -> HttpResponse:
    """Signing up or in: throttled as "auth", carrying where to go next."""
    return _submitted(
        request,
        make_form,
        scope="auth",
        act=act,
        template=template,
        context=lambda: {"next": _next_param(request)},
        locked_out=locked_out,
    )


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    """Create an account, sign in with it and go to "My bots"."""

    def signed_up(form: SignUpForm) -> HttpResponse:
        user, _token = user_sign_up(
            **form.cleaned_data, domain=request.get_host(), use_https=request.is_secure()
        )
        if user.email:
            messages.info(request, f"A link to confirm {user.email} is on its way.")
        login(request, user)
        return redirect(_next_url(request))

    return _signing_page(request, SignUpForm, act=signed_up, template="dashboard/sign_up.html")


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def sign_in(request: HttpRequest) -> HttpResponse:
    """Sign in with a username and password; 429 while the address or the account is over
    its limit."""

    def enter(form: AuthenticationForm) -> HttpResponse:
        login(request, form.get_user())
        return redirect(_next_url(request))

    def locked_out() -> int | None:
        # The authentication backend refused the attempt unchecked (tournaments/lockout.py).
        wait = sign_in_lockout(str(request.POST.get("username", "")))
        return None if wait is None else retry_after_seconds(wait)

    return _signing_page(
        request,
        lambda data: AuthenticationForm(request, data=data),
        act=enter,
        template="dashboard/sign_in.html",
        locked_out=locked_out,
    )


@require_POST
def sign_out(request: HttpRequest) -> HttpResponse:
    """Sign out and go home."""
    logout(request)
    return redirect("dashboard:home")


@never_cache
@mine
@require_safe
def account(request: HttpRequest) -> HttpResponse:
    """The signed-in account: its email address and whether it is confirmed, its API token,
    and where to change the address and the password."""
    user = signed_in(request.user)
    context = {"token": user_api_token(user=user), "email_confirmed": is_email_confirmed(user)}
    return render(request, "dashboard/account.html", context)


@never_cache
@mine
@require_http_methods(["GET", "HEAD", "POST"])
def account_email(request: HttpRequest) -> HttpResponse:
    """Change the email address, given the password; a link to confirm the new one is mailed.

    Throttled as "auth" (the form checks the password) and as a mail.
    """

    def changed(form: EmailChangeForm) -> HttpResponse:
        user = user_change_email(
            user=signed_in(request.user),
            **form.cleaned_data,
            domain=request.get_host(),
            use_https=request.is_secure(),
        )
        if user.email and not is_email_confirmed(user):
            messages.success(request, f"A link to confirm {user.email} is on its way.")
        return redirect("dashboard:account")

    return _submitted(
        request,
        EmailChangeForm,
        scope="auth",
        act=changed,
        template="dashboard/account_email.html",
        context=dict,
        mails=True,
    )


@mine
@require_POST
def account_email_resend(request: HttpRequest) -> HttpResponse:
    """Mail the confirmation link again."""
    wait = _throttle_wait(request, "writes") or mail_wait(request)
    if wait is not None:
        return _too_many(wait)
    user = signed_in(request.user)
    try:
        user_request_email_confirmation(
            user=user, domain=request.get_host(), use_https=request.is_secure()
        )
    except ApplicationError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"A new link to confirm {user.email} is on its way.")
    return redirect("dashboard:account")


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def confirm_email(request: HttpRequest, key: str) -> HttpResponse:
    """The page of a mailed link: a button confirms the address (a GET changes nothing, so a
    mail scanner that fetches links confirms nothing)."""
    if request.method != "POST":
        return render(request, "dashboard/confirm_email.html", {"key": key})
    wait = _throttle_wait(request, "auth")
    if wait is not None:
        return _too_many(wait)
    try:
        user = user_confirm_email(key=key)
    except ApplicationError as error:
        context = {"key": key, "refusal": error.message}
        return render(request, "dashboard/confirm_email.html", context, status=400)
    return render(request, "dashboard/confirm_email.html", {"confirmed": user})


@never_cache
@mine
@require_http_methods(["GET", "HEAD", "POST"])
def account_password(request: HttpRequest) -> HttpResponse:
    """Change the password, given the current one; the API token ends with the old password.

    Throttled as "auth": the form would otherwise let a borrowed session guess the password.
    """

    def changed(form: PasswordChangeForm) -> HttpResponse:
        data = form.cleaned_data
        user = signed_in(request.user)
        user_change_password(
            user=user, old_password=data["old_password"], new_password=data["new_password"]
        )
        update_session_auth_hash(request, user)  # this session stays; the others end
        messages.success(request, "Your password is changed and your API token revoked.")
        return redirect("dashboard:account")

    return _submitted(
        request,
        PasswordChangeForm,
        scope="auth",
        act=changed,
        template="dashboard/account_password.html",
        context=dict,
    )


@mine
@require_POST
def account_revoke_token(request: HttpRequest) -> HttpResponse:
    """Delete the API token; the next sign-in through the API issues a new one."""
    if refused := _over_write_limit(request):
        return refused
    if user_revoke_token(user=signed_in(request.user)):
        messages.success(request, "Your API token is revoked: requests with it are refused.")
    return redirect("dashboard:account")


class PasswordReset(PasswordResetView):
    """Ask for a reset link by email. The answer is the same whether an account has the address
    or not, and so is the work done before it (the service leaves the lookup to a worker)."""

    template_name = "dashboard/password_reset.html"
    success_url = reverse_lazy("dashboard:password-reset-sent")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        wait = _throttle_wait(request, "auth")
        if wait is None:
            return super().post(request, *args, **kwargs)
        form = self.get_form()
        form.add_error(None, too_many_message(TooMany.THROTTLED, wait))
        response = self.render_to_response(self.get_context_data(form=form), status=429)
        response["Retry-After"] = str(wait)
        return response

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        user_request_password_reset(
            email=form.cleaned_data["email"],
            domain=self.request.get_host(),
            use_https=self.request.is_secure(),
        )
        return redirect(self.get_success_url())


password_reset = PasswordReset.as_view()
password_reset_sent = PasswordResetDoneView.as_view(
    template_name="dashboard/password_reset_sent.html",
    extra_context={"timeout_hours": settings.PASSWORD_RESET_TIMEOUT // 3600},
)
password_reset_confirm = PasswordResetConfirmView.as_view(
    template_name="dashboard/password_reset_confirm.html",
    form_class=ResetPasswordForm,
    success_url=reverse_lazy("dashboard:password-reset-complete"),
)
password_reset_complete = PasswordResetCompleteView.as_view(
    template_name="dashboard/password_reset_complete.html"
)


def _owned_bot(request: HttpRequest, bot_id: int) -> Bot:
    """The signed-in user's bot, or 404: another owner's bot is not even confirmed to exist."""
    bot = bots_of_owner(owner=request.user).filter(pk=bot_id).first()
    if bot is None:
        raise Http404(f"You have no bot {bot_id}.")
    return bot


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

    return _submitted(
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
    bot = _owned_bot(request, bot_id)
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
            ScrimmageRow(s, _scrimmage_status(s))
            for s in scrimmages_of(user=request.user).filter(bot=bot)[:5]
        ],
        "faced": scrimmages_faced(bot=bot),
    }
    return render(request, "dashboard/my_bot.html", context)


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


def _scrimmage_status(scrimmage: Any) -> str:
    """The status of a scrimmage read with its progress counts (``scrimmages_of``)."""
    return scrimmage_status(
        match_count=scrimmage.match_count, ended=scrimmage.ended, started=scrimmage.started
    )


@mine
@require_POST
def my_bot_scrimmages(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Let other owners choose the bot as a scrimmage opponent, or stop letting them."""
    bot = _owned_bot(request, bot_id)
    if refused := _over_write_limit(request):
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
    bot = _owned_bot(request, bot_id)
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

    return _submitted(
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
    status = _scrimmage_status(scrimmage)
    context = {
        "scrimmage": scrimmage,
        "status": status,
        "live": status != "finished",
        "matches": matches,
        "opponents": [entry.bot for entry in scrimmage.opponent_entries.all()],
        "api_url": f"/api/scrimmages/{scrimmage.pk}/",
    }
    return render(request, "dashboard/my_scrimmage.html", context)


@never_cache
@mine
@require_http_methods(["GET", "HEAD", "POST"])
def my_bot_rotate(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Ask to confirm, then give the bot a new signing secret, shown once on its page.

    A POST without the confirmation (an old form, a stray click) shows the question again.
    """
    bot = _owned_bot(request, bot_id)
    confirmed = request.method == "POST" and request.POST.get("confirm") == ROTATE_CONFIRMATION
    if not confirmed:
        status = 400 if request.method == "POST" else 200
        context = {"bot": bot, "confirmation": ROTATE_CONFIRMATION}
        return render(request, "dashboard/my_bot_rotate.html", context, status=status)
    if refused := _over_write_limit(request):
        return refused
    return _show_secret_once(request, bot, bot_rotate_secret(bot=bot))


@mine
@require_POST
def my_bot_verify(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Queue a ``hello`` check; the bot's page shows it pending, then its result."""
    bot = _owned_bot(request, bot_id)
    if refused := _over_write_limit(request):
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
    bot = _owned_bot(request, bot_id)
    if refused := _over_write_limit(request):
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


@require_safe
def write_bot(request: HttpRequest) -> HttpResponse:
    """How to write a bot: the first steps in order, the starter bot, the checker, the protocol."""
    context = {
        "starter": protocol_doc.starter_bot_source("starter_bot.py"),
        "starter_js": protocol_doc.starter_bot_source("starter_bot.js"),
        "protocol": protocol_doc.protocol_html(),
        "schemas": protocol_doc.schema_names(),
        "loopback_allowed": settings.BOT_ALLOW_LOOPBACK,
        "port": STARTER_PORT,
    }
    return render(request, "dashboard/write_bot.html", context)


@require_safe
def rules(request: HttpRequest) -> HttpResponse:
    """The rules the engine plays, for bot authors."""
    return render(request, "dashboard/rules.html", {"rules": protocol_doc.rules_html()})


def _download(name: str) -> FileResponse:
    starter = protocol_doc.STARTER_BOTS[name]
    return FileResponse(
        starter.path.open("rb"),
        as_attachment=True,
        filename=name,
        content_type=f"{starter.content_type}; charset=utf-8",
    )


@require_safe
def starter_bot(request: HttpRequest) -> FileResponse:
    """Download the Python starter bot."""
    return _download("starter_bot.py")


@require_safe
def starter_bot_js(request: HttpRequest) -> FileResponse:
    """Download the JavaScript starter bot."""
    return _download("starter_bot.js")


@require_safe
def protocol_schema(request: HttpRequest, name: str) -> FileResponse:
    """Download one of the protocol's JSON Schemas."""
    if name not in protocol_doc.schema_names():
        raise Http404(f"No schema {name}.")
    return FileResponse(
        (protocol_doc.SCHEMAS / name).open("rb"), content_type="application/schema+json"
    )
