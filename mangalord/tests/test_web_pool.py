"""The web process borrows its PostgreSQL connections from one pool and gives them back after each request."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection
from django.db.utils import ConnectionHandler

from mangalord.database_config import web_pool

POSTGRES = {
    "ENGINE": "django.db.backends.postgresql",
    "NAME": "m",
    "CONN_MAX_AGE": 0,
    "OPTIONS": {"connect_timeout": 10},
}


def test_the_web_pool_is_sized_and_keeps_the_other_options():
    pooled = web_pool(POSTGRES, 8)
    assert pooled["OPTIONS"] == {"connect_timeout": 10, "pool": {"min_size": 0, "max_size": 8, "timeout": 10}}
    assert pooled["CONN_MAX_AGE"] == 0  # Django refuses persistent connections with a pool
    assert POSTGRES["OPTIONS"] == {"connect_timeout": 10}


def test_sqlite_has_no_pool():
    sqlite = {"ENGINE": "django.db.backends.sqlite3", "NAME": "x"}
    assert web_pool(sqlite, 8) is sqlite


@pytest.mark.django_db(transaction=True)
def test_requests_reuse_the_pooled_connections():
    """Ten request-sized uses of a pooled alias (connect, query, close as a request's end does) see only the pool's
    two backends: no use opens a connection of its own."""
    if connection.vendor != "postgresql":
        pytest.skip("the pool is PostgreSQL's")
    pooled = web_pool({**settings.DATABASES["default"], "NAME": connection.settings_dict["NAME"]}, 2)
    handler = ConnectionHandler({"default": pooled})
    alias = handler["default"]
    try:
        backends = set()
        for _ in range(10):
            with alias.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                backends.add(cursor.fetchone()[0])
            alias.close()  # what close_old_connections does when a request ends: back to the pool
        assert len(backends) <= 2
    finally:
        alias.close_pool()


def test_only_the_web_process_is_marked_for_the_pool():
    from mangalord.web_server import web_process_env

    assert web_process_env({"DATABASE_URL": "postgres://x/y"}) == {
        "DATABASE_URL": "postgres://x/y",
        "MANGALORD_WEB_PROCESS": "1",
    }
