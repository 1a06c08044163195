"""Serving the demo: the port checked before anything is crawled, then the web server with its workers beside it."""

from __future__ import annotations

import errno
import socket
from typing import IO, Any

from rich.console import Console

from demo.progress import AnalysisFollower, WorkerThread
from mangalord import web_server


def port_problem(addr: str, port: int) -> str | None:
    """Why the site could not be served on addr:port (taken, not an address of this host), or None."""
    try:
        infos = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"cannot serve on {addr}:{port}: {exc.strerror} (pick another with --addr)"
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will: TIME_WAIT is no conflict
        try:
            sock.bind(address)
        except OSError as exc:
            hint = (
                "is another server running there? pick another with --port"
                if exc.errno == errno.EADDRINUSE
                else ("pick another with --addr or --port")
            )
            return f"cannot serve on {addr}:{port}: {exc.strerror} ({hint})"
    return None


def serve(addr: str, port: int, *, console: Console, analysis: Any, log: IO[str]) -> None:
    """Serve the site with the production web process (one worker, static files included) until interrupted.

    A crawl worker runs beside it, so the dashboard's controls (run a pass,
    reconcile, requeue) do real work; `analysis` (a worker, or None) goes on
    analysing the library in the background while a bar follows it. The
    server's own lines go to `log`. Ctrl-C stops the server, then the workers
    hand their in-flight jobs back.
    """
    from crawler.workers.roles import crawl_worker

    workers = [WorkerThread(crawl_worker(schedule=False))]
    follower = None
    if analysis is not None:
        workers.append(WorkerThread(analysis))
        follower = AnalysisFollower(console)
    try:
        web_server.run(addr, port, workers=1, output=log, log_level="info")  # its start-up lines in the log too
    finally:
        if follower is not None:
            follower.stop()
        for worker in workers:
            worker.stop()
