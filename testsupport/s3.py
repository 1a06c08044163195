"""A real S3-protocol server for the tests: moto's server mode on a free 127.0.0.1 port.

Spoken to through boto3 exactly as AWS S3 or MinIO would be. `CuttingProxy`
sits between a client and the server and cuts every connection that carries
more than a given number of request bytes (an upload part), which is a real
mid-upload network failure while small requests (create, complete, abort,
list) still pass.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

from testsupport.ports import free_port, wait_for_port

ACCESS_KEY = "mangalord-test"
SECRET_KEY = "mangalord-test-secret"
REGION = "us-east-1"


@dataclass
class MotoServer:
    endpoint_url: str
    process: subprocess.Popen
    log_path: str

    def client(self, endpoint_url: str | None = None) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=endpoint_url or self.endpoint_url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_moto_server(startup_timeout: float = 30.0) -> MotoServer:
    """`python -m moto.server` on a free port; returns once it accepts connections."""
    log = tempfile.NamedTemporaryFile(prefix="moto-", suffix=".log", delete=False)
    for _ in range(5):  # the free port may be taken between the probe and the bind
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        if wait_for_port(port, startup_timeout, alive=lambda p=process: p.poll() is None):
            return MotoServer(f"http://127.0.0.1:{port}", process, log.name)
        if process.poll() is None:
            process.kill()
        process.wait(10)
    with open(log.name, errors="replace") as fh:
        raise RuntimeError(f"moto server did not start:\n{fh.read()}")


def storage_env(endpoint_url: str, bucket: str, key_prefix: str = "") -> dict[str, str]:
    """The settings environment of a process that stores into `bucket` on the server at `endpoint_url`."""
    return {
        "STORAGE_BACKEND": "s3",
        "S3_BUCKET": bucket,
        "S3_ENDPOINT_URL": endpoint_url,
        "S3_REGION": REGION,
        "S3_ACCESS_KEY_ID": ACCESS_KEY,
        "S3_SECRET_ACCESS_KEY": SECRET_KEY,
        "S3_KEY_PREFIX": key_prefix,
        "S3_ADDRESSING_STYLE": "path",
    }


def bucket_keys(client: Any, bucket: str) -> list[str]:
    """Every object key in `bucket`."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


def pending_uploads(client: Any, bucket: str) -> list[str]:
    """Keys of multipart uploads started and neither completed nor aborted."""
    return [u["Key"] for u in client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


class CuttingProxy:
    """TCP proxy to `target_port` that closes any connection once it has carried `cut_after` request bytes."""

    def __init__(self, target_port: int, cut_after: int) -> None:
        self.target_port = target_port
        self.cut_after = cut_after
        self.cuts = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, target: socket.socket, counted: bool) -> None:
        carried = 0
        try:
            while data := source.recv(65536):
                carried += len(data) if counted else 0
                if carried > self.cut_after:
                    self.cuts += 1
                    break
                target.sendall(data)
        except OSError:
            pass
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        self._closing = True
        self._server.close()
