"""Account pages: signing up, in and out, the email address and its confirmation, the password
and its reset by mail, and the API token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout, update_session_auth_hash
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.contrib.auth.views import (
    PasswordResetCompleteView,
    PasswordResetConfirmView,
    PasswordResetDoneView,
    PasswordResetView,
)
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from tournaments.api.throttling import TooMany, mail_wait, retry_after_seconds, too_many_message
from tournaments.dashboard.author_pages import (
    mine,
    no_lockout,
    over_write_limit,
    submitted,
    throttle_wait,
    too_many_response,
)
from tournaments.dashboard.forms import (
    EmailChangeForm,
    PasswordChangeForm,
    ResetPasswordForm,
    SignUpForm,
)
from tournaments.errors import ApplicationError
from tournaments.lockout import sign_in_lockout
from tournaments.models import is_email_confirmed, signed_in
from tournaments.selectors.users import user_api_token
from tournaments.services.users import (
    user_change_email,
    user_change_password,
    user_confirm_email,
    user_request_email_confirmation,
    user_request_password_reset,
    user_revoke_token,
    user_sign_up,
)


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


def _signing_page(
    request: HttpRequest,
    make_form: Callable[[QueryDict | None], Any],
    *,
    act: Callable[[Any], HttpResponse],
    template: str,
    locked_out: Callable[[], int | None] = no_lockout,
) -> HttpResponse:
    """Signing up or in: throttled as "auth", carrying where to go next."""
    return submitted(
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

    return submitted(
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
    wait = throttle_wait(request, "writes") or mail_wait(request)
    if wait is not None:
        return too_many_response(wait)
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
    wait = throttle_wait(request, "auth")
    if wait is not None:
        return too_many_response(wait)
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

    return submitted(
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
    if refused := over_write_limit(request):
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
        wait = throttle_wait(request, "auth")
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
