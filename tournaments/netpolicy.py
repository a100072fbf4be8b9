"""The deployment's bot network policy and call limits, built from settings over the arena's."""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings

from arena.limits import Limits
from arena.netpolicy import EndpointRefused, NetworkPolicy, check_url

MAX_URL_LENGTH = NetworkPolicy().max_url_length

__all__ = [
    "MAX_URL_LENGTH",
    "EndpointRefused",
    "bot_limits",
    "bot_network_policy",
    "check_endpoint_url",
]


def bot_network_policy() -> NetworkPolicy:
    """Return the policy the settings give: BOT_ALLOW_LOOPBACK and BOT_ALLOWED_NETWORKS."""
    return NetworkPolicy.from_settings(
        allow_loopback=settings.BOT_ALLOW_LOOPBACK,
        allowed_networks=settings.BOT_ALLOWED_NETWORKS,
    )


def check_endpoint_url(url: str) -> str:
    """Vet a bot endpoint URL and every address it resolves to; return it stripped.

    A refusal that only loopback is to blame for says which setting allows it.
    """
    policy = bot_network_policy()
    try:
        return check_url(url, policy)
    except EndpointRefused as refused:
        if policy.allow_loopback:
            raise
        try:
            check_url(url, replace(policy, allow_loopback=True))
        except EndpointRefused:
            raise refused from None
        raise EndpointRefused(
            f"{refused}; this server refuses loopback endpoints unless BOT_ALLOW_LOOPBACK=1 is "
            "set (./run and ./run serve set it on embedded defaults, to try a bot locally)"
        ) from None


def bot_limits(time_limit_ms: int | None = None) -> Limits:
    """The limits on calls to bots: a match's time control, the deployment's size and hello caps."""
    return Limits(
        time_limit_ms=time_limit_ms or settings.BOT_DEFAULT_TIME_LIMIT_MS,
        max_response_bytes=settings.BOT_MAX_RESPONSE_BYTES,
        hello_time_limit_ms=settings.BOT_HELLO_TIMEOUT_MS,
    )
