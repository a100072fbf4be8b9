"""Ladder endpoints: list and show the always-on ladders; staff switch one on, pause, resume."""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import Count, Q, QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from tournaments.api.serializers import StrictBooleanField
from tournaments.api.serializers_competitions import StrictIntegerField, VariantRefField
from tournaments.models import Ladder, MatchStatus
from tournaments.services.ladders import ladder_create, ladder_pause, ladder_resume


class IsStaffOrReadOnly(permissions.BasePermission):
    """Anyone may read; only staff switch ladders on, pause and resume them."""

    message = "Only staff may change ladders."

    def has_permission(self, request, view) -> bool:
        return request.method in permissions.SAFE_METHODS or bool(request.user.is_staff)


class LadderInput(serializers.Serializer):
    variant = VariantRefField()
    table_size = StrictIntegerField(min_value=3, max_value=8, default=4)
    time_limit_ms = StrictIntegerField(min_value=10, max_value=120_000, required=False)
    duplicate = StrictBooleanField(
        default=True, help_text="play each table's deals once per seat rotation, rated as one"
    )


class LadderOutput(serializers.ModelSerializer):
    variant = serializers.CharField(source="variant.name")
    matches_in_flight = serializers.IntegerField(help_text="ladder matches queued or playing")
    matches_finished = serializers.IntegerField()

    class Meta:
        model = Ladder
        fields = [
            "id",
            "variant",
            "status",
            "table_size",
            "time_limit_ms",
            "duplicate",
            "matches_in_flight",
            "matches_finished",
            "created_at",
            "updated_at",
        ]


def ladder_list() -> QuerySet[Ladder]:
    """Ladders with their variant and counts of matches in flight and finished."""
    return Ladder.objects.select_related("variant").annotate(
        matches_in_flight=Count(
            "matches", filter=Q(matches__status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING])
        ),
        matches_finished=Count("matches", filter=Q(matches__status=MatchStatus.FINISHED)),
    )


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
