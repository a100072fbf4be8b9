"""Variant endpoints: list presets and custom variants, show the rules, create one."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from tournaments.api.filters import VariantFilter
from tournaments.api.permissions import IsOrganiserOrReadOnly
from tournaments.api.serializers.variants import VariantDetailOutput, VariantInput, VariantOutput
from tournaments.models import Variant, signed_in
from tournaments.selectors.variants import variant_list
from tournaments.services.variants import variant_create


class VariantViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Variants: the engine's presets and custom variants built from them."""

    permission_classes = [IsOrganiserOrReadOnly]
    filterset_class = VariantFilter
    ordering_fields = ["name", "created_at", "is_preset"]
    ordering = ["-is_preset", "name"]
    lookup_field = "name"
    lookup_value_regex = r"[a-z0-9][a-z0-9-]*"
    throttle_scope = "writes"

    def get_queryset(self) -> QuerySet[Variant]:
        return variant_list()

    def get_serializer_class(self):
        return VariantDetailOutput if self.action == "retrieve" else VariantOutput

    @extend_schema(request=VariantInput, responses={201: VariantDetailOutput})
    def create(self, request: Request) -> Response:
        """Create a custom variant from a preset and option overrides (staff or organisers)."""
        data = VariantInput(data=request.data)
        data.is_valid(raise_exception=True)
        variant = variant_create(user=signed_in(request.user), **data.validated_data)
        output = VariantDetailOutput(variant, context=self.get_serializer_context())
        return Response(output.data, status=status.HTTP_201_CREATED)
