"""What every benchmark needs: scratch PostgreSQL databases and Django set up against one.

Benchmarks run as `python bench/<name>.py`, so this folder is on sys.path and
they import this module as `scratch`. A scratch database is always named
explicitly and never the `postgres` maintenance database.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)


def _split(db_url: str) -> tuple[str, str]:
    """(maintenance-database URL, scratch database name) of `db_url`."""
    parts = urlsplit(db_url)
    name = parts.path.lstrip("/")
    if not name or name == "postgres":
        raise SystemExit(f"{db_url!r} must name a scratch database")
    return urlunsplit(parts._replace(path="/postgres")), name


def recreate_database(db_url: str, *, settings: dict[str, str] | None = None) -> None:
    """Drop (closing its sessions) and create the scratch database; `settings` become database defaults."""
    admin_url, name = _split(db_url)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        for key, value in (settings or {}).items():
            conn.execute(
                sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                    sql.Identifier(name), sql.Identifier(key), sql.Literal(value)
                )
            )


def ensure_database(db_url: str) -> None:
    """Create the scratch database unless it exists (for benchmarks that can reuse a seeded one)."""
    admin_url, name = _split(db_url)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(db_url: str) -> None:
    admin_url, name = _split(db_url)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def setup_django(db_url: str | None = None) -> None:
    """Configure Django in this process, against `db_url` when given."""
    if db_url is not None:
        os.environ["DATABASE_URL"] = db_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")
    import django

    django.setup()
