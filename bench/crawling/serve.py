"""The site's server and the plain downloader: nginx on 127.0.0.1 ports of our own, aria2c, nginx's access log.

nginx (Debian `nginx-light`) runs from a generated configuration with its
own prefix, pid, logs and temp directories, in the foreground as our child
(`daemon off`), so it stops with us. Static files, sendfile, keep-alive and
an open-file cache: the site answers from the page cache and is never what
a crawl waits for.
"""

from __future__ import annotations

import grp
import os
import pwd
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import psutil

from crawling import procstat

# One line per request: when it was answered (seconds, millisecond resolution), on which port, what.
ACCESS_FORMAT = "$msec $server_port $status $body_bytes_sent $request_uri"
TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def free_ports(count: int) -> list[int]:
    """Ports the kernel has just handed out on 127.0.0.1 (held together, so they are distinct)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def nginx_main(prefix: Path) -> str:
    """The part of every configuration we generate outside `http {}`: foreground, our own pid and error log."""
    user = ""
    if os.geteuid() == 0:
        # As root, nginx would hand its workers to `nobody`, who cannot read a home directory's cache.
        user = f"user {pwd.getpwuid(0).pw_name} {grp.getgrgid(0).gr_name};\n"
    return f"""{user}daemon off;
worker_processes auto;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} warn;
events {{ worker_connections 4096; }}
"""


def nginx_http_common(prefix: Path) -> str:
    """The settings inside `http {}` both benchmarks share: temp paths under the prefix, sendfile, keep-alive."""
    temp = "".join(f"    {name}_temp_path {prefix / 'temp' / name};\n" for name in TEMP_DIRS)
    return f"""    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    open_file_cache max=20000 inactive=60s;
    open_file_cache_valid 60s;
{temp}"""


def nginx_config(prefix: Path, sites: list[tuple[int, Path]], *, access_log: bool) -> str:
    """One server block per (port, document root); all of them log to one access log when asked."""
    log = (
        f"    log_format bench '{ACCESS_FORMAT}';\n    access_log {prefix / 'access.log'} bench;"
        if access_log
        else "    access_log off;"
    )
    servers = "\n".join(
        f"    server {{\n        listen 127.0.0.1:{port} backlog=4096;\n        root {root};\n"
        "        location / { try_files $uri $uri/index.html =404; }\n    }"
        for port, root in sites
    )
    return f"""{nginx_main(prefix)}http {{
    types {{ text/html html; image/jpeg jpg; }}
    charset utf-8;
{nginx_http_common(prefix)}{log}
{servers}
}}
"""


def version(command: list[str]) -> str:
    """The first line a tool prints about its version (nginx prints it on stderr)."""
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return (out.stdout or out.stderr).strip().splitlines()[0]


class Nginx:
    """nginx running `config` (listening on `ports`) until `stop()`; `pids()` are its master and workers."""

    def __init__(self, prefix: Path, ports: list[int], config: str) -> None:
        self.prefix = prefix
        self.ports = ports
        for name in TEMP_DIRS:
            (prefix / "temp" / name).mkdir(parents=True, exist_ok=True)
        self.conf = prefix / "nginx.conf"
        self.conf.write_text(config)
        self.access_log = prefix / "access.log"
        command = ["nginx", "-p", str(prefix), "-c", str(self.conf), "-e", str(prefix / "error.log")]
        with open(prefix / "stderr.log", "wb") as stderr:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stderr=stderr, preexec_fn=procstat.die_with_parent
            )
        self._wait_listening()

    def __enter__(self) -> Nginx:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + 10
        pending = set(self.ports)
        while pending:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                logs = "".join((self.prefix / name).read_text()[-2000:] for name in ("stderr.log", "error.log"))
                raise SystemExit(f"nginx did not start listening on {sorted(pending)}:\n{logs}")
            for port in list(pending):
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        pending.discard(port)
            time.sleep(0.05)

    def pids(self) -> list[int]:
        try:
            master = psutil.Process(self.process.pid)
            return [master.pid, *(child.pid for child in master.children())]
        except psutil.NoSuchProcess:
            return []

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: workers finish and flush their logs
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass(frozen=True)
class Access:
    at: float  # seconds since the epoch, as nginx logged the answer
    port: int
    status: int
    bytes: int
    uri: str


def read_access_log(path: Path) -> list[Access]:
    entries = []
    for line in path.read_text().splitlines():
        at, port, status, size, uri = line.split(" ", 4)
        entries.append(Access(float(at), int(port), int(status), int(size), uri))
    return entries


def aria2c_command(input_file: Path, out_dir: Path, concurrency: int) -> list[str]:
    """aria2c fetching every URL of `input_file` with `concurrency` downloads at once, one connection each."""
    return [
        "aria2c",
        f"--input-file={input_file}",
        f"--dir={out_dir}",
        f"--max-concurrent-downloads={concurrency}",
        "--max-connection-per-server=1",
        "--split=1",
        "--file-allocation=none",
        "--auto-file-renaming=false",
        "--allow-overwrite=true",
        "--console-log-level=warn",
        "--summary-interval=0",
        "--show-console-readout=false",
        "--download-result=hide",
    ]


def aria2c_input(base_url: str, paths: list[str]) -> str:
    """aria2c's input file: each URL with its own output path, since page names repeat across chapters."""
    return "".join(f"{base_url}/{path}\n  out={path}\n" for path in paths)


def static_sites(prefix: Path, sites: list[tuple[int, Path]], *, access_log: bool = False) -> Nginx:
    """nginx serving each (port, document root) of `sites` as a plain static site."""
    return Nginx(prefix, [port for port, _ in sites], nginx_config(prefix, sites, access_log=access_log))
