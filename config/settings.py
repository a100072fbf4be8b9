"""Django settings, read from the environment.

With nothing set, the project runs on embedded defaults (SQLite under var/, Celery tasks run
in-process, a development secret key) and a server says so in one line when it starts
(config/startup.py). A deployment sets
DATABASE_URL, REDIS_URL, SECRET_KEY, DEBUG=0 and, behind HTTPS, HTTPS=1; every variable is listed in
docs/operations.md and in docker/.env.example.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from config.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_networks,
    env_rate,
    env_str,
    env_trusted_proxies,
    env_url,
    is_set,
    parse_database_url,
)
from config.logs import LogFormat

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

# Core
DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY")
_embedded: list[str] = []
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "django-insecure-development-key-not-for-production-use"
    _embedded.append("a development SECRET_KEY")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
if env_bool("USE_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Who the client is: the connection's address, unless reverse proxies are named here, by their
# number or their networks; then X-Forwarded-For is read from the right, past the proxies
# (tournaments/client_address.py). Every throttle, lockout and log takes the address from there.
TRUSTED_PROXIES = env_trusted_proxies("TRUSTED_PROXIES")
# HTTPS: the site is served to browsers over HTTPS only (by itself or a TLS proxy in front).
# Then plain HTTP is redirected (but for the health check, which probes from inside), cookies are
# secure-only and browsers are told to come back over HTTPS only (HSTS) for HSTS_SECONDS. HSTS is
# never sent over plain HTTP, nor without HTTPS: it would lock browsers out of an HTTP site.
HTTPS = env_bool("HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", HTTPS or not DEBUG)
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^api/health/$"]
SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 31536000, minimum=0) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD", True)
# Every page may load scripts, styles, images, fonts and data from this server only: no inline
# script or style, nothing from another site, no framing. The pages under /api/ may also have
# inline styles (tournaments/api/middleware.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "tournaments",
]

MIDDLEWARE = [
    "tournaments.api.middleware.RequestContextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "tournaments.api.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "tournaments.api.middleware.RequestSizeLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# Database: persistent connections, because opening one per request costs most of the time
# of a small API request on PostgreSQL (see bench/bench_api.py).
DATABASE_URL = env_url(
    "DATABASE_URL", "sqlite:///var/db.sqlite3", schemes=("postgres", "postgresql", "sqlite")
)
_db = parse_database_url("DATABASE_URL", DATABASE_URL)
if not is_set("DATABASE_URL"):
    VAR_DIR.mkdir(exist_ok=True)
    _db = parse_database_url("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}")
    _embedded.append("SQLite at var/db.sqlite3")
_db_options: dict[str, object] = dict(_db.options or {})
if _db.engine.endswith("sqlite3"):
    # The web server, the local worker and beat share the file: readers do not block the
    # writer (WAL), a writer waits for another rather than failing at once, and a transaction
    # takes its write lock when it begins, so two never deadlock upgrading a read lock.
    _db_options = {
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL",
        "transaction_mode": "IMMEDIATE",
    }
    # A rating history index carries extra columns on PostgreSQL (index-only pages of a bot's
    # history, tournaments/models/ratings.py); SQLite builds it on its key columns alone.
    SILENCED_SYSTEM_CHECKS = ["models.W040"]
# PostgreSQL connections are pooled per process (Django's psycopg pool): Celery closes a
# worker's connections before and after every task, and a match's heartbeat runs on a thread of
# its own, so without a pool each match opened several new connections. Pooled, a closed
# connection goes back to the pool, and a process holds at most DB_POOL_MAX_SIZE, however many
# matches it plays (a match hands its connection back while it waits on bots). 0 turns pooling
# off; DB_CONN_MAX_AGE then keeps each thread's connection instead.
DB_POOL_MAX_SIZE = env_int("DB_POOL_MAX_SIZE", 10, minimum=0, maximum=1000)
_conn_max_age = env_int("DB_CONN_MAX_AGE", 600, minimum=0)
if _db.engine.endswith("postgresql") and DB_POOL_MAX_SIZE:
    # CONN_HEALTH_CHECKS below has the pool check each connection as it is handed out, so one
    # the server dropped while it sat in the pool is replaced, not used.
    _db_options["pool"] = {
        "min_size": 1,
        "max_size": DB_POOL_MAX_SIZE,
        # Waiting longer than this for a free connection is an error, not a hang.
        "timeout": env_int("DB_POOL_TIMEOUT", 30, minimum=1, maximum=3600),
    }
    _conn_max_age = 0  # the pool keeps connections; Django refuses both at once
DATABASES = {
    "default": {
        "ENGINE": _db.engine,
        "NAME": _db.name if _db.engine.endswith("postgresql") else str(BASE_DIR / _db.name),
        "USER": _db.user,
        "PASSWORD": _db.password,
        "HOST": _db.host,
        "PORT": _db.port,
        "OPTIONS": _db_options,
        "CONN_MAX_AGE": _conn_max_age,
        "CONN_HEALTH_CHECKS": True,
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: Celery broker and result backend (REDIS_URL), and the shared cache (CACHE_URL, by
# default the same server): throttle counts, lockouts and cached pages across processes. The
# broker's messages must never be evicted, while the cache must be bounded (anonymous reads
# fill it), so a deployment gives the cache a Redis of its own with maxmemory and an LRU
# policy (docker/compose.yaml, docs/operations.md "Redis: broker and cache").
REDIS_URL = env_url("REDIS_URL", "", schemes=("redis", "rediss"))
CACHE_URL = env_url("CACHE_URL", REDIS_URL, schemes=("redis", "rediss"))
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            # A request never hangs on an unreachable cache: it fails fast and degrades.
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Where tasks run. With REDIS_URL, on Celery workers through Redis. Without it, in development
# (DEBUG on), on a local worker and beat that ./run starts next to the web server, through a
# broker kept in a SQLite file next to the database (kombu's SQLAlchemy transport: no server;
# each message is written in one transaction, so a worker never reads one half-written).
# CELERY_EAGER=1 runs every task inside the process that sends it (the tests on SQLite); a
# deployment without Redis must ask for that explicitly, because web requests then wait on
# whole tournaments.
CELERY_EAGER = env_bool("CELERY_EAGER", False)
CELERY_RESULT_BACKEND = REDIS_URL or None
# Seconds before a task not acknowledged is delivered again (Redis).
_visibility = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=60)}
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object]
if REDIS_URL and not CELERY_EAGER:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {**_visibility}
elif CELERY_EAGER:
    CELERY_BROKER_URL = "memory://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {**_visibility}
    _embedded.append("in-process tasks (CELERY_EAGER=1)")
elif DEBUG:
    # Next to the SQLite file, so each database has its own broker. The web server, the worker
    # and beat all write to it: every connection waits up to a minute for another's write
    # rather than fail at once (the transport passes these options to SQLAlchemy's
    # create_engine, so no other may be set here). migrate declares the queues, puts the file
    # in WAL mode and has delivered messages dropped (config/celery_app.py).
    BROKER_DATABASE = (
        Path(str(DATABASES["default"]["NAME"])).with_suffix(".celery.sqlite3")
        if _db.engine.endswith("sqlite3")
        else VAR_DIR / "celery.sqlite3"
    )
    BROKER_DATABASE.parent.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = f"sqla+sqlite:///{BROKER_DATABASE}"
    CELERY_BROKER_TRANSPORT_OPTIONS = {"connect_args": {"timeout": 60}}
    _embedded.append("a local Celery worker, its broker in a SQLite file next to the database")
else:
    raise ImproperlyConfigured(
        "REDIS_URL must be set when DEBUG is off: workers take their tasks from Redis. "
        "(CELERY_EAGER=1 runs tasks inside web requests instead; for tests only.)"
    )
CELERY_TASK_ALWAYS_EAGER = CELERY_EAGER
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Ride out a broker outage: connect at start-up however long the broker takes, reconnect for
# ever after losing it; a running match is finished (its claim token guards the result) rather
# than cancelled when the connection drops.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Workers of one deployment share a queue name; tests give theirs a private one. Five queues,
# so a big tournament's backlog of matches, or the making of its fixtures, never holds up
# control work (a next round, ratings, a verification, a ladder top-up) or the ladders, and
# owners' scrimmages never hold up either: "<name>" for control tasks, "<name>.matches" for
# tournament matches, "<name>.ladder" for ladder matches, "<name>.scrimmage" for scrimmage
# matches, "<name>.bulk" for making a starting tournament's matches. The three match queues
# hold match messages only: the sweeper counts them against the matches waiting to re-send lost
# ones (tournaments/services/sweeps.py). A worker started without -Q consumes all five;
# TASK_QUEUE_KINDS routes tasks to them (config/celery_app.py).
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "ohhell")
TASK_QUEUE_KINDS = {
    "tournaments.run_match": "matches",
    "tournaments.run_ladder_match": "ladder",
    # Owners' unrated practice: its own workers, never in front of ladders or tournaments.
    "tournaments.run_scrimmage_match": "scrimmage",
    "tournaments.generate_tournament": "bulk",
    # A batch fit holds its worker for seconds: never in front of top-ups and rating writes.
    "tournaments.fit_rank_intervals": "bulk",
    "tournaments.scan_collusion": "bulk",
}
CELERY_TASK_QUEUES = [
    Queue(name)
    for name in (
        CELERY_TASK_DEFAULT_QUEUE,
        *sorted({f"{CELERY_TASK_DEFAULT_QUEUE}.{kind}" for kind in TASK_QUEUE_KINDS.values()}),
    )
]
CELERY_TASK_ROUTES = ("config.celery_app.route_task",)
CELERY_TASK_SERIALIZER = CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_EXPIRES = 3600
CELERY_TIMEZONE = "UTC"

# Matches and ratings: when a silent worker is presumed dead, when a queued match whose queue
# holds fewer messages than matches waiting is sent again (its message lost), and how many
# rated matches make a rating more than provisional.
MATCH_STALE_SECONDS = env_int("MATCH_STALE_SECONDS", 60, minimum=15)
MATCH_RESEND_SECONDS = env_int("MATCH_RESEND_SECONDS", 60, minimum=10)
MATCH_MAX_ATTEMPTS = env_int("MATCH_MAX_ATTEMPTS", 3, minimum=1, maximum=20)
# The final write of a played match is tried this many times across dropped connections,
# waiting MATCH_RECORD_BACKOFF_SECONDS, then twice that, and so on, between tries; then the
# outcome is handed to the tournaments.record_outcome task (tried until the database is back).
MATCH_RECORD_TRIES = env_int("MATCH_RECORD_TRIES", 5, minimum=1, maximum=20)
MATCH_RECORD_BACKOFF_SECONDS = env_float(
    "MATCH_RECORD_BACKOFF_SECONDS", 0.5, minimum=0.0, maximum=60.0
)
# A worker process plays its matches on one event loop (tournaments/services/hosting.py): at
# most MATCH_HOST_CAPACITY at once, a match waiting on its bots costing a coroutine, not a
# thread; their outcomes are written by MATCH_RECORD_THREADS threads, so the process's database
# connections do not grow with its matches in flight.
MATCH_HOST_CAPACITY = env_int("MATCH_HOST_CAPACITY", 256, minimum=1, maximum=100_000)
MATCH_RECORD_THREADS = env_int("MATCH_RECORD_THREADS", 2, minimum=1, maximum=64)
RATING_PROVISIONAL_MATCHES = env_int("RATING_PROVISIONAL_MATCHES", 10, minimum=0)
# A new version of a bot keeps its mu and raises sigma to at least this (the default is half
# the initial 25/3), so the new version is placed again quickly.
# Seconds a leaderboard page may be served from the cache; a rating write of the variant
# replaces it at once, so this only bounds how long a renamed bot's old name shows. 0: off.
LEADERBOARD_CACHE_SECONDS = env_int("LEADERBOARD_CACHE_SECONDS", 60, minimum=0, maximum=3600)
# Seconds a bot's analytics (its page and /api/bots/<id>/analytics/) may come from the cache;
# recording or rating one of its matches replaces them at once. 0: off.
BOT_ANALYTICS_CACHE_SECONDS = env_int("BOT_ANALYTICS_CACHE_SECONDS", 300, minimum=0, maximum=86400)
# A cached leaderboard page younger than this is still served after a rating write, so a busy
# ladder rebuilds each page at most once per this many seconds (tournaments/api/page_cache.py).
LEADERBOARD_STALE_SECONDS = env_int("LEADERBOARD_STALE_SECONDS", 2, minimum=0, maximum=60)
RATING_VERSION_SIGMA = env_float("RATING_VERSION_SIGMA", 4.0, minimum=0.1, maximum=50.0)
# A recompute whose worker has not beaten for this long is queued again, up to this many tries.
RECOMPUTE_STALE_SECONDS = env_int("RECOMPUTE_STALE_SECONDS", 60, minimum=15)
RECOMPUTE_MAX_ATTEMPTS = env_int("RECOMPUTE_MAX_ATTEMPTS", 3, minimum=1, maximum=20)
# Ranks with intervals beside the live ratings (tournaments/services/rank_intervals.py): every
# RANK_INTERVALS_SECONDS, each variant with rated matches not yet fitted has its latest
# RANK_INTERVALS_MAX_MATCHES rated matches fitted at once and refitted on
# RANK_INTERVALS_RESAMPLES resamples; the cost grows with the product of the two. A bot with
# fewer than RANK_INTERVALS_MIN_MATCHES of those matches is ranked without an interval.
RANK_INTERVALS_SECONDS = env_int("RANK_INTERVALS_SECONDS", 600, minimum=10)
RANK_INTERVALS_MAX_MATCHES = env_int("RANK_INTERVALS_MAX_MATCHES", 1000, minimum=10, maximum=100000)
RANK_INTERVALS_RESAMPLES = env_int("RANK_INTERVALS_RESAMPLES", 200, minimum=20, maximum=10000)
RANK_INTERVALS_MIN_MATCHES = env_int("RANK_INTERVALS_MIN_MATCHES", 10, minimum=1)
# Collusion scans (tournaments/services/collusion.py): every COLLUSION_SECONDS, each variant with
# rated matches not yet scanned has its running sums read, every pair of bots with
# COLLUSION_MIN_TABLES tables of three or more together (and as many apart) is tested, every bot
# against its table-mates of COLLUSION_MIN_REPEAT tables or more, and a pair or bot whose
# Benjamini-Hochberg adjusted p-value is at most COLLUSION_FALSE_DISCOVERY_RATE is flagged for
# staff (bench/bench_collusion.py chose them).
COLLUSION_SECONDS = env_int("COLLUSION_SECONDS", 3600, minimum=10)
COLLUSION_MIN_REPEAT = env_int("COLLUSION_MIN_REPEAT", 2, minimum=2, maximum=100000)
COLLUSION_MIN_TABLES = env_int("COLLUSION_MIN_TABLES", 20, minimum=2, maximum=100000)
COLLUSION_FALSE_DISCOVERY_RATE = env_float(
    "COLLUSION_FALSE_DISCOVERY_RATE", 0.01, minimum=0.0001, maximum=0.5
)
HEALTH_CHECK_SECONDS = env_int("HEALTH_CHECK_SECONDS", 300, minimum=10)
HEALTH_FAILURES_TO_DISABLE = env_int("HEALTH_FAILURES_TO_DISABLE", 3, minimum=1)
# A bot's first match in this many days in which it refused every request is left out of its
# rating (a secret gone wrong); each further one within them ranks it last, as a disqualified
# seat (tournaments/services/outcomes.py). 0: every such match ranks it last.
REFUSAL_GRACE_DAYS = env_int("REFUSAL_GRACE_DAYS", 30, minimum=0, maximum=3650)
# Always-on ladders: tables each keeps queued or playing at once (a duplicate group counts once,
# as it plays one rotation at a time), so a ladder never floods its queue.
LADDER_MATCHES_IN_FLIGHT = env_int("LADDER_MATCHES_IN_FLIGHT", 4, minimum=1, maximum=1000)
# What one account may hold of the ladders: bots opted in (a further opt-in is refused), and
# tables of one ladder queued or playing with one of its bots, so one owner's many fast bots
# cannot take the ladder's tables from everyone else.
LADDER_MAX_BOTS_PER_OWNER = env_int("LADDER_MAX_BOTS_PER_OWNER", 3, minimum=1, maximum=1000)
LADDER_MAX_TABLES_PER_OWNER = env_int("LADDER_MAX_TABLES_PER_OWNER", 2, minimum=1, maximum=1000)
# A top-up hands the matchmaker this many of the free bots furthest behind their share (or four
# times the seats it wants, if more), read in SQL, so its cost does not grow with the field.
LADDER_SLATE_BOTS = env_int("LADDER_SLATE_BOTS", 256, minimum=16, maximum=100_000)
# Tournaments: matches each keeps sent to the workers and not yet ended; the rest wait unsent
# and are sent as these end. One tournament's share of the matches queue stays bounded, and a
# cancelled one leaves at most this many messages in front of other tournaments' matches.
TOURNAMENT_MATCHES_IN_FLIGHT = env_int("TOURNAMENT_MATCHES_IN_FLIGHT", 64, minimum=1, maximum=10000)
# Scrimmages (an owner's unrated practice): matches one account may ask for in a UTC day (staff
# too), and in one scrimmage.
SCRIMMAGE_MATCHES_PER_DAY = env_int("SCRIMMAGE_MATCHES_PER_DAY", 50, minimum=0, maximum=100000)
SCRIMMAGE_MAX_MATCHES = env_int("SCRIMMAGE_MAX_MATCHES", 10, minimum=1, maximum=1000)
# An account's scrimmage matches playing at once, so one account's slow matches never hold the
# lane; one with a match playing yields its second place while an account with less lane time
# in the last SCRIMMAGE_SHARE_WINDOW_SECONDS waits (tournaments/services/scrimmage_lane.py).
SCRIMMAGE_OWNER_MATCHES_IN_FLIGHT = env_int(
    "SCRIMMAGE_OWNER_MATCHES_IN_FLIGHT", 2, minimum=1, maximum=100
)
SCRIMMAGE_SHARE_WINDOW_SECONDS = env_int(
    "SCRIMMAGE_SHARE_WINDOW_SECONDS", 3600, minimum=60, maximum=7 * 86400
)

# How often beat sweeps and reconciles: gives back matches of dead workers, re-sends lost ones,
# starts due tournaments, moves on tournaments a lost message left behind. Ratings of matches
# no message rated come every second sweep; ladders are topped up twice a sweep.
SWEEP_SECONDS = env_int("SWEEP_SECONDS", 30, minimum=1, maximum=3600)
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    "sweep-matches": {"task": "tournaments.sweep_matches", "schedule": float(SWEEP_SECONDS)},
    "start-due-tournaments": {
        "task": "tournaments.start_due_tournaments",
        "schedule": float(SWEEP_SECONDS),
    },
    # Tournaments a lost message left starting, or running with all their matches ended.
    "reconcile-tournaments": {
        "task": "tournaments.reconcile_tournaments",
        "schedule": float(SWEEP_SECONDS),
    },
    "rate-finished-matches": {
        "task": "tournaments.rate_finished_matches",
        "schedule": 2.0 * SWEEP_SECONDS,
    },
    # Every finished ladder match tops its ladder up at once; this catches lost messages.
    "top-up-ladders": {"task": "tournaments.top_up_ladders", "schedule": SWEEP_SECONDS / 2},
    "sweep-recomputes": {"task": "tournaments.sweep_recomputes", "schedule": float(SWEEP_SECONDS)},
    "fit-rank-intervals": {
        "task": "tournaments.fit_rank_intervals",
        "schedule": float(RANK_INTERVALS_SECONDS),
    },
    "scan-collusion": {
        "task": "tournaments.scan_collusion",
        "schedule": float(COLLUSION_SECONDS),
    },
    "check-bot-health": {
        "task": "tournaments.check_bot_health",
        "schedule": float(HEALTH_CHECK_SECONDS),
    },
    # Checks whose message was lost (or whose worker could not call the bot) are sent again.
    "send-waiting-checks": {
        "task": "tournaments.send_waiting_checks",
        "schedule": float(SWEEP_SECONDS),
    },
}

# Bots: where the platform may connect and how much it accepts from them.
BOT_ALLOW_LOOPBACK = env_bool("BOT_ALLOW_LOOPBACK", False)
BOT_ALLOWED_NETWORKS = env_networks("BOT_ALLOWED_NETWORKS")
BOT_MAX_RESPONSE_BYTES = env_int("BOT_MAX_RESPONSE_BYTES", 65536, minimum=1024)
BOT_DEFAULT_TIME_LIMIT_MS = env_int("BOT_DEFAULT_TIME_LIMIT_MS", 1000, minimum=10, maximum=60000)
BOT_HELLO_TIMEOUT_MS = env_int("BOT_HELLO_TIMEOUT_MS", 3000, minimum=100, maximum=60000)
# A verification asked for through the API or the admin is queued; one still pending after this
# long (its task lost) is sent again when asked for again.
BOT_VERIFY_RESEND_S = env_int("BOT_VERIFY_RESEND_S", 60, minimum=5)
# Checks of one owner's bots handed to the workers at once (verifications; the periodic health
# check calls as many of its bots at once); the rest wait in the owner's backlog, so one owner's
# many slow bots delay only that owner's checks (tournaments/services/checks.py).
CHECKS_IN_FLIGHT_PER_OWNER = env_int("CHECKS_IN_FLIGHT_PER_OWNER", 2, minimum=1, maximum=100)
# Verifications one account may ask for in an hour, registrations included (staff are exempt);
# one more is refused with 429 and Retry-After. Asking again for a pending one is free.
CHECK_REQUESTS_PER_HOUR = env_int("CHECK_REQUESTS_PER_HOUR", 30, minimum=1, maximum=100000)
# Bots one account may register (staff are exempt): more bots would sit more often at one
# table, and each is called over the network by every match it plays.
BOTS_PER_ACCOUNT_MAX = env_int("BOTS_PER_ACCOUNT_MAX", 10, minimum=1, maximum=10000)

# The platform's own network, checked before a bot is charged a timeout or connection error
# mid-match (arena/netcheck.py, tournaments/netpolicy.py): a TCP connect to the broker of
# REDIS_URL and to ARENA_NETWORK_CHECK_URL, an endpoint the platform runs on the bots' side of
# the network. While it fails nothing is charged; a match waits out at most
# ARENA_OUTAGE_WAIT_SECONDS of outages in all, then fails on the platform's side.
ARENA_NETWORK_CHECK_URL = env_url("ARENA_NETWORK_CHECK_URL", "", schemes=("http", "https"))
ARENA_NETWORK_CHECK_TIMEOUT_MS = env_int(
    "ARENA_NETWORK_CHECK_TIMEOUT_MS", 1000, minimum=10, maximum=30000
)
# A match's total duration: past it, a seat that has used at least its share of the match's time
# is no longer called and plays the fallback with a match_time fault (docs/bot-protocol.md).
MATCH_MAX_SECONDS = env_int("MATCH_MAX_SECONDS", 1800, minimum=10, maximum=86400)
ARENA_OUTAGE_WAIT_SECONDS = env_float(
    "ARENA_OUTAGE_WAIT_SECONDS", 60.0, minimum=0.0, maximum=3600.0
)

# Requests: anything larger is refused with 413 before it is parsed.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAX_REQUEST_BYTES", 262144, minimum=1024)

# Auth
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
] + [{"NAME": "tournaments.services.users.TokenEndsWithPassword"}]

# Email: password reset and address confirmation links. In development they are printed
# (console) or written one file a message under EMAIL_FILE_PATH (file); a deployment sends them
# through an SMTP server.
EMAIL_BACKENDS = {
    "console": "django.core.mail.backends.console.EmailBackend",
    "file": "django.core.mail.backends.filebased.EmailBackend",
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
}
EMAIL_BACKEND = EMAIL_BACKENDS[
    env_choice("EMAIL_BACKEND", "console" if DEBUG else "smtp", tuple(EMAIL_BACKENDS))
]
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", not EMAIL_USE_SSL)
if EMAIL_USE_SSL and EMAIL_USE_TLS:
    raise ImproperlyConfigured("EMAIL_USE_SSL and EMAIL_USE_TLS cannot both be on.")
# A mail server that never answers would hold a worker for ever without a timeout.
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT_SECONDS", 10, minimum=1, maximum=300)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Oh Hell arena <arena@localhost>")
# How long a mailed link confirming an account's email address works (the ladders seat bots of
# confirmed accounts only: tournaments/services/users.py).
EMAIL_CONFIRMATION_SECONDS = env_int(
    "EMAIL_CONFIRMATION_SECONDS", 3 * 86400, minimum=300, maximum=30 * 86400
)
# Password-reset mails one mailbox may be sent in an hour, however many clients ask: each mail
# names every account of the address (tournaments/services/users.py).
PASSWORD_RESET_MAILS_PER_HOUR = env_int("PASSWORD_RESET_MAILS_PER_HOUR", 3, minimum=1, maximum=100)

# Failed sign-ins are also counted per account, whatever the address: after this many in a
# row, every sign-in of the account (a right password too) is refused for the lockout, through
# the API and the pages alike (tournaments/lockout.py).
AUTHENTICATION_BACKENDS = ["tournaments.lockout.LockoutModelBackend"]
AUTH_LOCKOUT_FAILURES = env_int("AUTH_LOCKOUT_FAILURES", 10, minimum=1, maximum=1000)
AUTH_LOCKOUT_SECONDS = env_int("AUTH_LOCKOUT_SECONDS", 900, minimum=1, maximum=86400)

# API
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PARSER_CLASSES": ["tournaments.api.parsers.LimitedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "tournaments.api.pagination.PageNumberPagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 50, minimum=1, maximum=1000),
    "DEFAULT_FILTER_BACKENDS": [
        "tournaments.api.filters.ListFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "tournaments.api.throttling.WriteRateThrottle",
        "tournaments.api.throttling.DownloadRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "writes": env_rate("THROTTLE_WRITE_RATE", "120/minute"),
        "auth": env_rate("THROTTLE_AUTH_RATE", "20/minute"),
        "downloads": env_rate("THROTTLE_DOWNLOAD_RATE", "30/minute"),
        # Confirmation mails asked for, per account and per client address alike.
        "email": env_rate("THROTTLE_EMAIL_RATE", "5/hour"),
    },
    "EXCEPTION_HANDLER": "tournaments.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "tournaments.api.schema.ApiAutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Oh Hell bot arena API",
    "DESCRIPTION": "Register Oh Hell bots, browse game variants and run tournaments.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Served offline: no web fonts (api/redoc.html), no online validator badge in Swagger UI.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "COMPONENT_SPLIT_REQUEST": True,
    # Several models have a "status"; name each choice set after its model.
    "ENUM_NAME_OVERRIDES": {
        "BotStatusEnum": "tournaments.models.bots.BotStatus",
        "TournamentStatusEnum": "tournaments.models.competitions.TournamentStatus",
        "MatchStatusEnum": "tournaments.models.matches.MatchStatus",
        "RecomputeStatusEnum": "tournaments.models.ratings.RecomputeStatus",
        "FaultKindEnum": "tournaments.models.faults.FaultKind",
        "ReferencePlayerEnum": "tournaments.models.bots.ReferencePlayer",
    },
}

# Internationalisation and static files
LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
with contextlib.suppress(OSError):  # WhiteNoise warns on every start without it
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

_LEVELS = ("debug", "info", "warning", "error", "critical")
# One JSON object per line in production, plain lines in development (config/logs.py), each
# with the request, task, lane, match and bot it concerns (docs/operations.md, Logs).
LOG_FORMAT = LogFormat(env_choice("LOG_FORMAT", "plain" if DEBUG else "json", tuple(LogFormat)))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "config.logs.ContextFilter"}},
    "formatters": {
        "json": {"()": "config.logs.JsonLines"},
        "plain": {"()": "config.logs.PlainLines"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["context"],
            "formatter": LOG_FORMAT.value,
        }
    },
    "root": {"handlers": ["console"], "level": env_choice("LOG_LEVEL", "info", _LEVELS).upper()},
    "loggers": {"django": {"handlers": [], "propagate": True}},
}

# What runs on embedded defaults, said in one line when a server starts (config/startup.py).
EMBEDDED_DEFAULTS = tuple(_embedded)
