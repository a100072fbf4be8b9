"""Accounts: sign up, get or revoke a token, show who is signed in."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.serializers.auth import SignUpInput, TokenInput, TokenOutput, UserOutput
from tournaments.api.throttling import AccountLockedOut
from tournaments.errors import ApplicationError
from tournaments.lockout import sign_in_lockout
from tournaments.models import signed_in
from tournaments.services.users import user_revoke_token, user_sign_up, user_token
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
        user, token = user_sign_up(**data.validated_data)
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
