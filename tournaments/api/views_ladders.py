"""Ladder endpoints: list and show the always-on ladders; staff switch one on, pause, resume."""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from tournaments.api.permissions import IsStaffOrReadOnly
from tournaments.api.serializers.ladders import LadderInput, LadderOutput
from tournaments.models import Ladder
from tournaments.selectors.ladders import ladder_list
from tournaments.services.ladders import ladder_create, ladder_pause, ladder_resume


class LadderViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Always-on ladders, one per variant. Anyone may browse; staff control them."""

    serializer_class = LadderOutput
    permission_classes = [IsStaffOrReadOnly]
    lookup_value_regex = r"[0-9]+"
    ordering_fields = ["created_at", "status"]
    ordering = ["created_at", "id"]
    filterset_fields = ["status"]
    throttle_scope = "writes"

    def get_queryset(self) -> QuerySet[Ladder]:
        return ladder_list()

    def _detail(self, pk: int, *, status_code: int = status.HTTP_200_OK) -> Response:
        return Response(LadderOutput(ladder_list().get(pk=pk)).data, status=status_code)

    @extend_schema(request=LadderInput, responses={201: LadderOutput})
    def create(self, request: Request) -> Response:
        """Switch a variant's ladder on (staff); 409 when it already has one."""
        data = LadderInput(data=request.data)
        data.is_valid(raise_exception=True)
        ladder = ladder_create(**data.validated_data)
        return self._detail(ladder.pk, status_code=status.HTTP_201_CREATED)

    def _control(self, service: Callable[..., Ladder]) -> Response:
        return self._detail(service(ladder=self.get_object()).pk)

    @extend_schema(request=None, responses=LadderOutput)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        """Pause the ladder (staff; 409 unless running): no new tables, queued ones wait."""
        return self._control(ladder_pause)

    @extend_schema(request=None, responses=LadderOutput)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """Resume a paused ladder (staff; 409 unless paused)."""
        return self._control(ladder_resume)
