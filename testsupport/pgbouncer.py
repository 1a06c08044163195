"""A real PgBouncer in pool_mode=transaction on a free 127.0.0.1 port, in front of the test PostgreSQL.

Debian's `pgbouncer` package; the tests and the benchmarks run workers and
web processes through it exactly as production does behind a transaction
pooler: each transaction may land on a different server session.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from testsupport.ports import free_port, wait_for_port

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"

CONFIG = """\
[databases]
* = host={host} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen_port}
unix_socket_dir =
auth_type = trust
auth_file = {auth_file}
pool_mode = transaction
admin_users = {admin}
default_pool_size = {pool_size}
max_client_conn = 500
server_reset_query =
; Pooled server connections close after a second idle, so a test that counts the test database's
; connections does not see the ones an earlier process test left in the pool.
server_idle_timeout = 1
ignore_startup_parameters = extra_float_digits,options
logfile = {log}
pidfile = {pid}
{user_line}
"""


@dataclass
class PgBouncer:
    port: int
    process: subprocess.Popen
    workdir: Path

    def url(self, database: str, user: str = "postgres") -> str:
        return f"postgres://{user}@127.0.0.1:{self.port}/{database}"

    def transactions(self, database: str) -> int:
        """Transactions PgBouncer has pooled for `database` so far (its admin console's SHOW STATS)."""
        import psycopg

        with psycopg.connect(self.url("pgbouncer"), autocommit=True, prepare_threshold=None) as admin:
            cursor = admin.execute("SHOW STATS")
            columns = [c.name for c in cursor.description or []]
            rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        return sum(int(row["total_xact_count"]) for row in rows if row["database"] == database)

    def log(self) -> str:
        path = self.workdir / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def kill9(self) -> None:
        """Kill the pooler outright (SIGKILL): every client and server connection drops at once, as in a crash."""
        self.process.kill()
        self.process.wait(10)

    def restart(self) -> None:
        """Start it again on the same port with the same configuration (after `kill9`)."""
        (self.workdir / "pgbouncer.pid").unlink(missing_ok=True)  # left behind by a SIGKILL
        self.process = subprocess.Popen(
            [PGBOUNCER, str(self.workdir / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
        )
        if not wait_for_port(self.port, 15, alive=lambda: self.process.poll() is None):
            raise RuntimeError(f"pgbouncer did not restart on port {self.port}:\n{self.log()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # SIGINT: shut down now, closing server connections
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_pgbouncer(
    *,
    server_host: str = "127.0.0.1",
    server_port: int = 5432,
    users: tuple[str, ...] = ("postgres",),
    pool_size: int = 8,
) -> PgBouncer:
    """Start PgBouncer (transaction pooling, trust auth) and return once it accepts connections."""
    if not os.path.exists(PGBOUNCER):
        raise RuntimeError("pgbouncer is not installed (Debian: apt-get install pgbouncer)")
    workdir = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    # PgBouncer refuses to run as root: it drops to the postgres user, which must own its files.
    run_as = "postgres" if os.geteuid() == 0 else ""
    auth_file = workdir / "users.txt"
    auth_file.write_text("".join(f'"{user}" ""\n' for user in users))
    last_log = ""
    for _ in range(5):  # the free port may be taken between the probe and the bind
        listen_port = free_port()
        ini = workdir / "pgbouncer.ini"
        ini.write_text(
            CONFIG.format(
                host=server_host,
                port=server_port,
                listen_port=listen_port,
                auth_file=auth_file,
                admin=users[0],
                pool_size=pool_size,
                log=workdir / "pgbouncer.log",
                pid=workdir / "pgbouncer.pid",
                user_line=f"user = {run_as}" if run_as else "",
            )
        )
        if run_as:
            entry = pwd.getpwnam(run_as)
            for path in (workdir, auth_file, ini):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        process = subprocess.Popen(
            [PGBOUNCER, str(ini)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, cwd=workdir
        )
        bouncer = PgBouncer(listen_port, process, workdir)
        if wait_for_port(listen_port, 15, alive=lambda p=process: p.poll() is None):
            return bouncer
        last_log = bouncer.log()
        if process.poll() is None:
            process.kill()
        process.wait(10)
    shutil.rmtree(workdir, ignore_errors=True)
    raise RuntimeError(f"pgbouncer did not start:\n{last_log}")
