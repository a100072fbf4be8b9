"""Accounts: sign up, get or revoke a token, show who is signed in, change and confirm the email
address."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from tournaments.api.serializers.auth import (
    EmailChangeInput,
    EmailConfirmInput,
    SignUpInput,
    TokenInput,
    TokenOutput,
    UserOutput,
)
from tournaments.api.throttling import (
    MAIL_THROTTLES,
    AccountLockedOut,
    DownloadRateThrottle,
    WriteRateThrottle,
)
from tournaments.errors import ApplicationError
from tournaments.lockout import sign_in_lockout
from tournaments.models import signed_in
from tournaments.services.users import (
    user_change_email,
    user_confirm_email,
    user_request_email_confirmation,
    user_revoke_token,
    user_sign_up,
    user_token,
)
from tournaments.usernames import normalised


class SignUpView(APIView):
    """Create an account; the answer carries an API token."""

    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_scope = "auth"

    @extend_schema(request=SignUpInput, responses={201: TokenOutput})
    def post(self, request: Request) -> Response:
        data = SignUpInput(data=request.data)
        data.is_valid(raise_exception=True)
        user, token = user_sign_up(
            **data.validated_data, domain=request.get_host(), use_https=request.is_secure()
        )
        return Response({"token": token, "username": user.username}, status=status.HTTP_201_CREATED)


class TokenView(APIView):
    """Exchange a username and password for the account's API token.

    Throttled per address (``auth``) and, through the authentication backend, per account.
    """

    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_scope = "auth"

    @extend_schema(request=TokenInput, responses=TokenOutput)
    def post(self, request: Request) -> Response:
        data = TokenInput(data=request.data)
        data.is_valid(raise_exception=True)
        credentials = dict(data.validated_data)
        # Names are stored in NFKC, as the sign-in page's form normalises them too.
        credentials["username"] = normalised(credentials["username"])
        user = authenticate(request, **credentials)
        if user is None:
            if (wait := sign_in_lockout(data.validated_data["username"])) is not None:
                raise AccountLockedOut(wait)
            raise ApplicationError("Wrong username or password.", code="authentication_failed")
        return Response({"token": user_token(user=user), "username": user.username})


class TokenRevokeView(APIView):
    """Delete the caller's API token: it is refused from now on; signing in issues a new one."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        user_revoke_token(user=signed_in(request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    """The signed-in account."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=UserOutput)
    def get(self, request: Request) -> Response:
        return Response(UserOutput(request.user).data)


# Writes that mail a link count against the ``email`` rate per account and per client address,
# besides the usual write throttles.
MAILING_THROTTLES: list[type[BaseThrottle]] = [
    WriteRateThrottle,
    DownloadRateThrottle,
    *MAIL_THROTTLES,
]


class EmailChangeView(APIView):
    """Change the account's email address, given its password; a link to confirm the new one
    is mailed, and until it is followed the account's bots stay off the ladders."""

    permission_classes = [IsAuthenticated]
    throttle_classes = MAILING_THROTTLES
    throttle_scope = "auth"

    @extend_schema(request=EmailChangeInput, responses={202: UserOutput})
    def post(self, request: Request) -> Response:
        data = EmailChangeInput(data=request.data)
        data.is_valid(raise_exception=True)
        user = user_change_email(
            user=signed_in(request.user),
            **data.validated_data,
            domain=request.get_host(),
            use_https=request.is_secure(),
        )
        return Response(UserOutput(user).data, status=status.HTTP_202_ACCEPTED)


class EmailResendView(APIView):
    """Mail the link that confirms the account's address again; poll ``/api/auth/me/`` for
    ``email_confirmed``."""

    permission_classes = [IsAuthenticated]
    throttle_classes = MAILING_THROTTLES
    throttle_scope = "writes"

    @extend_schema(request=None, responses={202: UserOutput})
    def post(self, request: Request) -> Response:
        user = signed_in(request.user)
        user_request_email_confirmation(
            user=user, domain=request.get_host(), use_https=request.is_secure()
        )
        return Response(UserOutput(user).data, status=status.HTTP_202_ACCEPTED)


class EmailConfirmView(APIView):
    """Confirm an email address with the key of its mailed link (the last part of its path);
    no sign-in needed: the key names the account."""

    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_scope = "auth"

    @extend_schema(request=EmailConfirmInput, responses=UserOutput)
    def post(self, request: Request) -> Response:
        data = EmailConfirmInput(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(UserOutput(user_confirm_email(key=data.validated_data["key"])).data)
