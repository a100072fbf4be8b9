"""The deployment's bot network policy, built from settings over the arena's rules."""

from __future__ import annotations

from django.conf import settings

from arena.netpolicy import EndpointRefused, NetworkPolicy, check_url

MAX_URL_LENGTH = NetworkPolicy().max_url_length

__all__ = ["MAX_URL_LENGTH", "EndpointRefused", "bot_network_policy", "check_endpoint_url"]


def bot_network_policy() -> NetworkPolicy:
    """Return the policy the settings give: BOT_ALLOW_LOOPBACK and BOT_ALLOWED_NETWORKS."""
    return NetworkPolicy.from_settings(
        allow_loopback=settings.BOT_ALLOW_LOOPBACK,
        allowed_networks=settings.BOT_ALLOWED_NETWORKS,
    )


def check_endpoint_url(url: str) -> str:
    """Vet a bot endpoint URL and every address it resolves to; return it stripped."""
    return check_url(url, bot_network_policy())
