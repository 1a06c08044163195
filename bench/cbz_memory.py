"""Peak memory of serving a chapter as CBZ: a ~500 MB chapter vs a tiny one (must stay flat).

    python bench/cbz_memory.py [--megabytes 500] [--page-megabytes 10] \
        [--database-url postgres://postgres@127.0.0.1:5432/mangalord_bench_cbz]

Creates a scratch PostgreSQL database, writes one incompressible "page"
(a JPEG header and random bytes) of `--page-megabytes` into a temp
MEDIA_ROOT and hard-links it as every page of a chapter totalling
`--megabytes`, plus a one-page chapter of 1 KB. Each case runs in a fresh
child process that GETs `/opds/chapters/<id>/cbz/` through Django's full
stack (test client, HTTP Basic, the production view) and drains the
streamed body chunk by chunk, counting bytes; it reports RSS before and
peak RSS (VmHWM) after. A contrast child builds the same archive in memory
with `zipfile`, the way a non-streaming export would.

The production web server is Daphne (ASGI), where Django reads a plain
iterator whole before sending it unless the view hands over an async one
(catalog/streaming.py): two more rows serve both chapters from a real
`daphne` process, downloaded with httpx chunk by chunk, and report the
server's RSS before and its peak (VmHWM) after.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import sys
import tempfile
import zipfile
from importlib import metadata

import measure
import scratch
from scratch import REPO_ROOT

DEFAULT_DB_URL = "postgres://postgres@127.0.0.1:5432/mangalord_bench_cbz"


def seed(media_root: str, megabytes: int, page_megabytes: int) -> dict[str, str]:
    import hashlib

    from django.contrib.auth import get_user_model

    from catalog.models import Chapter, Manga, Page, Source

    os.makedirs(os.path.join(media_root, "pages"), exist_ok=True)
    master = os.path.join(media_root, "pages", "master.jpg")
    with open(master, "wb") as out:
        out.write(b"\xff\xd8\xff\xe0" + os.urandom(page_megabytes * 1024 * 1024))
    tiny = os.path.join(media_root, "pages", "tiny.jpg")
    with open(tiny, "wb") as out:
        out.write(b"\xff\xd8\xff\xe0" + os.urandom(1024))
    get_user_model().objects.create_user("bench", password="bench-password")
    source = Source.objects.create(id="bench", name="Bench", base_url="http://bench.invalid")
    ids = {}
    for label, pages in (("tiny", 1), ("large", max(1, megabytes // page_megabytes))):
        manga = Manga.objects.create(title=f"Bench {label}")
        chapter = Chapter.objects.create(
            manga=manga, source=source, source_chapter_key=label, number=1, sync_state="done", page_count=pages
        )
        source_file = tiny if label == "tiny" else master
        size = os.path.getsize(source_file)
        with open(source_file, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        rows = []
        for index in range(pages):
            name = f"pages/{label}-{index:04d}.jpg"
            os.link(source_file, os.path.join(media_root, name))
            rows.append(
                Page(
                    chapter=chapter,
                    index=index,
                    image=name,
                    content_type="image/jpeg",
                    width=1,
                    height=1,
                    bytes=size,
                    sha256=digest,
                )
            )
        Page.objects.bulk_create(rows)
        ids[label] = str(chapter.id)
    return ids


def child(chapter_id: str, mode: str) -> None:
    scratch.setup_django(os.environ["BENCH_DB_URL"])
    from django.test import Client

    from catalog.models import Chapter
    from reader.cbz import chapter_pages

    before = measure.rss_mb()
    if mode == "buffered":
        from django.core.files.storage import default_storage

        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
            for page in chapter_pages(Chapter.objects.get(pk=chapter_id)):
                with default_storage.open(page.image.name, "rb") as handle:
                    archive.writestr(page.image.name, handle.read())
        size = buffer.getbuffer().nbytes
    else:
        token = base64.b64encode(b"bench:bench-password").decode()
        response = Client().get(f"/opds/chapters/{chapter_id}/cbz/", HTTP_AUTHORIZATION=f"Basic {token}")
        assert response.status_code == 200 and response.streaming
        size = sum(len(chunk) for chunk in response.streaming_content)
        assert size == int(response["Content-Length"])
    print(json.dumps({"size": size, "rss_before_mb": before, "peak_rss_mb": measure.peak_rss_mb()}))


def through_daphne(chapter_id: str, env: dict[str, str]) -> dict:
    """GET the chapter's CBZ from a fresh `daphne` process; its RSS before the request and its peak after."""
    import socket
    import subprocess
    import time

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server_env = {**env, "DATABASE_URL": env["BENCH_DB_URL"], "ALLOWED_HOSTS": "127.0.0.1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "mangalord.asgi:application"],
        cwd=REPO_ROOT,
        env=server_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/opds/chapters/{chapter_id}/cbz/"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/login/", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("daphne did not start") from None
                time.sleep(0.2)
        before = measure.process_rss_mb(server.pid)
        size = 0
        with httpx.stream("GET", url, auth=("bench", "bench-password"), timeout=120) as response:
            assert response.status_code == 200, response.status_code
            for chunk in response.iter_bytes():
                size += len(chunk)
        assert size == int(response.headers["Content-Length"])
        return {"size": size, "rss_before_mb": before, "peak_rss_mb": measure.process_peak_rss_mb(server.pid)}
    finally:
        server.terminate()
        server.wait(timeout=15)


def run_child(chapter_id: str, mode: str, env: dict[str, str]) -> dict:
    return measure.run_json_child(__file__, ["--child", chapter_id, "--mode", mode], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=500)
    parser.add_argument("--page-megabytes", type=int, default=10)
    parser.add_argument("--database-url", default=DEFAULT_DB_URL)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.mode)
    if args.megabytes < args.page_megabytes or args.page_megabytes < 1:
        parser.error("--megabytes must be >= --page-megabytes >= 1")
    scratch.recreate_database(args.database_url)
    with tempfile.TemporaryDirectory() as media_root:
        os.environ["MEDIA_ROOT"] = media_root
        try:
            scratch.setup_django(args.database_url)
            import django
            from django.core.management import call_command
            from django.db import connection

            call_command("migrate", verbosity=0)
            ids = seed(media_root, args.megabytes, args.page_megabytes)
            connection.close()
            env = {**os.environ, "PYTHONPATH": REPO_ROOT, "MEDIA_ROOT": media_root, "BENCH_DB_URL": args.database_url}
            rows = [
                ("tiny chapter, streamed", run_child(ids["tiny"], "stream", env)),
                ("large chapter, streamed", run_child(ids["large"], "stream", env)),
                ("large chapter, in memory (contrast)", run_child(ids["large"], "buffered", env)),
                ("tiny chapter, daphne (production)", through_daphne(ids["tiny"], env)),
                ("large chapter, daphne (production)", through_daphne(ids["large"], env)),
            ]
        finally:
            scratch.drop_database(args.database_url)
    print(
        f"Python {sys.version.split()[0]}, Django {django.get_version()}, zipstream-ng {metadata.version('zipstream-ng')}"
    )
    measure.print_memory_rows(rows, size_column="CBZ bytes")
    measure.print_flatness("streamed", rows[0][1], rows[1][1])
    measure.print_flatness("daphne", rows[3][1], rows[4][1])


if __name__ == "__main__":
    main()
