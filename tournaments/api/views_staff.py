"""Staff-only reads: what the platform watches for and shows nobody else."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.serializers.collusion import CollusionOutput, CollusionQuery
from tournaments.selectors.collusion import (
    collusion_bot_flags,
    collusion_flags,
    collusion_scan,
)


class CollusionView(APIView):
    """The pairs of bots and the bots the variant's latest collusion scan flagged, with their
    evidence."""

    # Checked before the query is read: nobody but staff learns even which variants exist here.
    permission_classes = [permissions.IsAdminUser]

    @extend_schema(
        parameters=[
            OpenApiParameter("variant", str, required=True, description="the variant's name or id")
        ],
        responses=CollusionOutput,
    )
    def get(self, request: Request) -> Response:
        """The latest scan and its flags, strongest evidence first; null and empty before one."""
        query = CollusionQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        variant_id = query.validated_data["variant"]
        body = {
            "scan": collusion_scan(variant_id=variant_id),
            "flags": list(collusion_flags(variant_id=variant_id)),
            "bot_flags": list(collusion_bot_flags(variant_id=variant_id)),
        }
        return Response(CollusionOutput(body).data)
