"""The demo's own database, wherever the demo put it: this test's PostgreSQL database or a fresh SQLite data dir."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from django.db import connection


@pytest.fixture
def demo_env(child_env, tmp_path) -> dict[str, str]:
    """On PostgreSQL the demo uses this test's database; on SQLite a fresh data directory of its own."""
    env = dict(child_env, LOG_LEVEL="INFO", DEMO_ADMIN_USER="demo-admin")
    if connection.vendor != "postgresql":
        env.pop("DATABASE_URL", None)
        env["MANGALORD_DATA_DIR"] = str(tmp_path / "data")
        env["MEDIA_ROOT"] = str(tmp_path / "data" / "media")
    return env


def demo_rows(env: dict[str, str], *queries: str) -> tuple[Any, ...]:
    """The first value of each query, as the demo's own database answers it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            return tuple(cursor.execute(q).fetchone()[0] for q in queries)
    db = sqlite3.connect(f"{env['MANGALORD_DATA_DIR']}/mangalord.sqlite3")
    try:
        return tuple(db.execute(q).fetchone()[0] for q in queries)
    finally:
        db.close()
