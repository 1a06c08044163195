"""Peak memory of storing a large image vs a tiny one through `store_image_stream` (must stay flat).

    python bench/stream_memory.py [--megabytes 60]

Generates a noisy (incompressible) PNG of at least `--megabytes` once into a
temp directory plus a tiny PNG, serves both from a local HTTP server on
127.0.0.1, and stores each in a fresh child process through the production
path (guarded httpx stream -> `catalog.storage.store_image_stream` -> the
filesystem storage). Each child reports its RSS before the download and its
peak RSS (VmHWM) after. For contrast, a third child reads the large
image into memory in one piece, the way a non-streaming download would.
The S3 rows store the same images into a bucket on a local S3-protocol
server (moto's server mode, from requirements-dev.txt) through the S3
storage backend: staged on disk, then a multipart upload.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import tempfile
import threading
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from typing import Any

import measure
import scratch
from scratch import REPO_ROOT


def child(url: str, mode: str, media_root: str) -> None:
    """Runs in a fresh process: download `url` and report memory figures as one JSON line."""
    os.environ["MEDIA_ROOT"] = media_root
    scratch.setup_django()
    import httpx

    from catalog.storage import store_image_stream
    from sources.cookies import SourceCookies
    from sources.hosts import HostGuard
    from sources.http import SourceHttp

    before = measure.rss_mb()
    if mode == "buffered":
        size = len(httpx.get(url, timeout=60).content)
        name = "(kept in memory)"
    else:
        http = SourceHttp("bench", HostGuard("bench", url), SourceCookies())
        stream = http.open_image(url)
        try:
            stored = store_image_stream(stream, directory="bench/stream", max_bytes=1 << 40)
        finally:
            stream.close()
        size, name = stored.size, stored.name
    print(json.dumps({"size": size, "name": name, "rss_before_mb": before, "peak_rss_mb": measure.peak_rss_mb()}))


def make_images(directory: str, megabytes: int) -> dict[str, str]:
    from PIL import Image

    side = int((megabytes * 1024 * 1024 / 3) ** 0.5) + 1
    large = os.path.join(directory, "large.png")
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(large, compress_level=1)
    tiny = os.path.join(directory, "tiny.png")
    Image.new("RGB", (16, 16), "white").save(tiny)
    return {"tiny": tiny, "large": large}


def serve(directory: str) -> ThreadingHTTPServer:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=directory))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_child(url: str, mode: str, media_root: str, extra_env: dict[str, str] | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, **(extra_env or {})}
    return measure.run_json_child(__file__, ["--child", url, "--mode", mode, "--media-root", media_root], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=60, help="size of the large image (at least 50)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    parser.add_argument("--media-root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.mode, args.media_root)
    if args.megabytes < 50:
        parser.error("--megabytes must be at least 50")

    with tempfile.TemporaryDirectory() as served, tempfile.TemporaryDirectory() as media_root:
        print(f"generating a noisy PNG of >= {args.megabytes} MB ...", flush=True)
        files = make_images(served, args.megabytes)
        server = serve(served)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        rows = [
            ("tiny image, streamed", run_child(f"{base}/tiny.png", "stream", media_root)),
            ("large image, streamed", run_child(f"{base}/large.png", "stream", media_root)),
            ("large image, buffered (contrast)", run_child(f"{base}/large.png", "buffered", media_root)),
        ]
        s3 = s3_environment()
        try:
            rows += [
                ("tiny image, streamed to S3", run_child(f"{base}/tiny.png", "stream", media_root, s3.env)),
                ("large image, streamed to S3", run_child(f"{base}/large.png", "stream", media_root, s3.env)),
            ]
        finally:
            s3.server.stop()
        server.shutdown()
        for key, path in files.items():
            print(f"{key}: {os.path.getsize(path) / 1e6:.1f} MB on disk")
        measure.print_memory_rows(rows, size_column="bytes")
        measure.print_flatness("streamed", rows[0][1], rows[1][1])
        measure.print_flatness("streamed to S3", rows[3][1], rows[4][1])
        print(f"moto {version('moto')}, boto3 {version('boto3')}, django-storages {version('django-storages')}")


@dataclass
class S3Environment:
    server: Any
    env: dict[str, str]


def s3_environment() -> S3Environment:
    """A local S3-protocol server with one bucket, and the settings environment that stores into it."""
    from testsupport.s3 import start_moto_server, storage_env

    server = start_moto_server()
    server.client().create_bucket(Bucket="bench")
    env = storage_env(server.endpoint_url, "bench")
    return S3Environment(server, env)


if __name__ == "__main__":
    main()
