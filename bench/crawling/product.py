"""Our side of the race, run as users run it: `manage.py` commands in child processes, then the checks.

Every command runs against the scratch database with its own data directory
(page files under it) and analysis switched off; its output goes to one log
file per run, whose tail is shown if a command fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from crawling import procstat

REPO_ROOT = Path(__file__).resolve().parents[2]
MANAGE = str(REPO_ROOT / "manage.py")
COUNT_SQL = str(Path(__file__).with_name("count_sql.py"))


@dataclass(frozen=True)
class Product:
    db_url: str
    data_dir: Path
    log: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("DATABASE_POOLER", None)
        env.update(
            DATABASE_URL=self.db_url,
            MANGALORD_DATA_DIR=str(self.data_dir),
            ANALYSIS_ENABLED="false",
            STORAGE_BACKEND="filesystem",
            PYTHONUNBUFFERED="1",
        )
        env.pop("MEDIA_ROOT", None)  # pages go under the run's data directory
        env.update(extra)
        return env

    def manage(self, *args: str) -> float:
        """Run `manage.py args` to completion; returns its wall time. A failure ends the benchmark loudly."""
        started = time.monotonic()
        with open(self.log, "ab") as log:
            log.write(f"\n$ manage.py {' '.join(args)}\n".encode())
            log.flush()
            code = subprocess.call([sys.executable, MANAGE, *args], env=self.env(), stdout=log, stderr=log)
        if code != 0:
            raise SystemExit(f"manage.py {' '.join(args)} failed ({code}); the end of {self.log}:\n{self.tail()}")
        return time.monotonic() - started

    def start_worker(self, *args: str, wrap: list[str] | None = None, **env: str) -> subprocess.Popen:
        """`manage.py crawl_worker args` as a child (run by `count_sql.py` under `wrap` when profiling)."""
        command = [sys.executable, MANAGE, "crawl_worker", *args]
        if wrap is not None:
            command = [*wrap, sys.executable, COUNT_SQL, "crawl_worker", *args]
        with open(self.log, "ab") as log:
            log.write(f"\n$ {' '.join(command)}\n".encode())
            log.flush()
            return subprocess.Popen(
                command,
                env=self.env(**env),
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                preexec_fn=procstat.die_with_parent,
            )

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def add_source_args(source_id: str, base_url: str, settings: dict[str, Any], *, dry_run: bool = True) -> list[str]:
    args = ["add_source", f"Bench {source_id}", base_url, "--id", source_id, "--preset", "madara"]
    for key, value in settings.items():
        args += ["--set", f"{key}={json.dumps(value)}"]
    return args if dry_run else [*args, "--no-dry-run"]


def database_counters(admin_dsn: str, database: str) -> dict[str, int]:
    """Committed transactions and sessions opened so far in `database` (read from the maintenance database)."""
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit, xact_rollback, sessions FROM pg_stat_database WHERE datname = %s", [database]
        ).fetchone()
    assert row is not None, f"no pg_stat_database row for {database}"
    return {"xact_commit": int(row[0]), "xact_rollback": int(row[1]), "sessions": int(row[2])}


def open_jobs(conn: psycopg.Connection) -> int:
    """Jobs still to run (pending or running) in the scratch database `conn` is connected to."""
    row = conn.execute("SELECT count(*) FROM crawler_jobs WHERE state IN ('pending', 'running')").fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class Verified:
    pages: int
    first_stored: Any  # datetime of the first and last Page row
    last_stored: Any


def verify_pages(expected: dict[tuple[str, str, int], str], site_digests: dict[str, str]) -> Verified:
    """Every stored page against the site's bytes: (source, chapter key, index) -> site path -> sha256.

    Needs Django set up in this process against the scratch database. A page
    missing, extra, stored twice, or whose file or recorded sha256 differs from
    the site's fails the run, naming the first few.
    """
    from django.core.files.storage import default_storage
    from django.db import connection

    from catalog.models import Page
    from jobs.models import Job, JobState

    problems: list[str] = []
    dead = list(Job.objects.filter(state=JobState.DEAD).values_list("kind", "last_error")[:5])
    problems += [f"dead job {kind}: {error}" for kind, error in dead]
    seen: set[tuple[str, str, int]] = set()
    rows = Page.objects.values_list(
        "chapter__source_id", "chapter__source_chapter_key", "index", "image", "sha256", "created_at"
    )
    first = last = None
    for source_id, chapter_key, index, name, recorded, created in rows.iterator(chunk_size=2000):
        key = (source_id, chapter_key, index)
        first = created if first is None or created < first else first
        last = created if last is None or created > last else last
        if key in seen:
            problems.append(f"page stored twice: {key}")
            continue
        seen.add(key)
        path = expected.get(key)
        if path is None:
            problems.append(f"page the site does not have: {key}")
            continue
        digest = hashlib.sha256()
        with default_storage.open(name, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        if digest.hexdigest() != site_digests[path]:
            problems.append(f"stored file {name} differs from the site's {path}")
        elif recorded != site_digests[path]:
            problems.append(f"page {key} records sha256 {recorded}, the site's bytes are {site_digests[path]}")
    missing = sorted(set(expected) - seen)
    problems += [f"page missing: {key}" for key in missing[:10]]
    connection.close()
    if problems:
        more = f" (and {len(problems) - 15} more)" if len(problems) > 15 else ""
        raise SystemExit(
            f"VERIFICATION FAILED: {len(missing)} missing, {len(problems)} problems{more}:\n  "
            + "\n  ".join(problems[:15])
        )
    return Verified(len(seen), first, last)
