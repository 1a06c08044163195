"""Settings for Mangalord, read once from the environment (and an optional `.env`).

Every variable is documented with its default in `.env.example`. A value that
does not parse stops start-up with an error that names the variable, so a typo
in a systemd unit fails loudly instead of running with a silent default. The
readers live in `mangalord.env_readers`; DATABASES and the S3 backend's options
are built in `mangalord.database_config` and `mangalord.storage_config`.
"""

import os
import re
import warnings
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from mangalord import renamed_env
from mangalord.database_config import WEB_PROCESS_ENV, database, web_pool
from mangalord.env_readers import (
    env,
    invalid,
    is_postgres_url,
    non_negative,
    path,
    positive,
    rate,
    read,
    strict_bool,
)
from mangalord.secret import secret_key
from mangalord.serving_settings import signing_settings
from mangalord.storage_config import s3_storage

BASE_DIR = Path(__file__).resolve().parent.parent

_env_file = BASE_DIR / ".env"
if _env_file.exists():
    environ.Env.read_env(str(_env_file))

# The engine's settings were CRAWLER_* before they were JOBS_*: an old name is read for one release, with a warning.
_renamed, _deprecations = renamed_env.resolve(os.environ)
os.environ.update(_renamed)
for _message in _deprecations:
    warnings.warn(_message, renamed_env.RenamedSettingWarning, stacklevel=1)


# Relative to the project directory, so `./data` in a copied .env means the same folder from any cwd.
DATA_DIR = path("MANGALORD_DATA_DIR", BASE_DIR / "data", under=BASE_DIR)
try:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
except OSError as exc:
    raise invalid("MANGALORD_DATA_DIR", f"must be a directory this user can create and write ({exc.strerror})") from exc
DEBUG = read("DEBUG", strict_bool, False)
SECRET_KEY = secret_key(read("SECRET_KEY", env.str, ""), debug=DEBUG, data_dir=DATA_DIR)
ALLOWED_HOSTS = read("ALLOWED_HOSTS", env.list, ["127.0.0.1", "localhost", "testserver"])
ADMIN_ALLOWED_ORIGINS = read("ADMIN_ALLOWED_ORIGINS", env.list, [])
# Origins trusted for CSRF: the admin's allowed origins plus any given here
# (behind an HTTPS proxy: the public https:// origin).
CSRF_TRUSTED_ORIGINS = list(dict.fromkeys([*ADMIN_ALLOWED_ORIGINS, *read("CSRF_TRUSTED_ORIGINS", env.list, [])]))

# --- HTTPS (behind a TLS-terminating proxy; docs/install.md#behind-an-https-proxy) ---
# The proxy says the original request was HTTPS in this header; trust it only
# when the proxy always sets (or strips) it.
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if read("SECURE_PROXY_SSL_HEADER", strict_bool, False) else None
)
SECURE_SSL_REDIRECT = read("SECURE_SSL_REDIRECT", strict_bool, False)
SECURE_HSTS_SECONDS = non_negative("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = read("SECURE_HSTS_INCLUDE_SUBDOMAINS", strict_bool, False)
SECURE_HSTS_PRELOAD = read("SECURE_HSTS_PRELOAD", strict_bool, False)
# Django's database sessions, read with one statement composed once (accounts/session_store.py).
SESSION_ENGINE = "accounts.session_store"
SESSION_COOKIE_SECURE = read("SESSION_COOKIE_SECURE", strict_bool, False)
CSRF_COOKIE_SECURE = read("CSRF_COOKIE_SECURE", strict_bool, False)

INSTALLED_APPS = [
    # `runserver` served by Daphne; before staticfiles, whose `runserver` it replaces (mangalord.devserver).
    "mangalord.devserver",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    # Swagger UI and ReDoc as static files of ours: the API docs work with no internet access.
    "drf_spectacular_sidecar",
    "channels",
    "axes",
    "accounts",
    "catalog",
    "jobs",
    "crawler",
    "analysis",
    # The operator console (dashboard, operator API, admin composition) stands on the apps above.
    "console",
    "reader",
    # Keeping the library whole: rescans after exports, the verify pass (stands on catalog, jobs, crawler, reader).
    "upkeep",
    # Per-user notifications (Apprise) and operators' source health alerts; nothing but the project imports it.
    "notify",
    # The project itself: its static files (the favicon).
    "mangalord",
    # Last: the demo (`manage.py demo`, `manage.py demo_site`, the built-in demo site) stands on every app.
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "mangalord.middleware.reject_nul_characters",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Django's, with the signed-in user read once a burst (accounts.session_user).
    "accounts.session_user.SessionUserMiddleware",
    "reader.key_paths.ApiKeyPathMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "mangalord.security.AdminGuardMiddleware",
    # Last: turns a login form's locked-out attempt into the lockout page (accounts.lockout).
    "accounts.lockout.LockoutMiddleware",
]
# axes looks for its own middleware by name; ours is it, with its ASGI branch fixed (accounts.lockout).
SILENCED_SYSTEM_CHECKS = ["axes.W002"]

# django-axes first: it refuses every login of a locked account or address before a password is checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]

ROOT_URLCONF = "mangalord.urls"
WSGI_APPLICATION = "mangalord.wsgi.application"
ASGI_APPLICATION = "mangalord.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


# `pgbouncer`: DATABASE_URL points at PgBouncer in pool_mode=transaction (no session state is kept).
DATABASE_POOLER = read("DATABASE_POOLER", env.str, "", lambda v: v in {"", "pgbouncer"}, "must be empty or 'pgbouncer'")
# A direct (unpooled) PostgreSQL connection for LISTEN, which needs a session of its own; also the `direct`
# database alias when set.
DIRECT_DB = "direct"
DATABASE_DIRECT_URL = read(
    "DATABASE_DIRECT_URL",
    env.str,
    "",
    lambda v: not v or is_postgres_url(v),
    "must be a PostgreSQL URL such as postgres://user:password@db.internal:5432/name",
)


# The web process's PostgreSQL connections come from a pool of this many (mangalord/database_config.py).
WEB_DB_POOL_SIZE = positive("WEB_DB_POOL_SIZE", 8)
DATABASES = {"default": database(DATABASE_POOLER, DATA_DIR)}
if os.environ.get(WEB_PROCESS_ENV):
    DATABASES["default"] = web_pool(DATABASES["default"], WEB_DB_POOL_SIZE)
if DATABASE_DIRECT_URL:
    # Around the pooler: a worker's status row is written here while the pooler is down (jobs.worker.status.publish),
    # so the dashboard can say since when its database path is unavailable. Tests mirror it onto default.
    DATABASES[DIRECT_DB] = {
        **env.db_url_config(DATABASE_DIRECT_URL),
        "CONN_MAX_AGE": 0,
        "OPTIONS": {"connect_timeout": 10},
        "TEST": {"MIRROR": "default"},
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
# Serve /static/ from the ASGI app itself (see mangalord/asgi.py); off behind a proxy that serves STATIC_ROOT.
SERVE_STATIC = read("SERVE_STATIC", strict_bool, True)
# Behind nginx: an image answer hands the stored file to nginx's internal location with this prefix
# (`X-Accel-Redirect`, catalog/serving/accel.py, docs/serving.md) after the permission check. Empty: off.
SERVE_ACCEL_REDIRECT = read(
    "SERVE_ACCEL_REDIRECT",
    env.str,
    "",
    lambda v: not v or (v.startswith("/") and v.endswith("/") and " " not in v),
    "must be empty or a location prefix such as /protected/",
)
# Signed page URLs the web reader and PSE hand out, served without Django (mangalord/serving_settings.py).
SERVE_SIGNED_URLS, SERVE_SIGNING_KEY, SERVE_SIGNED_URL_TTL, SERVE_SIGNED_BY_NGINX = signing_settings(SECRET_KEY)
MEDIA_URL = "media/"
# Relative to MANGALORD_DATA_DIR: moving the data directory moves the media with it.
MEDIA_ROOT = path("MEDIA_ROOT", DATA_DIR / "media", under=DATA_DIR)
STORAGE_BACKEND = read(
    "STORAGE_BACKEND", env.str, "filesystem", lambda v: v in {"filesystem", "s3"}, "must be 'filesystem' or 's3'"
)


STORAGES = {
    "default": (
        s3_storage() if STORAGE_BACKEND == "s3" else {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    ),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

LOGIN_URL = "/admin/login/"

# --- Access (accounts/) -----------------------------------------------------------
# Anyone who reaches the web process may read the library (API, images, OPDS, CBZ, web reader) with no
# account. Off: every read needs an active user. Bookmarks and read progress always need one.
LIBRARY_PUBLIC_READ = read("LIBRARY_PUBLIC_READ", strict_bool, False)
# Series (docs/series.md): source ids, most preferred first, for every series without an order of its own;
# sources not named follow by id.
SERIES_SOURCE_PRIORITY = read("SERIES_SOURCE_PRIORITY", env.list, [])
# Login lockout (django-axes, accounts/lockout.py): failures per account, per address, and how long they count.
LOGIN_FAILURE_LIMIT = positive("LOGIN_FAILURE_LIMIT", 5)
LOGIN_ADDRESS_FAILURE_LIMIT = positive("LOGIN_ADDRESS_FAILURE_LIMIT", 20)
if LOGIN_ADDRESS_FAILURE_LIMIT < LOGIN_FAILURE_LIMIT:
    raise ImproperlyConfigured(
        "Invalid value for environment variable LOGIN_ADDRESS_FAILURE_LIMIT: must be at least LOGIN_FAILURE_LIMIT"
    )
LOGIN_LOCKOUT_MINUTES = positive("LOGIN_LOCKOUT_MINUTES", 15)
# Reverse proxies in front of the web process that append to X-Forwarded-For (0: the peer address is the
# client's). The lockout and the API throttles count per client address, so behind a proxy this must be set.
TRUSTED_PROXY_COUNT = non_negative("TRUSTED_PROXY_COUNT", 0)

AXES_HANDLER = "accounts.lockout.LoginLockoutHandler"
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
# A failure while locked is refused without being counted: the lockout ends LOGIN_LOCKOUT_MINUTES after the last
# counted failure, and a locked attack writes nothing.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# A success must not wipe the failures: logging in to one's own account would reset the count of another's.
AXES_RESET_ON_SUCCESS = False
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
# A name no account can have (NUL, bidi, past the field's length) counts toward the address alone, never stored.
AXES_USERNAME_CALLABLE = "accounts.lockout.lockout_username"
AXES_IPWARE_PROXY_COUNT = TRUSTED_PROXY_COUNT or None
AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR") if TRUSTED_PROXY_COUNT else ("REMOTE_ADDR",)
# Requests per client address (anonymous callers) and per token-endpoint caller; DRF's rate syntax (N/second,
# minute, hour, day). Counted in the web process's cache.
API_THROTTLE_ANON = rate("API_THROTTLE_ANON", "120/minute")
API_THROTTLE_LOGIN = rate("API_THROTTLE_LOGIN", "10/minute")
# kosync registrations per client address, when KOSYNC_ALLOW_REGISTRATION is on.
KOSYNC_REGISTRATION_THROTTLE = rate("KOSYNC_REGISTRATION_THROTTLE", "5/hour")

# JSON request bodies (the APIs, kosync): larger ones are a 413 and deeper ones a 400, checked before parsing.
REQUEST_JSON_MAX_BYTES = positive("REQUEST_JSON_MAX_BYTES", 1024 * 1024)
REQUEST_JSON_MAX_DEPTH = positive("REQUEST_JSON_MAX_DEPTH", 32)

REDIS_URL = read("REDIS_URL", env.str, "")
if REDIS_URL:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.drf.HeaderCredentialsAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.AnonRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "anon": API_THROTTLE_ANON,
        "login": API_THROTTLE_LOGIN,
        "kosync_register": KOSYNC_REGISTRATION_THROTTLE,
    },
    # 0 without a proxy: DRF's None would take the client's own X-Forwarded-For as its address, and a fake one
    # per call would dodge every throttle.
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    # Every API view reads JSON, and only JSON, within REQUEST_JSON_MAX_BYTES and REQUEST_JSON_MAX_DEPTH.
    "DEFAULT_PARSER_CLASSES": ["catalog.api.inputs.BoundedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Mangalord API",
    "DESCRIPTION": "Library and crawler-control API of a self-hosted manga library server.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Job engine (JOBS_*, read under their old CRAWLER_* names for one release: mangalord.renamed_env) ---
JOBS_JOB_TIMEOUT_SECS = positive("JOBS_JOB_TIMEOUT_SECS", 600)
JOBS_WORKERS = positive("JOBS_WORKERS", 2)
JOBS_LEASE_SECS = positive("JOBS_LEASE_SECS", 60)
JOBS_HEARTBEAT_SECS = positive("JOBS_HEARTBEAT_SECS", 20)
if JOBS_HEARTBEAT_SECS >= JOBS_LEASE_SECS:
    raise ImproperlyConfigured(
        "Invalid value for environment variable JOBS_HEARTBEAT_SECS: must be shorter than JOBS_LEASE_SECS"
    )
JOBS_MAX_ATTEMPTS = positive("JOBS_MAX_ATTEMPTS", 5)
JOBS_MAX_DEFERRALS = positive("JOBS_MAX_DEFERRALS", 20)
JOBS_DONE_RETENTION_DAYS = non_negative("JOBS_DONE_RETENTION_DAYS", 7)
JOBS_CIRCUIT_BREAKER_THRESHOLD = positive("JOBS_CIRCUIT_BREAKER_THRESHOLD", 5)
JOBS_CIRCUIT_BREAKER_COOLDOWN_SECS = positive("JOBS_CIRCUIT_BREAKER_COOLDOWN_SECS", 120)
# A worker's job threads keep their database connection across jobs and reconnect only when it broke
# or is this old (the DATABASES CONN_MAX_AGE of 0 applies to web requests, not to these long-lived threads).
JOBS_CONN_MAX_AGE_SECS = read(
    "JOBS_CONN_MAX_AGE_SECS", env.float, 600.0, lambda v: v >= 0, "must be a number of seconds, 0 or more"
)
JOBS_POLL_SECS = read("JOBS_POLL_SECS", env.float, 5.0, lambda v: v > 0, "must be a positive number")

# --- Crawler: its limits, deadlines, politeness, outbound networks, challenges and Chromium ---
from mangalord.crawl_settings import *  # noqa: E402, F403

# `manage.py demo`: the admin account it creates (a password is generated and printed when unset).
DEMO_ADMIN_USER = read("DEMO_ADMIN_USER", env.str, "admin")
DEMO_ADMIN_PASSWORD = read("DEMO_ADMIN_PASSWORD", env.str, "")

# --- Analysis ----------------------------------------------------------------
ANALYSIS_ENABLED = read("ANALYSIS_ENABLED", strict_bool, True)
ANALYSIS_BACKEND = read(
    "ANALYSIS_BACKEND", env.str, "local", lambda v: v in {"local", "openai"}, "must be 'local' or 'openai'"
)
VISION_API_URL = read("VISION_API_URL", env.str, "http://127.0.0.1:11434/v1")
VISION_MODEL = read("VISION_MODEL", env.str, "llava")
VISION_API_KEY = read("VISION_API_KEY", env.str, "")
VISION_TIMEOUT_SECS = read("VISION_TIMEOUT_SECS", env.float, 120.0, lambda v: v > 0, "must be a positive number")

_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_LOG_RULE = f"must be one of {', '.join(_LOG_LEVELS)}"
LOG_LEVEL = read("LOG_LEVEL", env.str, "INFO", lambda v: v.upper() in _LOG_LEVELS, _LOG_RULE).upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "structured": {"format": "%(asctime)s level=%(levelname)s logger=%(name)s pid=%(process)d %(message)s"},
    },
    # API keys in URLs (`/key/<key>/opds/`) are masked in every line (mangalord.log_masking): each handler
    # carries the filter, and Django's own loggers are routed here instead of to its default handlers.
    "filters": {"mask_api_keys": {"()": "mangalord.log_masking.MaskApiKeys"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "structured", "filters": ["mask_api_keys"]}
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's defaults give these handlers of their own (a DEBUG-only console, mail to ADMINS, the
        # development server's): cleared, so their lines go through the masked console above.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django.channels.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django.db.backends": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        # libvips narrates every thumbnail at INFO (loader, shrink factors, thread pool).
        "pyvips": {"level": "WARNING"},
        # django-axes announces its version on every process start, before any command's own output.
        "axes.apps": {"level": "WARNING"},
    },
}

# --- Library API ------------------------------------------------------------------
# A title search counts its matches up to this many; past it the API's `count` is this lower bound
# (`count_exact: false`) and pages are found by reading them. 0 always counts exactly.
CATALOG_SEARCH_COUNT_CAP = non_negative("CATALOG_SEARCH_COUNT_CAP", 1000)

# --- Readers (OPDS, CBZ, web reader) -------------------------------------------
# Language of a source's text when its settings have no "language" key (dc:language, ComicInfo LanguageISO).
READER_DEFAULT_LANGUAGE = read(
    "READER_DEFAULT_LANGUAGE",
    env.str,
    "en",
    lambda v: bool(re.match(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", v)),
    "must be a language code such as 'en' or 'pt-BR'",
)
# KOReader's "Register" button (kosync POST /users/create) makes a sync-only account when this is true;
# by default accounts come from the admin and KOReader signs in with an API key.
KOSYNC_ALLOW_REGISTRATION = read("KOSYNC_ALLOW_REGISTRATION", strict_bool, False)

# --- Library upkeep and notifications (upkeep/, notify/) -------------------------------
from mangalord.library_settings import *  # noqa: E402, F403
