"""Pytest fixtures for the infrastructure a multi-host deployment has: PgBouncer and S3-compatible storage.

Registered in the root conftest. `db_route` lets a process test run its
child processes straight at PostgreSQL or through PgBouncer by
parametrising it (`indirect=True`); pytest-django itself always creates and
inspects the test database directly.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection

from catalog.s3 import storage_config
from testsupport.pgbouncer import PgBouncer, start_pgbouncer
from testsupport.s3 import (
    ACCESS_KEY,
    REGION,
    SECRET_KEY,
    MotoServer,
    bucket_keys,
    pending_uploads,
    start_moto_server,
    storage_env,
)

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


@pytest.fixture(scope="session")
def s3_server() -> Iterator[MotoServer]:
    """One S3-protocol server (moto) for the session; each test gets its own bucket."""
    server = start_moto_server()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class S3Bucket:
    name: str
    server: MotoServer
    key_prefix: str

    @property
    def client(self) -> Any:
        return self.server.client()

    def env(self) -> dict[str, str]:
        """The settings environment a child process needs to store into this bucket."""
        return storage_env(self.server.endpoint_url, self.name, self.key_prefix)

    def storage_config(self, endpoint_url: str | None = None) -> dict[str, Any]:
        return storage_config(
            bucket=self.name,
            endpoint_url=endpoint_url or self.server.endpoint_url,
            region=REGION,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            key_prefix=self.key_prefix,
            addressing_style="path",
        )

    def keys(self) -> list[str]:
        return bucket_keys(self.client, self.name)

    def pending_uploads(self) -> list[str]:
        return pending_uploads(self.client, self.name)


@pytest.fixture
def s3_bucket(s3_server) -> S3Bucket:
    """A fresh, empty bucket on the S3 server; keys go under the prefix `media/`."""
    bucket = S3Bucket(f"mangalord-{uuid.uuid4().hex[:12]}", s3_server, "media")
    bucket.client.create_bucket(Bucket=bucket.name)
    return bucket


@pytest.fixture
def s3_storage(s3_bucket, settings) -> S3Bucket:
    """This process's default storage is `s3_bucket` (and child processes get `s3_bucket.env()`)."""
    settings.STORAGES = {**settings.STORAGES, "default": s3_bucket.storage_config()}
    return s3_bucket


@pytest.fixture(params=["filesystem", "s3"])
def media_storage(request) -> S3Bucket | None:
    """Runs a test on the local filesystem storage and again on S3 (then the bucket is returned)."""
    if request.param == "s3":
        return request.getfixturevalue("s3_storage")
    return None
