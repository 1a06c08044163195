"""What one benchmark run shares (its directory, scratch database, site plan and the site's digests) and prints
about itself (the versions compared).

Imports `scratch` from `bench/`, which is on the path when `bench/crawl.py` runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg
import scratch

from crawling import product, serve, site


def server_url(pg: str | None) -> str:
    url = pg or os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    return url.rsplit("/", 1)[0]


@dataclass
class Run:
    """What one invocation shares: its directory, scratch database, site plan and the site's digests."""

    args: argparse.Namespace
    work: Path
    server: str
    database: str
    plan: site.SitePlan
    images: Path
    digests: dict[str, str]

    @property
    def admin_dsn(self) -> str:
        return f"{self.server}/postgres"

    @property
    def db_url(self) -> str:
        return f"{self.server}/{self.database}"

    def product(self) -> product.Product:
        (self.work / "data").mkdir(exist_ok=True)
        return product.Product(self.db_url, self.work / "data", self.work / "product.log")

    def fresh_database(self, runner: product.Product) -> None:
        scratch.recreate_database(self.db_url)
        runner.manage("migrate", "--verbosity", "0")

    def verify(self, runner: product.Product, source_ids: list[str]) -> product.Verified:
        os.environ.update(runner.env())
        scratch.setup_django(self.db_url)
        expected = {
            (sid, key, index): path for sid in source_ids for (key, index), path in self.plan.expected_pages().items()
        }
        return product.verify_pages(expected, self.digests)


def versions(server: str, *, aria2c: bool) -> str:
    with psycopg.connect(f"{server}/postgres") as conn:
        row = conn.execute("SHOW server_version").fetchone()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=product.REPO_ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain"], cwd=product.REPO_ROOT, capture_output=True, text=True
    ).stdout
    parts = [
        *([serve.version(["aria2c", "--version"]).replace("aria2 version", "aria2c")] if aria2c else []),
        serve.version(["nginx", "-v"]).replace("nginx version: nginx/", "nginx "),
        f"Python {sys.version.split()[0]}",
        f"PostgreSQL {row[0].split()[0] if row else '?'}",
        f"mangalord {commit}{' (with uncommitted changes)' if dirty.strip() else ''}",
    ]
    return ", ".join(parts)


def per_k(secs: float, pages: int) -> float:
    return 1000 * secs / max(pages, 1)
