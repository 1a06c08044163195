"""DATABASES from DATABASE_URL: PostgreSQL (directly or behind PgBouncer) or the embedded SQLite default.

The web process (and only it: `manage.py serve` sets WEB_PROCESS_ENV for
the server it starts, before the settings load) takes its PostgreSQL
connections from a psycopg pool (`web_pool`). Persistent connections (CONN_MAX_AGE) are not safe there:
under ASGI each request's sync code may run in another thread, and Django
keeps one connection per thread, so idle threads would each hold one open
that is closed only when it is next used. A pool is shared by all threads;
a request borrows one connection and gives it back when it ends. Workers
keep their own connection handling (jobs.worker.pool).
"""

import warnings
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from mangalord.env_readers import env, read

WEB_PROCESS_ENV = "MANGALORD_WEB_PROCESS"
POOL_TIMEOUT_SECS = 10


def web_pool(db: dict[str, Any], size: int) -> dict[str, Any]:
    """`db` with a psycopg pool of at most `size` connections when it is PostgreSQL (unchanged otherwise). Pure."""
    if db.get("ENGINE") != "django.db.backends.postgresql":
        return db
    # min_size 0: connections open as requests need them and stay for the next ones (closed after ten idle
    # minutes), so a quiet process, or one serving only the dashboard's streams, holds no idle spares.
    pool = {"min_size": 0, "max_size": size, "timeout": POOL_TIMEOUT_SECS}
    return {**db, "CONN_MAX_AGE": 0, "OPTIONS": {**db.get("OPTIONS", {}), "pool": pool}}


def database(pooler: str, data_dir: Path) -> dict[str, Any]:
    """The default database; `pooler` is DATABASE_POOLER, `data_dir` holds the SQLite file."""
    if env.str("DATABASE_URL", default=""):
        with warnings.catch_warnings():  # django-environ warns about an unknown scheme before we refuse it
            warnings.simplefilter("ignore")
            db = read(
                "DATABASE_URL",
                env.db_url,
                None,
                lambda d: bool(d.get("ENGINE")) and bool(d.get("NAME")),
                "must be a database URL such as postgres://user:password@host:5432/name",
            )
        db.setdefault("CONN_MAX_AGE", 0)
        if db["ENGINE"] == "django.db.backends.postgresql":
            # A database host that stopped answering must not hold a connect (or a worker's shutdown) for minutes.
            db.setdefault("OPTIONS", {}).setdefault("connect_timeout", 10)
        if pooler == "pgbouncer":
            if db["ENGINE"] != "django.db.backends.postgresql":
                raise ImproperlyConfigured(
                    "Invalid value for environment variable DATABASE_POOLER=pgbouncer: DATABASE_URL is not PostgreSQL"
                )
            # Transaction pooling hands each transaction a different server
            # session: no server-side cursor may outlive its transaction and
            # no prepared statement may be reused across transactions.
            db["DISABLE_SERVER_SIDE_CURSORS"] = True
            db.setdefault("OPTIONS", {})["prepare_threshold"] = None
        return db
    if pooler:
        raise ImproperlyConfigured(
            "Invalid value for environment variable DATABASE_POOLER: it needs a PostgreSQL DATABASE_URL"
        )
    # The embedded default: one SQLite file. IMMEDIATE transactions take the
    # write lock at BEGIN, so the lease's read-then-claim is exclusive across
    # processes; WAL lets readers (the dashboard) run beside a writer.
    data_dir.mkdir(parents=True, exist_ok=True)
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(data_dir / "mangalord.sqlite3"),
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        # Tests get a file too, not Django's shared-cache memory database: there a writer meeting another
        # connection's table lock fails at once ("database table is locked") instead of waiting out the
        # timeout as every process does on the file, so a worker's threads would race as they never do here.
        "TEST": {"NAME": str(data_dir / "test_mangalord.sqlite3")},
    }
