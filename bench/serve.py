"""Serving benchmark: page requests through the web process against nginx serving the same files.

    python bench/serve.py [--seconds 10] [--connections 8] [--workers N] [--baseline-tree /path/to/old/checkout]
        [--database-url postgres://postgres@127.0.0.1:5432/mangalord_bench_serve]

Builds the demo library (`manage.py demo --no-serve --no-analysis`: the
built-in demo site crawled into a scratch PostgreSQL database and a scratch
data directory), makes a reader with a password, then runs wrk with
--connections connections for --seconds (after a 2 s warm-up) against one
page through three routes: the Komga page route (HTTP Basic, as Mihon asks),
the web reader's page route (session cookie) and OPDS-PSE (HTTP Basic; each
request also moves the reader's progress, as a PSE client's does), and the
same page by the signed URLs the web reader and the PSE feed hand out
(mangalord/signed_routes.py: no session, no password; PSE still records the
progress). Servers:

  daphne      one Daphne process, as README ran it (from --baseline-tree when given: the code before)
  uvicorn     uvicorn with uvloop and httptools, --workers processes (the runner-up)
  web         `manage.py serve`: Granian, --workers processes (the documented web process)
  nginx       nginx serving the stored file itself, no permission check (the ceiling)
  nginx+web   nginx in front of `manage.py serve` with SERVE_ACCEL_REDIRECT: the web process checks, nginx sends;
              a signed web reader page is checked and sent by nginx alone (SERVE_SIGNED_BY_NGINX)

Printed per route and server: requests/s, CPU seconds per 1,000 requests
(user + system of the server's processes, nginx's included where it
takes part; PostgreSQL's backends not counted) and the rate as a ratio of
nginx's. Any answer but 200 fails the run. The old Daphne does not know the signed routes: a signed
route's `× daphne` is against Daphne's rate on the ordinary route it replaces.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import scratch
import serving_nginx
from crawling.serve import free_ports

DEFAULT_DB_URL = "postgres://postgres@127.0.0.1:5432/mangalord_bench_serve"
PASSWORD = "bench-reader-password"
SIGNING_KEY = "bench-signing-key-" + "0" * 32
# A signed route and the ordinary route whose Daphne rate it is compared with.
REPLACES = {"signed web page": "web reader page", "signed PSE page": "OPDS-PSE page"}
WARM_UP_SECS = 2
_RATE = re.compile(r"Requests/sec:\s+([\d.]+)")
_TOTAL = re.compile(r"(\d+) requests in")
_BAD = re.compile(r"Non-2xx or 3xx responses: (\d+)")

READER_SCRIPT = """
import json, os, time, django
django.setup()
from catalog.serving.signing import page_path, pse_path
from django.contrib.auth import get_user_model
from django.test import Client
from catalog.models import Page
user, _ = get_user_model().objects.get_or_create(username="bench-reader")
user.set_password(%(password)r)
user.save()
client = Client()
client.force_login(user)
page = Page.objects.select_related("chapter").order_by("chapter__number", "index").first()
key, now = os.environ["SERVE_SIGNING_KEY"], time.time()
signed = {nginx: page_path(key, name=page.image.name, etag=page.sha256, content_type=page.content_type,
                           user=user.pk, now=now, lifetime=86400, nginx=nginx) for nginx in (False, True)}
print(json.dumps({"page": str(page.id), "chapter": str(page.chapter_id), "image": page.image.name,
                  "session": client.cookies["sessionid"].value, "signed": signed[False], "signed_nginx": signed[True],
                  "signed_pse": pse_path(key, chapter=str(page.chapter_id), user=user.pk, now=now, lifetime=86400)}))
"""


@dataclass(frozen=True)
class Library:
    data_dir: Path
    page: str
    chapter: str
    image: str
    session: str
    signed: str  # the page's signed URL, HMAC form
    signed_nginx: str  # the same, in the form nginx checks
    signed_pse: str  # the chapter's signed PSE stream, up to the page number

    @property
    def media_root(self) -> Path:
        return self.data_dir / "media"


@dataclass(frozen=True)
class Route:
    label: str
    path: str
    headers: tuple[str, ...]


@dataclass(frozen=True)
class Result:
    rate: float
    cpu_per_k: float


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=DEFAULT_DB_URL)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--baseline-tree", type=Path, default=Path(scratch.REPO_ROOT), help="checkout daphne runs")
    return parser.parse_args()


def server_env(db_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, DATABASE_URL=db_url, MANGALORD_DATA_DIR=str(data_dir), DEBUG="false",
               SERVE_SIGNING_KEY=SIGNING_KEY)  # fmt: skip
    env.update(LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1", **extra)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def build_library(db_url: str, data_dir: Path) -> Library:
    scratch.recreate_database(db_url)
    env = server_env(db_url, data_dir)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "demo", "--no-serve", "--no-analysis"], cwd=scratch.REPO_ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", READER_SCRIPT % {"password": PASSWORD}],
        cwd=scratch.REPO_ROOT,
        env=dict(env, DJANGO_SETTINGS_MODULE="mangalord.settings", PYTHONPATH=scratch.REPO_ROOT),
        check=True,
        capture_output=True,
        text=True,
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    if not (found["signed"] and found["signed_nginx"] and found["signed_pse"]):
        raise SystemExit(f"the demo's page {found['image']} could not be signed")
    return Library(data_dir, found["page"], found["chapter"], found["image"], found["session"], found["signed"],
                   found["signed_nginx"], found["signed_pse"])  # fmt: skip


def routes(library: Library, *, signed: bool = True, nginx_front: bool = False) -> list[Route]:
    """The routes measured; `signed`: with the signed ones; `nginx_front`: the page URL in nginx's form."""
    import base64

    basic = "Authorization: Basic " + base64.b64encode(f"bench-reader:{PASSWORD}".encode()).decode()
    ordinary = [
        Route("Komga page", f"/api/v1/books/{library.chapter}/pages/1", (basic,)),
        Route("web reader page", f"/read/pages/{library.page}/image/", (f"Cookie: sessionid={library.session}",)),
        Route("OPDS-PSE page", f"/opds/chapters/{library.chapter}/pages/0/", (basic,)),
    ]
    page = library.signed_nginx if nginx_front else library.signed
    return ordinary + (
        [Route("signed web page", page, ()), Route("signed PSE page", f"{library.signed_pse}0/", ())]
        if signed else []
    )  # fmt: skip


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of `pids` and all their descendants, living now, each process counted once."""
    processes: dict[int, psutil.Process] = {}
    for pid in pids:
        try:
            root = psutil.Process(pid)
            processes.update((proc.pid, proc) for proc in [root, *root.children(recursive=True)])
        except psutil.NoSuchProcess:
            continue
    total = 0.0
    for proc in processes.values():
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def wrk(url: str, headers: tuple[str, ...], seconds: int, connections: int) -> tuple[float, int]:
    """(requests/s, requests) of one wrk run; any non-2xx answer stops the benchmark."""
    command = ["wrk", "-t", "2", "-c", str(connections), "-d", f"{seconds}s", "--latency"]
    for header in headers:
        command += ["-H", header]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    bad = _BAD.search(out)
    if bad:
        raise SystemExit(f"{url}: {bad.group(1)} answers were not 2xx\n{out}")
    return float(_RATE.search(out).group(1)), int(_TOTAL.search(out).group(1))  # type: ignore[union-attr]


def measure(url: str, route: Route, pids: list[int], args: argparse.Namespace) -> Result:
    wrk(url, route.headers, WARM_UP_SECS, args.connections)
    before = cpu_seconds(pids)
    rate, total = wrk(url, route.headers, args.seconds, args.connections)
    return Result(rate, (cpu_seconds(pids) - before) / total * 1000)


@contextmanager
def python_server(command: list[str], port: int, env: dict[str, str], cwd: str) -> Iterator[list[int]]:
    """A Python web server started with `command` on `port`; yields its pid once it answers."""
    log = tempfile.NamedTemporaryFile(prefix="serve-bench-", suffix=".log", delete=False)  # noqa: SIM115
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_answering(port, process, Path(log.name))
        yield [process.pid]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        time.sleep(1)  # let the port and the database sessions go


def _wait_answering(port: int, process: subprocess.Popen, log: Path) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=2)  # noqa: S310
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise SystemExit(f"the server on {port} did not answer:\n{log.read_text()[-3000:]}")


def run(args: argparse.Namespace, library: Library, prefix: Path) -> dict[str, dict[str, Result]]:
    env = server_env(args.database_url, library.data_dir, MANGALORD_WEB_PROCESS="1")  # pooled, as `serve` runs
    here = scratch.REPO_ROOT
    web_port, front_port, static_port = free_ports(3)
    table: dict[str, dict[str, Result]] = {}
    workers = str(args.workers)
    baseline = dict(env, PYTHONPATH=str(args.baseline_tree), PYTHONDONTWRITEBYTECODE="1")  # another checkout: read only
    baseline.pop("MANGALORD_WEB_PROCESS")  # as README ran it
    servers = {
        "daphne": ([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(web_port),
                    "mangalord.asgi:application"], baseline, str(args.baseline_tree)),
        "uvicorn": ([sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(web_port),
                     "--workers", workers, "--loop", "uvloop", "--http", "httptools", "--no-access-log",
                     "--log-level", "warning", "mangalord.asgi:application"], env, here),
        "web": ([sys.executable, "manage.py", "serve", "--port", str(web_port), "--workers", workers], env, here),
    }  # fmt: skip
    for name, (command, server_environment, cwd) in servers.items():
        with python_server(command, web_port, server_environment, cwd) as pids:
            for route in routes(library, signed=name != "daphne"):  # the old tree has no signed routes
                table.setdefault(route.label, {})[name] = measure(
                    f"http://127.0.0.1:{web_port}{route.path}", route, pids, args
                )
    static = Route("static", f"/media/{library.image}", ())
    with serving_nginx.start(prefix / "static", static_port, library.media_root) as nginx:
        result = measure(f"http://127.0.0.1:{static_port}{static.path}", static, nginx.pids(), args)
    for route in routes(library):
        table[route.label]["nginx"] = result
    accel = dict(env, SERVE_ACCEL_REDIRECT="/protected/", SERVE_SIGNED_BY_NGINX="true")
    command = [sys.executable, "manage.py", "serve", "--port", str(web_port), "--workers", workers]
    with (
        python_server(command, web_port, accel, here) as pids,
        serving_nginx.start(
            prefix / "front", front_port, library.media_root, upstream=web_port, signing_key=SIGNING_KEY
        ) as nginx,
    ):
        for route in routes(library, nginx_front=True):
            table[route.label]["nginx+web"] = measure(
                f"http://127.0.0.1:{front_port}{route.path}", route, [*pids, *nginx.pids()], args
            )
    return table


def report(table: dict[str, dict[str, Result]], args: argparse.Namespace) -> None:
    print(f"\n{args.connections} connections, {args.seconds} s a run, {args.workers} worker processes, "
          f"{len(os.sched_getaffinity(0))} cores\n")  # fmt: skip
    print(f"{'route':<17} {'server':<10} {'req/s':>9} {'CPU s/1k req':>13} {'× nginx':>8} {'× daphne':>9}")
    for label, rows in table.items():
        nginx, daphne = rows["nginx"].rate, table[REPLACES.get(label, label)]["daphne"].rate
        for name, result in rows.items():
            print(
                f"{label:<17} {name:<10} {result.rate:>9,.0f} {result.cpu_per_k:>13.2f} "
                f"{result.rate / nginx:>8.3f} {result.rate / daphne:>9.1f}"
            )


def main() -> None:
    args = arguments()
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as work:
        library = build_library(args.database_url, Path(work) / "data")
        try:
            report(run(args, library, Path(work)), args)
        finally:
            scratch.drop_database(args.database_url)


if __name__ == "__main__":
    main()
