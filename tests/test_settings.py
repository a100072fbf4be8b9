"""Settings come from the environment; a bad value stops start-up naming the variable."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env
from tests.support.workers import embedded_env, local_worker, wait_for

ROOT = Path(__file__).resolve().parent.parent
CLEAN = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(
        (
            "DATABASE_URL",
            "REDIS_URL",
            "CACHE_URL",
            "SECRET_KEY",
            "DEBUG",
            "BOT_",
            "DJANGO_",
            "OHHELL_",
            "CELERY_EAGER",
            "ARENA_",
        )
    )
}


def start(**variables: str) -> subprocess.CompletedProcess:
    """Load the settings in a fresh process, as any entry point would."""
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**CLEAN, "DJANGO_SETTINGS_MODULE": "config.settings", **variables},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DEBUG", "maybe"),
        ("DB_CONN_MAX_AGE", "forever"),
        ("DB_CONN_MAX_AGE", "-1"),
        ("DATABASE_URL", "mysql://db/ohhell"),
        ("DATABASE_URL", "postgres://db"),
        ("REDIS_URL", "http://localhost:6379"),
        ("REDIS_URL", "redis://localhost:99999/0"),
        ("CACHE_URL", "memcached://localhost:11211"),
        ("ARENA_NETWORK_CHECK_URL", "tcp://health.example.org:80"),
        ("ARENA_NETWORK_CHECK_URL", "https://health.example.org:port/"),
        ("ARENA_NETWORK_CHECK_TIMEOUT_MS", "0"),
        ("ARENA_OUTAGE_WAIT_SECONDS", "-1"),
        ("ARENA_OUTAGE_WAIT_SECONDS", "nan"),
        ("BOT_ALLOW_LOOPBACK", "2"),
        ("BOT_ALLOWED_NETWORKS", "10.0.0.0/8,not-a-network"),
        ("BOT_MAX_RESPONSE_BYTES", "12kb"),
        ("BOT_DEFAULT_TIME_LIMIT_MS", "0"),
        ("THROTTLE_WRITE_RATE", "lots"),
        ("TRUSTED_PROXIES", "yes"),
        ("TRUSTED_PROXIES", "-1"),
        ("TRUSTED_PROXIES", "21"),
        ("TRUSTED_PROXIES", "1.5"),
        ("TRUSTED_PROXIES", "127.0.0.1/32,10.0.0.0/33"),
        ("TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal"),
        ("AUTH_LOCKOUT_FAILURES", "0"),
        ("AUTH_LOCKOUT_SECONDS", "15m"),
        ("MAX_REQUEST_BYTES", "1e6"),
        ("LOG_LEVEL", "loud"),
        ("DB_POOL_MAX_SIZE", "-1"),
        ("DB_POOL_MAX_SIZE", "ten"),
        ("THROTTLE_DOWNLOAD_RATE", "30 a minute"),
        ("TOURNAMENT_MATCHES_IN_FLIGHT", "0"),
        ("CHECKS_IN_FLIGHT_PER_OWNER", "0"),
        ("CHECK_REQUESTS_PER_HOUR", "lots"),
        ("REFUSAL_GRACE_DAYS", "-1"),
        ("RANK_INTERVALS_SECONDS", "5"),
        ("RANK_INTERVALS_RESAMPLES", "many"),
        ("RANK_INTERVALS_MAX_MATCHES", "9"),
        ("RANK_INTERVALS_MIN_MATCHES", "0"),
        ("COLLUSION_SECONDS", "5"),
        ("COLLUSION_MIN_REPEAT", "1"),
        ("COLLUSION_MIN_TABLES", "1"),
        ("COLLUSION_FALSE_DISCOVERY_RATE", "0.9"),
        ("COLLUSION_FALSE_DISCOVERY_RATE", "nan"),
        ("BOTS_PER_ACCOUNT_MAX", "-3"),
        ("LADDER_MAX_BOTS_PER_OWNER", "0"),
        ("LADDER_MAX_TABLES_PER_OWNER", "two"),
        ("SCRIMMAGE_MATCHES_PER_DAY", "-1"),
        ("SCRIMMAGE_MAX_MATCHES", "0"),
        ("EMAIL_BACKEND", "pigeon"),
        ("EMAIL_PORT", "70000"),
        ("EMAIL_CONFIRMATION_SECONDS", "60"),
        ("EMAIL_CONFIRMATION_SECONDS", "a week"),
        ("THROTTLE_EMAIL_RATE", "5 an hour"),
        ("HTTPS", "sometimes"),
    ],
)
def test_start_up_with_a_bad_setting_fails_naming_the_variable(name, value) -> None:
    result = start(**{name: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert f"{name}=" in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "context"),
    [
        # Read only on PostgreSQL, with the pool on; the settings load without connecting.
        ("DB_POOL_TIMEOUT", "0", {"DATABASE_URL": "postgres://db/ohhell"}),
        # Read only when the site is served over HTTPS.
        ("HSTS_SECONDS", "a year", {"HTTPS": "1"}),
    ],
)
def test_a_bad_setting_read_only_in_some_deployments_fails_there_naming_it(
    name, value, context
) -> None:
    result = start(**context, **{name: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert f"{name}=" in result.stderr


def test_start_up_without_a_secret_key_is_refused_when_debug_is_off() -> None:
    result = start(DEBUG="0", DATABASE_URL="sqlite:///var/settings-test.sqlite3")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_loading_the_settings_on_embedded_defaults_prints_nothing() -> None:
    # mypy, management commands and tests load them too; only a server says what it runs on.
    result = start()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert result.stderr == ""


def embedded_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "running on embedded defaults" in line]


def test_the_wsgi_application_says_once_that_it_runs_on_embedded_defaults() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import config.wsgi"],
        cwd=ROOT,
        env=CLEAN,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    [line] = embedded_lines(result.stderr)
    assert "SQLite at var/db.sqlite3" in line and "a local Celery worker" in line


def test_a_celery_worker_says_once_as_it_starts_that_it_runs_on_embedded_defaults(tmp_path) -> None:
    log = tmp_path / "worker.log"
    # At INFO the worker logs "ready." once it takes tasks, after its start-up signals.
    with local_worker(embedded_env(tmp_path / "db.sqlite3"), log, "--loglevel", "INFO") as worker:
        wait_for(lambda: "ready." in log.read_text() or worker.poll() is not None, 120, "ready")
        assert worker.poll() is None, log.read_text()[-3000:]
    [line] = embedded_lines(log.read_text())
    assert "a local Celery worker, its broker in a SQLite file" in line


def where_tasks_run(**variables: str) -> subprocess.CompletedProcess:
    """Whether tasks run in-process and the broker, as a fresh process sees them."""
    code = (
        "import django; django.setup(); from config.celery_app import app; "
        "print(app.conf.task_always_eager, app.conf.broker_url)"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**CLEAN, "DJANGO_SETTINGS_MODULE": "config.settings", **variables},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_on_embedded_defaults_tasks_go_to_a_local_broker_not_into_web_requests(tmp_path) -> None:
    result = where_tasks_run(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert result.returncode == 0, result.stderr
    # A SQLite file of its own next to the database's: no server, and no message half-written.
    assert result.stdout.split() == ["False", f"sqla+sqlite:///{tmp_path / 'db.celery.sqlite3'}"]


def test_tasks_run_in_process_only_when_asked_for(tmp_path) -> None:
    result = where_tasks_run(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", CELERY_EAGER="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "memory://"]


def test_start_up_without_redis_is_refused_when_debug_is_off(tmp_path) -> None:
    secret = "x" * 50
    database = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    result = start(DEBUG="0", SECRET_KEY=secret, DATABASE_URL=database)
    assert result.returncode != 0
    assert "REDIS_URL must be set when DEBUG is off" in result.stderr
    assert "CELERY_EAGER=1" in result.stderr
    allowed = start(DEBUG="0", SECRET_KEY=secret, DATABASE_URL=database, CELERY_EAGER="1")
    assert allowed.returncode == 0, allowed.stderr


def test_with_everything_set_it_starts_quietly() -> None:
    result = start(
        DEBUG="off",
        SECRET_KEY="x" * 50,
        DATABASE_URL="postgres://u:p@db.internal:5433/ohhell",
        REDIS_URL="redis://cache.internal:6379/1",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
    assert "embedded" not in result.stderr


def _broker_and_cache(**variables: str) -> list[str]:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "from config.celery_app import app; "
        "print(app.conf.broker_url, settings.CACHES['default']['LOCATION'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**CLEAN, "DJANGO_SETTINGS_MODULE": "config.settings", **variables},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_the_cache_has_a_redis_of_its_own_when_cache_url_names_one() -> None:
    broker, cache = "redis://broker.internal:6379/0", "redis://cache.internal:6379/0"
    secret = "x" * 50
    database = "postgres://u:p@db.internal:5433/ohhell"
    common = {"DEBUG": "0", "SECRET_KEY": secret, "DATABASE_URL": database, "REDIS_URL": broker}
    assert _broker_and_cache(**common, CACHE_URL=cache) == [broker, cache]
    assert _broker_and_cache(**common) == [broker, broker]


def test_a_postgres_url_is_split_into_django_database_settings() -> None:
    db = env.parse_database_url(
        "DATABASE_URL", "postgres://us%40r:p%2Fw@db:5433/oh%20hell?sslmode=require"
    )
    assert (db.engine, db.name, db.user, db.password, db.host, db.port) == (
        "django.db.backends.postgresql",
        "oh hell",
        "us@r",
        "p/w",
        "db",
        "5433",
    )
    assert db.options == {"sslmode": "require"}


def test_a_sqlite_url_may_be_relative_or_absolute() -> None:
    assert env.parse_database_url("X", "sqlite:///var/db.sqlite3").name == "var/db.sqlite3"
    assert env.parse_database_url("X", "sqlite:////tmp/db.sqlite3").name == "/tmp/db.sqlite3"


@pytest.mark.parametrize(
    ("reader", "value", "expected"),
    [
        (lambda: env.env_bool("V", False), "YES", True),
        (lambda: env.env_bool("V", True), "off", False),
        (lambda: env.env_int("V", 1), " 42 ", 42),
        (lambda: env.env_list("V"), "a, b,,c", ["a", "b", "c"]),
        (
            lambda: [str(n) for n in env.env_networks("V")],
            "10.1.2.3/8,::1",
            ["10.0.0.0/8", "::1/128"],
        ),
        (lambda: env.env_rate("V", "1/s"), "60/minute", "60/minute"),
        (lambda: env.env_trusted_proxies("V"), " 2 ", env.TrustedProxies(count=2)),
        (
            lambda: [str(n) for n in env.env_trusted_proxies("V").networks],
            "127.0.0.1/32, 10.0.0.0/8,fd00::/8",
            ["127.0.0.1/32", "10.0.0.0/8", "fd00::/8"],
        ),
        (lambda: env.env_trusted_proxies("V").count, "127.0.0.1/32", 0),
    ],
)
def test_the_readers_parse_good_values(monkeypatch, reader, value, expected) -> None:
    monkeypatch.setenv("V", value)
    assert reader() == expected


def test_an_unset_or_empty_variable_takes_the_default(monkeypatch) -> None:
    monkeypatch.setenv("V", "")
    assert env.env_int("V", 7) == 7 and env.env_bool("V", True) is True
    assert env.env_trusted_proxies("V") == env.TrustedProxies()
    monkeypatch.delenv("V")
    assert env.env_str("V", "d") == "d" and env.env_list("V", ["x"]) == ["x"]


def test_a_bounded_integer_out_of_range_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("V", "5")
    with pytest.raises(ImproperlyConfigured, match="V='5'"):
        env.env_int("V", 1, minimum=10)


def test_every_variable_the_settings_read_is_documented() -> None:
    source = (ROOT / "config" / "settings.py").read_text()
    variables = set(re.findall(r"(?:env_\w+|is_set)\(\s*\"([A-Z_]+)\"", source))
    example = (ROOT / "docker" / ".env.example").read_text()
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert len(variables) > 15
    assert {v for v in variables if not re.search(rf"^{v}=", example, re.M)} == set()
    assert {v for v in variables if f"| `{v}` |" not in operations} == set()


@pytest.mark.parametrize(
    "name",
    [
        "RATING_VERSION_SIGMA",
        "RECOMPUTE_STALE_SECONDS",
        "RECOMPUTE_MAX_ATTEMPTS",
        "LEADERBOARD_CACHE_SECONDS",
    ],
)
def test_the_documented_defaults_of_rating_settings_are_the_settings_defaults(name) -> None:
    from django.conf import settings

    assert name not in os.environ  # the settings hold their defaults
    example = (ROOT / "docker" / ".env.example").read_text()
    operations = (ROOT / "docs" / "operations.md").read_text()
    (in_example,) = re.findall(rf"^{name}=(.*)$", example, re.M)
    (in_operations,) = re.findall(rf"^\| `{name}` \| `([^`]*)` \|", operations, re.M)
    default = getattr(settings, name)
    assert type(default)(in_example) == default
    assert type(default)(in_operations) == default


def _documented_production_settings(tmp_path: Path) -> dict[str, str]:
    """docker/.env.example as docs/operations.md tells a deployment to use it: with its own
    SECRET_KEY; the database and files of this test instead of the compose file's."""
    example = (ROOT / "docker" / ".env.example").read_text()
    variables = dict(re.findall(r"^([A-Z_]+)=(.*)$", example, re.M))
    return {
        **variables,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "STATIC_ROOT": str(tmp_path / "static"),
    }


def test_the_documented_production_settings_pass_djangos_deployment_checks(tmp_path) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "DEBUG"],
        cwd=ROOT,
        env={**CLEAN, **_documented_production_settings(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
    assert "WARNING" not in result.stderr, result.stderr


def served_headers(path: str, *, secure: bool, **variables: str) -> dict[str, object]:
    """Status and security headers of ``path``, as a fresh process with ``variables`` serves it."""
    code = (
        "import django, json, sys; django.setup(); from django.test import Client; "
        f"r = Client().get({path!r}, secure={secure!r}); "
        "print(json.dumps({'status': r.status_code, 'location': r.get('Location'), "
        "'hsts': r.get('Strict-Transport-Security'), 'csp': r.get('Content-Security-Policy')}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**CLEAN, "DJANGO_SETTINGS_MODULE": "config.settings", **variables},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_over_https_browsers_are_told_to_keep_to_https(tmp_path) -> None:
    deployment = {
        **_documented_production_settings(tmp_path),
        "ALLOWED_HOSTS": "testserver",
        "CELERY_EAGER": "1",
    }
    page = served_headers("/write-a-bot/rules/", secure=True, **deployment)
    assert page["status"] == 200
    assert page["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert "default-src 'self'" in str(page["csp"])
    plain = served_headers("/write-a-bot/rules/", secure=False, **deployment)
    assert (plain["status"], plain["location"]) == (301, "https://testserver/write-a-bot/rules/")
    assert plain["hsts"] is None
    probe = served_headers("/api/health/", secure=False, **deployment)
    assert probe["status"] == 200 and probe["hsts"] is None


def test_without_https_no_hsts_is_sent_and_nothing_is_redirected(tmp_path) -> None:
    deployment = {
        **_documented_production_settings(tmp_path),
        "ALLOWED_HOSTS": "testserver",
        "CELERY_EAGER": "1",
        "HTTPS": "0",
    }
    for secure in (True, False):
        page = served_headers("/write-a-bot/rules/", secure=secure, **deployment)
        assert page["status"] == 200 and page["hsts"] is None
        assert "default-src 'self'" in str(page["csp"])
