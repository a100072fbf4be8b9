"""Scrimmage endpoints: an owner asks for unrated matches of their bot, lists, follows and
cancels them."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from tournaments.api.serializers.scrimmages import (
    ScrimmageDetailOutput,
    ScrimmageInput,
    ScrimmageOutput,
)
from tournaments.models import Scrimmage, signed_in
from tournaments.selectors.scrimmages import scrimmage_visible, scrimmages_of
from tournaments.services.scrimmages import ScrimmageRequest, scrimmage_cancel, scrimmage_create


class ScrimmageViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Scrimmages: unrated practice matches; each is its owner's (and staff's) to see only."""

    permission_classes = [IsAuthenticated]
    lookup_value_regex = r"[0-9]+"
    throttle_scope = "writes"
    ordering_fields = ["created_at", "id"]
    ordering = ["-created_at", "-id"]

    def get_queryset(self) -> QuerySet[Scrimmage]:
        return scrimmages_of(user=self.request.user)

    def get_serializer_class(self):
        return ScrimmageDetailOutput if self.action == "retrieve" else ScrimmageOutput

    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        """One of your scrimmages (staff: anyone's) with its matches and their results."""
        scrimmage = scrimmage_visible(user=request.user, scrimmage_id=int(pk or 0))
        if scrimmage is None:
            raise exceptions.NotFound(f"You have no scrimmage {pk}.")
        context = self.get_serializer_context()
        return Response(ScrimmageDetailOutput(scrimmage, context=context).data)

    @extend_schema(
        request=ScrimmageInput,
        responses={
            202: ScrimmageDetailOutput,
            400: OpenApiResponse(description="a field refused, named in the error"),
            429: OpenApiResponse(description="the day's SCRIMMAGE_MATCHES_PER_DAY used up"),
        },
    )
    def create(self, request: Request) -> Response:
        """Ask for a scrimmage: 202 with it queued; poll its ``url`` (also ``Location``) until
        its ``status`` is ``finished``. Past the day's quota: 429 with ``Retry-After``."""
        data = ScrimmageInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        made = scrimmage_create(
            owner=signed_in(request.user),
            request=ScrimmageRequest(
                bot_id=fields["bot"],
                variant=fields["variant"],
                matches=fields["matches"],
                opponent_ids=fields["opponents"],
                reference_players=fields["reference_players"],
                seed=fields["seed"],
                time_limit_ms=fields["time_limit_ms"],
                time_bank_ms=fields["time_bank_ms"],
            ),
        )
        scrimmage = scrimmage_visible(user=request.user, scrimmage_id=made.pk)
        location = reverse("scrimmage-detail", kwargs={"pk": made.pk}, request=request)
        return Response(
            ScrimmageDetailOutput(scrimmage, context=self.get_serializer_context()).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": location},
        )

    @extend_schema(
        request=None,
        responses={
            200: ScrimmageDetailOutput,
            404: OpenApiResponse(description="not a scrimmage of yours"),
            409: OpenApiResponse(description="every match has ended, or it is cancelled already"),
        },
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """Cancel one of your scrimmages: its queued matches are never played and a running one
        is cut where it waits. 409 once every match has ended."""
        scrimmage = scrimmage_visible(user=request.user, scrimmage_id=int(pk or 0))
        if scrimmage is None:
            raise exceptions.NotFound(f"You have no scrimmage {pk}.")
        scrimmage_cancel(scrimmage=scrimmage, by=signed_in(request.user))
        fresh = scrimmage_visible(user=request.user, scrimmage_id=scrimmage.pk)
        return Response(ScrimmageDetailOutput(fresh, context=self.get_serializer_context()).data)
