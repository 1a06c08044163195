"""Several worker processes from one command (`--processes N`): forked children, signals passed on, one exit code.

One worker process runs its job threads under one GIL, so on a machine with
more cores than that a crawl stops at one core of Python. `--processes N`
forks N copies of the worker after Django is set up (the imports are paid
once, shared copy-on-write) and splits the job threads between them. Each
child is an ordinary worker: its own database connections, status row,
leases and signal handling; the queue's rules are what keep the pages
exactly-once between them, as between workers on different hosts.

The parent only waits. SIGTERM or SIGINT to it is passed on once to every
child (each then releases its in-flight jobs and exits); a child started in
its own process group does not also get a terminal's Ctrl-C, so it never
sees that as a second, forcing signal. A child dies with the parent
(`PR_SET_PDEATHSIG`: a SIGTERM when the parent is killed outright). When a
child fails (exit status not 0) the others are stopped and the command exits
with its status, so a supervisor restarts the whole set.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable

from django.db import connections

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_PR_SET_PDEATHSIG = 1


def split_threads(threads: int, processes: int) -> list[int]:
    """`threads` job threads over `processes` processes, as evenly as they go (the first ones take the rest)."""
    if processes > threads:
        raise ValueError(
            f"--processes {processes} is more than the {threads} job threads to share "
            f"(--workers / JOBS_WORKERS): give each process at least one"
        )
    share, rest = divmod(threads, processes)
    return [share + (1 if index < rest else 0) for index in range(processes)]


def run_processes(shares: list[int], run_one: Callable[[int], int]) -> int:
    """Run `run_one(threads)` in one forked child per entry of `shares`; the exit status of the set.

    With a single share it runs here, in this process, as a plain worker.
    """
    if len(shares) == 1:
        return run_one(shares[0])
    if threading.active_count() > 1:
        # fork() copies only the calling thread: a lock another thread holds would stay held in the child.
        raise RuntimeError("worker processes must be forked before any thread starts")
    # An unreachable database is the operator's to fix: said once, here (mangalord.startup), not by every child.
    connections["default"].ensure_connection()
    connections.close_all()  # a connection must not be shared by two processes
    # What start-up built (modules, settings, the ORM's models) lives as long as the process: out of the
    # collector's sight, a collection in a child neither walks it nor copies its shared pages (bench/README.md).
    gc.freeze()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    children: dict[int, int] = {}  # pid -> index
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        for index, threads in enumerate(shares):
            pid = os.fork()
            if pid == 0:
                _child(parent, run_one, threads)  # never returns
            children[pid] = index
    except BaseException:
        _signal_all(children, signal.SIGTERM)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        raise
    logger.info(
        "started %d worker processes (pids %s; job threads %s)",
        len(children),
        ",".join(map(str, children)),
        "+".join(map(str, shares)),
    )
    return _wait(children)


def _child(parent: int, run_one: Callable[[int], int], threads: int) -> None:
    code = 1
    try:
        os.setpgid(0, 0)  # a terminal's Ctrl-C reaches the parent only, which passes it on once
        _die_with_parent()
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)  # until the worker installs its own
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        if os.getppid() != parent:  # the parent died before the line above could take effect
            os._exit(1)
        code = run_one(threads)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        logger.exception("worker process %d failed", os.getpid())
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _signal_all(children: list[int] | dict[int, int], signum: int) -> None:
    for pid in children:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def _wait(children: dict[int, int]) -> int:
    """Pass stop signals on, reap every child; the first failing child's status stops the rest."""

    def on_signal(signum: int, _frame: object) -> None:
        # Passed on here, not after the wait: os.waitpid is retried after a handler (PEP 475) and would not return.
        logger.info("signal %s: passing it on to %d worker process(es)", signal.Signals(signum).name, len(children))
        _signal_all(list(children), signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    result = 0
    try:
        while children:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if children.pop(pid, None) is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            if code != 0 and result == 0:
                result = code if code > 0 else 128 - code  # killed by a signal: the shell's convention
                if children:
                    logger.error("worker process %d exited with %d; stopping the others", pid, code)
                    _signal_all(list(children), signal.SIGTERM)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return result
