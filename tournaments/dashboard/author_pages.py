"""What every page of a bot author's shares: signing in, the API's write throttles, the one way
a form is sent, and the user's own bot.

Every write goes through the services (tournaments/services/), which hold the rules; the pages
only turn forms into service calls and refusals into errors beside the field at fault.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render

from tournaments.api.throttling import (
    TooMany,
    WriteRateThrottle,
    mail_wait,
    retry_after_seconds,
    too_many_message,
)
from tournaments.errors import ApplicationError, TooManyRequestsError
from tournaments.models import Bot
from tournaments.selectors.bots import bots_of_owner

SIGN_IN_URL = "dashboard:signin"

mine = login_required(login_url=SIGN_IN_URL)


def throttle_wait(request: HttpRequest, scope: str) -> int | None:
    """Count one write against the API's throttle of ``scope``; seconds to wait when over it.

    The pages share the API's counters (per user, or per address when signed out), so a page
    is no way around the API's limits.
    """
    throttle = WriteRateThrottle()
    if throttle.allow_request(request, SimpleNamespace(throttle_scope=scope)):
        return None
    return retry_after_seconds(throttle.wait())


def too_many_response(wait: int) -> HttpResponse:
    """A plain 429 for a write from a button (no form to show again)."""
    response = HttpResponse(too_many_message(TooMany.THROTTLED, wait), status=429)
    response["Retry-After"] = str(wait)
    return response


def over_write_limit(request: HttpRequest) -> HttpResponse | None:
    """A plain 429 when a write from a button is over the limit."""
    wait = throttle_wait(request, "writes")
    return None if wait is None else too_many_response(wait)


def no_lockout() -> int | None:
    return None


def submitted(
    request: HttpRequest,
    make_form: Callable[[QueryDict | None], Any],
    *,
    scope: str,
    act: Callable[[Any], HttpResponse],
    template: str,
    context: Callable[[], dict[str, Any]],
    locked_out: Callable[[], int | None] = no_lockout,
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
    wait = throttle_wait(request, scope)
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


def owned_bot(request: HttpRequest, bot_id: int) -> Bot:
    """The signed-in user's bot, or 404: another owner's bot is not even confirmed to exist."""
    bot = bots_of_owner(owner=request.user).filter(pk=bot_id).first()
    if bot is None:
        raise Http404(f"You have no bot {bot_id}.")
    return bot
