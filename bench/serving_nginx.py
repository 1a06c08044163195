"""nginx for bench/serve.py: the stored files served directly, or in front of the web process with the hand-off.

Runs in the foreground as our child with its own prefix (as bench/crawling/serve.py's nginx does). The
front's configuration is the one docs/serving.md documents: an internal `/protected/` location over
MEDIA_ROOT for `X-Accel-Redirect`, everything else proxied to the web process over kept-alive connections.
"""

from __future__ import annotations

import grp
import os
import pwd
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType


def config(prefix: Path, port: int, media_root: Path, upstream: int | None) -> str:
    user = f"user {pwd.getpwuid(0).pw_name} {grp.getgrgid(0).gr_name};\n" if os.geteuid() == 0 else ""
    temp = "".join(
        f"    {n}_temp_path {prefix / 'temp' / n};\n" for n in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    if upstream is None:
        locations = f"        location /media/ {{ alias {media_root}/; }}\n"
        upstream_block = ""
    else:
        upstream_block = f"    upstream mangalord {{ server 127.0.0.1:{upstream}; keepalive 32; }}\n"
        locations = (
            f"        location /protected/ {{ internal; alias {media_root}/; }}\n"
            "        location / {\n"
            "            proxy_pass http://mangalord;\n"
            "            proxy_http_version 1.1;\n"
            '            proxy_set_header Connection "";\n'
            "            proxy_set_header Host $host;\n"
            "            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n"
            "            proxy_set_header X-Forwarded-Proto $scheme;\n"
            "        }\n"
        )
    return f"""{user}daemon off;
worker_processes auto;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} warn;
events {{ worker_connections 4096; }}
http {{
    types {{ image/jpeg jpg; image/png png; image/webp webp; image/gif gif; image/avif avif; }}
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    open_file_cache max=20000 inactive=60s;
    access_log off;
{temp}{upstream_block}    server {{
        listen 127.0.0.1:{port} backlog=4096;
{locations}    }}
}}
"""


class Nginx:
    def __init__(self, prefix: Path, port: int, media_root: Path, *, upstream: int | None = None) -> None:
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (prefix / "temp" / name).mkdir(parents=True, exist_ok=True)
        conf = prefix / "nginx.conf"
        conf.write_text(config(prefix, port, media_root, upstream))
        self.prefix, self.port = prefix, port
        command = ["nginx", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL)

    def __enter__(self) -> Nginx:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.process.poll() is None:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.05)
        self.stop()
        raise SystemExit(f"nginx did not start:\n{(self.prefix / 'error.log').read_text()[-2000:]}")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def pids(self) -> list[int]:
        return [self.process.pid]  # the master; its workers are counted as its children

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
