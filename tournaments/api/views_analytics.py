"""A bot's analytics: what explains its rating, from public data only."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.serializers.analytics import (
    BotAnalyticsAnswer,
    BotAnalyticsOutput,
    BotAnalyticsQuery,
    NoAnalyticsAnswer,
    PlayedVariantOutput,
)
from tournaments.models import Bot, Variant
from tournaments.selectors.analytics import bot_analytics, played_variants
from tournaments.selectors.variants import MAX_ID


class BotAnalyticsView(APIView):
    """A bot's analytics in one variant: exact bids and points by hand size and by place
    relative to the dealer, results against each opponent, faults over time, and the rating
    with its uncertainty over its rated matches."""

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "variant",
                {"type": "string", "minLength": 1},
                description="the variant (name or id); by default the one it played most",
            )
        ],
        responses=PolymorphicProxySerializer(
            component_name="BotAnalyticsAnswerOrNone",
            serializers=[BotAnalyticsAnswer, NoAnalyticsAnswer],
            resource_type_field_name=None,
        ),
    )
    def get(self, request: Request, pk: int) -> Response:
        """The analytics, and the variants the bot has finished matches in."""
        if pk > MAX_ID:
            get_object_or_404(Bot.objects.none(), pk=pk)
        get_object_or_404(Bot.objects.only("pk"), pk=pk)
        query = BotAnalyticsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        played = played_variants(bot_id=pk)
        variant: Variant | None = query.validated_data["variant"]
        body = {"variants": PlayedVariantOutput(played, many=True).data}
        if variant is not None:
            chosen = (variant.pk, variant.name)
        elif played:
            chosen = (played[0].variant_id, played[0].name)
        else:
            return Response({"bot": pk, "variant": None, **body})
        analytics = bot_analytics(bot_id=pk, variant_id=chosen[0], variant_name=chosen[1])
        return Response({**BotAnalyticsOutput(analytics).data, **body})
