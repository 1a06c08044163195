"""Pytest fixtures for the infrastructure a multi-host deployment has: PgBouncer and S3-compatible storage.

Registered in the root conftest. `db_route` lets a process test run its
child processes straight at PostgreSQL or through PgBouncer by
parametrising it (`indirect=True`); pytest-django itself always creates and
inspects the test database directly.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection

from mangalord.testing.pgbouncer import PgBouncer, start_pgbouncer

# direct: DATABASE_URL is PostgreSQL itself.
# pgbouncer: DATABASE_URL is PgBouncer (transaction pooling), no LISTEN session: workers and streams poll.
# pgbouncer-listen: as pgbouncer, plus DATABASE_DIRECT_URL so listeners LISTEN around the pooler.
DB_ROUTES = ("direct", "pgbouncer", "pgbouncer-listen")


@pytest.fixture(scope="session")
def pgbouncer(django_db_setup, django_db_blocker) -> Iterator[PgBouncer]:
    """One PgBouncer for the session, started after (and so stopped before) the test database exists."""
    if connection.vendor != "postgresql":
        pytest.skip("PgBouncer pools PostgreSQL connections")
    db = connection.settings_dict
    bouncer = start_pgbouncer(server_host=db["HOST"] or "127.0.0.1", server_port=int(db["PORT"] or 5432))
    try:
        yield bouncer
    finally:
        bouncer.stop()


@pytest.fixture
def db_route(request) -> str:
    """How child processes reach the database; `direct` unless a test parametrises it."""
    route = getattr(request, "param", "direct")
    assert route in DB_ROUTES, f"unknown db_route {route!r}"
    return route


@pytest.fixture
def routed_child_env(request, child_env, db_route) -> dict[str, str]:
    """`child_env` with DATABASE_URL (and DATABASE_POOLER / DATABASE_DIRECT_URL) set for `db_route`."""
    if db_route == "direct":
        return child_env
    bouncer: PgBouncer = request.getfixturevalue("pgbouncer")
    db = connection.settings_dict
    env = dict(child_env, DATABASE_URL=bouncer.url(db["NAME"], db["USER"] or "postgres"), DATABASE_POOLER="pgbouncer")
    env.pop("DATABASE_DIRECT_URL", None)
    if db_route == "pgbouncer-listen":
        env["DATABASE_DIRECT_URL"] = child_env["DATABASE_URL"]
    return env
