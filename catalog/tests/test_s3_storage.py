"""Page and cover storage on a real S3-protocol server (moto's server mode on 127.0.0.1, through boto3).

The same guarantees as on the local filesystem: an object appears only once
it is complete and checked, large images go up in multipart without being
held in memory, and no failure (bad bytes, byte cap, source cut, an upload
cut mid-part) leaves an object or a pending multipart upload behind.
"""

from __future__ import annotations

import hashlib
import io
import os

import pytest
from boto3.exceptions import S3UploadFailedError
from botocore.exceptions import ConnectionClosedError
from django.core.files.storage import storages
from PIL import Image

from analysis.handlers import local_image_path
from catalog.s3 import PART_BYTES
from catalog.storage import delete_stored, open_stored, store_image_stream
from catalog.tests.images import ChunkStream, image_bytes, store_from
from sources.errors import ImageRejected, SourceUnavailable
from testsupport import api_factories as f
from testsupport.s3 import CuttingProxy

pytestmark = pytest.mark.sqlite_ok


@pytest.fixture(scope="module")
def large_png() -> bytes:
    """A noisy (incompressible) PNG of about 2.5 parts: three parts in a multipart upload."""
    side = int((2.5 * PART_BYTES / 3) ** 0.5)
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def read_all(name: str) -> bytes:
    with open_stored(name) as handle:
        return handle.read()


def test_a_stored_image_is_one_object_under_the_key_prefix_and_reads_back(s3_storage):
    data = image_bytes("JPEG")
    stored = store_image_stream(ChunkStream(data, chunk=50), directory="covers/m1")
    assert (stored.content_type, stored.width, stored.size) == ("image/jpeg", 120, len(data))
    assert s3_storage.keys() == [f"media/{stored.name}"]
    head = s3_storage.client.head_object(Bucket=s3_storage.name, Key=f"media/{stored.name}")
    assert head["ContentType"] == "image/jpeg"
    assert read_all(stored.name) == data
    delete_stored(stored.name)
    delete_stored(stored.name)  # idempotent
    assert s3_storage.keys() == []


def test_a_large_image_goes_up_in_parts_and_reads_back_identical(s3_storage, large_png):
    stored = store_image_stream(ChunkStream(large_png, chunk=64 * 1024), directory="pages/c1")
    assert stored.size == len(large_png) > 2 * PART_BYTES
    etag = s3_storage.client.head_object(Bucket=s3_storage.name, Key=f"media/{stored.name}")["ETag"]
    assert etag.strip('"').endswith("-3")  # a multipart object of three parts
    with open_stored(stored.name) as handle:
        assert handle.size == len(large_png)
        digest = hashlib.sha256()
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    assert digest.hexdigest() == stored.sha256 == hashlib.sha256(large_png).hexdigest()
    assert s3_storage.pending_uploads() == []


@pytest.mark.parametrize(
    ("stream", "error", "message"),
    [
        (ChunkStream(b"<!doctype html><html>login</html>" + b" " * 100), ImageRejected, "text/html"),
        (ChunkStream(image_bytes("PNG") + b"\0" * 5000, chunk=500), ImageRejected, "byte cap"),
        (ChunkStream(image_bytes("PNG", (800, 600)), chunk=100, fail_after=300), SourceUnavailable, "mid-body"),
        (ChunkStream(b"\xff\xd8\xff" + b"\x00" * 500), ImageRejected, "could not be decoded"),
    ],
    ids=["html", "over-cap", "cut-mid-body", "undecodable"],
)
def test_every_rejected_or_broken_stream_leaves_no_object(s3_storage, stream, error, message):
    with pytest.raises(error, match=message):
        store_image_stream(stream, directory="pages/c1", max_bytes=len(image_bytes("PNG")) + 1000)
    assert s3_storage.keys() == []
    assert s3_storage.pending_uploads() == []


def test_an_upload_cut_mid_part_leaves_no_object_and_no_pending_upload(s3_storage, settings, large_png):
    # Every connection carrying more than 1 MB of request is cut: each part
    # upload (8 MB) breaks off mid-body, retries included; the small create
    # and abort requests get through, as on a flaky link.
    proxy = CuttingProxy(int(s3_storage.server.endpoint_url.rsplit(":", 1)[1]), cut_after=1 << 20)
    try:
        settings.STORAGES = {**settings.STORAGES, "default": s3_storage.storage_config(proxy.endpoint_url)}
        with pytest.raises((S3UploadFailedError, ConnectionClosedError)):
            store_image_stream(ChunkStream(large_png, chunk=64 * 1024), directory="pages/c1")
    finally:
        proxy.close()
    assert proxy.cuts >= 1
    assert s3_storage.keys() == []
    assert s3_storage.pending_uploads() == []  # the multipart upload was aborted, not left half-done


def test_demo_site_faults_leave_no_object(s3_storage, demo_site, demo_images):
    demo_site.faults.cut_image_mid_body = True
    with pytest.raises(SourceUnavailable):
        store_from(*demo_images)
    demo_site.faults.cut_image_mid_body = False
    stored = store_from(*demo_images)
    assert s3_storage.keys() == [f"media/{stored.name}"]


def test_a_missing_object_is_file_not_found(s3_storage):
    with pytest.raises(FileNotFoundError):
        open_stored("pages/c1/nothing.png")


@pytest.mark.django_db
def test_analysis_reads_the_page_from_s3_into_a_temporary_copy(s3_storage):
    data = image_bytes("PNG", (300, 200))
    page = f.page(f.chapter(f.manga(), 1, src=f.source()), data=data)
    assert storages["default"].__class__.__name__ == "StreamingS3Storage"
    with local_image_path(page) as path:
        with open(path, "rb") as copy:
            assert copy.read() == data
    assert not os.path.exists(path)
