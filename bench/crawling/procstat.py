"""CPU and memory of the processes a run involves, read from /proc while they run.

A `Sampler` thread looks every 100 ms at: our processes (given by pid, with
their descendants), the PostgreSQL backends serving the scratch database
(found by pid in `pg_stat_activity`, read from the maintenance database so
the sampler's own session is never counted) and nginx. Per process it keeps
the CPU time (utime + stime) first and last seen and the peak RSS (VmHWM).
A process born after the sampler started counts from zero; one alive at the
start counts from its first reading. A backend that lives less than one
look is missed: `sessions` from `pg_stat_database` tells whether any were.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field

import psutil
import psycopg

TICKS = os.sysconf("SC_CLK_TCK")
LOOK_SECS = 0.1


def _boot_ticks_now() -> float:
    with open("/proc/uptime") as uptime:
        return float(uptime.read().split()[0]) * TICKS


def read_stat(pid: int) -> tuple[float, float, float] | None:
    """(user CPU seconds, system CPU seconds, start time in ticks since boot) of `pid`, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # After the command name: state is field 3, utime 14, stime 15, starttime 22 (1-based in proc(5)).
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS, float(fields[19])


def peak_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


@dataclass
class Seen:
    """CPU (user, system) when first and last seen, and the peak RSS."""

    first: tuple[float, float]
    last: tuple[float, float]
    peak_rss_mb: float = 0.0
    name: str = ""
    # A process reaped by an ancestor whose rusage was settled: its CPU is in that figure already.
    in_ancestor: bool = False

    @property
    def system(self) -> float:
        return self.last[1] - self.first[1]

    @property
    def cpu(self) -> float:
        return self.last[0] - self.first[0] + self.system


@dataclass
class Group:
    processes: dict[int, Seen] = field(default_factory=dict)

    @property
    def cpu(self) -> float:
        return sum(seen.cpu for seen in self.processes.values() if not seen.in_ancestor)

    @property
    def system(self) -> float:
        return sum(seen.system for seen in self.processes.values() if not seen.in_ancestor)


class Sampler:
    """Samples `ours` (pids and their descendants), `database`'s backends and `nginx` until `stop()`."""

    def __init__(
        self, admin_dsn: str, database: str | None, *, nginx: list[int] | None = None, ignore: set[int] | None = None
    ) -> None:
        self.groups = {"ours": Group(), "postgres": Group(), "nginx": Group()}
        self._ours: set[int] = set()
        self._descendants: dict[int, set[int]] = {}  # a watched pid -> every descendant seen
        self._nginx = list(nginx or [])
        self._database = database
        self._ignore = ignore or set()  # backends of the benchmark's own sessions
        self._admin_dsn = admin_dsn
        self._started_ticks = _boot_ticks_now()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="proc-sampler", daemon=True)
        self.sessions_before = self._sessions()
        self.sessions_opened = 0  # set by stop()
        self._thread.start()

    def watch(self, pid: int) -> None:
        """Count `pid` (and whatever it starts) as ours from now on."""
        with self._lock:
            self._ours.add(pid)
        self._look()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._look()
        self.sessions_opened = self._sessions() - self.sessions_before

    def settle(self, group: str, pid: int, usage: Usage) -> None:
        """Replace the sampled CPU of `pid`, a child started after the sampler, by the kernel's exact figure.

        That figure holds the descendants it reaped (`wait_with_usage`): their
        own samples keep only their peak RSS, or they would count twice.
        """
        with self._lock:
            processes = self.groups[group].processes
            seen = processes.setdefault(pid, Seen((0.0, 0.0), (0.0, 0.0)))
            seen.first, seen.last = (0.0, 0.0), (usage.user, usage.system)
            for descendant in self._descendants.get(pid, set()):
                if descendant in processes:
                    processes[descendant].in_ancestor = True

    def _sessions(self) -> int:
        if self._database is None:
            return 0
        with psycopg.connect(self._admin_dsn, autocommit=True) as conn:
            row = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s", [self._database]).fetchone()
        return int(row[0]) if row else 0

    def _run(self) -> None:
        conn = psycopg.connect(self._admin_dsn, autocommit=True) if self._database else None
        try:
            while not self._stop.is_set():
                self._look(conn)
                self._stop.wait(LOOK_SECS)
        finally:
            if conn is not None:
                conn.close()

    def _backends(self, conn: psycopg.Connection | None) -> list[int]:
        if conn is None:
            return []
        conn.execute("SELECT pg_stat_clear_snapshot()")
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [self._database]).fetchall()
        return [int(pid) for (pid,) in rows if int(pid) not in self._ignore]

    def _ours_now(self) -> list[int]:
        pids = set(self._ours)
        for pid in list(self._ours):
            try:
                children = {child.pid for child in psutil.Process(pid).children(recursive=True)}
            except psutil.NoSuchProcess:
                continue
            pids.update(children)
            self._descendants.setdefault(pid, set()).update(children)
        return sorted(pids)

    def _look(self, conn: psycopg.Connection | None = None) -> None:
        """One reading of every process; without `conn` (from `watch` and `stop`) the backends already known."""
        with self._lock:
            ours = self._ours_now()
            known = list(self.groups["postgres"].processes)
        backends = self._backends(conn) if conn is not None else known
        for group, pids in (("ours", ours), ("postgres", backends), ("nginx", self._nginx)):
            for pid in pids:
                self._record(group, pid)

    def _record(self, group: str, pid: int) -> None:
        stat = read_stat(pid)
        if stat is None:
            return
        user, system, started = stat
        peak = peak_rss_mb(pid) or 0.0
        with self._lock:
            processes = self.groups[group].processes
            seen = processes.get(pid)
            if seen is None:
                born_after_start = started >= self._started_ticks - 1
                first = (0.0, 0.0) if born_after_start else (user, system)
                processes[pid] = seen = Seen(first, (user, system), name=_name(pid))
            seen.last = (max(seen.last[0], user), max(seen.last[1], system))
            seen.peak_rss_mb = max(seen.peak_rss_mb, peak)


def _name(pid: int) -> str:
    """A short label: the manage.py command a Python process runs, else the program's name."""
    try:
        argv = psutil.Process(pid).cmdline()
    except psutil.Error:
        return "?"
    for runner in ("manage.py", "count_sql.py"):
        for index, arg in enumerate(argv[:-1]):
            if arg.endswith(runner):
                return argv[index + 1]
    return os.path.basename(argv[0]) if argv else "?"


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """`preexec_fn` for children: the kernel sends them SIGTERM if the benchmark dies first (even by SIGKILL)."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass(frozen=True)
class Usage:
    code: int
    user: float
    system: float

    @property
    def cpu(self) -> float:
        return self.user + self.system


def wait_with_usage(process: subprocess.Popen) -> Usage:
    """Reap a child: its exit code and CPU seconds from the kernel's rusage (threads and reaped children included)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return Usage(process.returncode, usage.ru_utime, usage.ru_stime)
