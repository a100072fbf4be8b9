"""Bot endpoints: register, list, show, change, delete, rotate the secret, verify."""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from tournaments.api.filters import BotFilter
from tournaments.api.permissions import IsOwnerOrReadOnly
from tournaments.api.serializers.bots import (
    BotInput,
    BotNewVersionInput,
    BotOutput,
    BotWithSecretOutput,
    HealthCheckOutput,
)
from tournaments.models import Bot, sees_bot_privately, signed_in
from tournaments.selectors.bots import bot_health_check, bot_health_checks, bot_list
from tournaments.services.bots import (
    bot_delete,
    bot_new_version,
    bot_register,
    bot_rotate_secret,
    bot_update,
    bot_verify_request,
)
from tournaments.services.ladders import bot_set_ladder_opt_in


class BotViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Bots. Anyone may browse; signed-in users register bots; only the owner changes one."""

    serializer_class = BotOutput
    permission_classes = [IsAuthenticatedOrReadOnly, IsOwnerOrReadOnly]
    filterset_class = BotFilter
    ordering_fields = ["name", "created_at", "status", "last_verified_at"]
    ordering = ["name"]
    throttle_scope = "writes"

    def get_queryset(self) -> QuerySet[Bot]:
        return bot_list()

    def _output(self, bot: Bot, *, status_code: int = 200, secret: str | None = None) -> Response:
        context = {**self.get_serializer_context(), "secret": secret}
        serializer = (BotWithSecretOutput if secret else BotOutput)(bot, context=context)
        return Response(serializer.data, status=status_code)

    @extend_schema(request=BotInput, responses={201: BotWithSecretOutput})
    def create(self, request: Request) -> Response:
        """Register a bot; the answer carries its signing secret, shown this once."""
        data = BotInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        opt_in = fields.pop("ladder_opt_in", None)
        with transaction.atomic():
            bot, secret = bot_register(owner=signed_in(request.user), **fields)
            if opt_in is not None:
                bot = bot_set_ladder_opt_in(bot=bot, enabled=opt_in)
        return self._output(bot, status_code=status.HTTP_201_CREATED, secret=secret)

    @extend_schema(request=BotInput, responses=BotOutput)
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        """Change a bot's name, endpoint, description or ladder opt-in (owner only)."""
        bot = self.get_object()
        data = BotInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        opt_in = fields.pop("ladder_opt_in", None)
        with transaction.atomic():
            bot = bot_update(bot=bot, data=fields)
            if opt_in is not None:
                bot = bot_set_ladder_opt_in(bot=bot, enabled=opt_in)
        return self._output(bot)

    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Delete a bot that has not played (owner only)."""
        bot_delete(bot=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=BotWithSecretOutput)
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, pk: str | None = None) -> Response:
        """Replace the signing secret (owner only); the answer carries the new one, once."""
        bot = self.get_object()
        return self._output(bot, secret=bot_rotate_secret(bot=bot))

    @extend_schema(request=BotNewVersionInput, responses=BotOutput)
    @action(detail=True, methods=["post"], url_path="new-version")
    def new_version(self, request: Request, pk: str | None = None) -> Response:
        """Mark a new version (owner only), optionally at a new endpoint: the ratings keep mu
        and their sigma is raised to RATING_VERSION_SIGMA; past matches stay."""
        bot = self.get_object()
        data = BotNewVersionInput(data=request.data)
        data.is_valid(raise_exception=True)
        return self._output(bot_new_version(bot=bot, **data.validated_data))

    @extend_schema(request=None, responses={202: HealthCheckOutput})
    @action(detail=True, methods=["post"])
    def verify(self, request: Request, pk: str | None = None) -> Response:
        """Queue a call of the bot's ``hello`` (owner only); answers the pending check at once.

        Poll the check at the ``Location`` given until its ``status`` is no longer ``pending``.
        """
        bot = self.get_object()
        check = bot_verify_request(bot=bot)
        location = reverse(
            "bot-health-check", kwargs={"pk": bot.pk, "check_id": check.pk}, request=request
        )
        return Response(
            HealthCheckOutput(check, context={"private": True}).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": location},
        )

    @extend_schema(responses=HealthCheckOutput)
    @action(
        detail=True,
        methods=["get"],
        url_path=r"health-checks/(?P<check_id>[0-9]+)",
        url_name="health-check",
    )
    def health_check(self, request: Request, check_id: str, pk: str | None = None) -> Response:
        """One health check of the bot, e.g. the one a verification queued."""
        bot = self.get_object()
        check = bot_health_check(bot=bot, check_id=int(check_id))
        if check is None:
            raise exceptions.NotFound(f"Bot {pk} has no health check {check_id}.")
        private = sees_bot_privately(request.user, bot.owner_id)
        return Response(HealthCheckOutput(check, context={"private": private}).data)

    @extend_schema(responses=HealthCheckOutput(many=True))
    @action(detail=True, methods=["get"], url_path="health-checks", pagination_class=None)
    def health_checks(self, request: Request, pk: str | None = None) -> Response:
        """The bot's latest health checks, newest first."""
        bot = self.get_object()
        private = sees_bot_privately(request.user, bot.owner_id)
        checks = bot_health_checks(bot=bot)
        return Response(HealthCheckOutput(checks, many=True, context={"private": private}).data)
