"""The platform's services: Celery wiring, the shared cache, the bot network policy settings."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.core.cache import cache

from config import celery_app
from tournaments.netpolicy import bot_network_policy


def test_celery_is_wired_for_at_least_once_delivery() -> None:
    conf = celery_app.conf
    assert celery_app.main == "ohhell"
    assert conf.task_acks_late is True and conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.broker_transport_options["visibility_timeout"] >= 60


def test_tasks_go_to_redis_when_it_is_configured_and_run_in_process_otherwise() -> None:
    if settings.REDIS_URL:
        assert celery_app.conf.task_always_eager is False
        with celery_app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1)
            assert connection.connected
    else:  # the tests ask for in-process tasks without Redis (tests/support/eager.py)
        assert settings.CELERY_EAGER is True
        assert celery_app.conf.task_always_eager is True
        assert celery_app.conf.broker_url == "memory://"


def test_the_cache_is_shared_through_redis_when_configured() -> None:
    from django.core.cache import caches

    backend = type(caches["default"]).__name__
    assert backend == ("RedisCache" if settings.REDIS_URL else "LocMemCache")
    cache.set("ping", "pong", 5)
    assert cache.get("ping") == "pong"


def test_the_network_policy_follows_the_settings(settings) -> None:
    assert not bot_network_policy().is_allowed("127.0.0.1")
    settings.BOT_ALLOW_LOOPBACK = True
    settings.BOT_ALLOWED_NETWORKS = [ipaddress.ip_network("10.9.0.0/16")]
    policy = bot_network_policy()
    assert policy.is_allowed("127.0.0.1") and policy.is_allowed("10.9.1.1")
    assert not policy.is_allowed("10.8.1.1") and not policy.is_allowed("169.254.169.254")
