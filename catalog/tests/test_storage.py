"""Streaming, atomic image storage: what a success records, and that every failure leaves no file."""

from __future__ import annotations

import hashlib
import os
import threading

import pytest
from django.core.files.storage import FileSystemStorage, InMemoryStorage, default_storage

from catalog import storage
from catalog.image_checks import sniff_image_type
from catalog.storage import delete_stored, store_image_stream, validate_directory
from catalog.tests.images import ChunkStream, image_bytes, store_from
from sources.errors import ImageRejected, SourceUnavailable

pytestmark = pytest.mark.sqlite_ok


def files_under(root: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


@pytest.mark.parametrize(
    ("fmt", "content_type", "ext"),
    [("PNG", "image/png", "png"), ("JPEG", "image/jpeg", "jpg"), ("WEBP", "image/webp", "webp"),
     ("GIF", "image/gif", "gif"), ("AVIF", "image/avif", "avif")],
)  # fmt: skip
def test_store_records_type_size_dimensions_and_sha256(settings, fmt, content_type, ext):
    data = image_bytes(fmt)
    stored = store_image_stream(ChunkStream(data, chunk=37), directory="pages/chapter-1")
    assert stored.content_type == content_type
    assert (stored.width, stored.height) == (120, 80)
    assert stored.size == len(data)
    assert stored.sha256 == hashlib.sha256(data).hexdigest()
    assert stored.name.startswith("pages/chapter-1/") and stored.name.endswith("." + ext)
    with default_storage.open(stored.name, "rb") as f:
        assert f.read() == data
    assert files_under(settings.MEDIA_ROOT) == [stored.name]


def test_html_error_page_is_rejected_as_text_html_and_leaves_no_file(settings):
    page = b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>" + b" " * 5000
    with pytest.raises(ImageRejected, match="look like text/html"):
        store_image_stream(ChunkStream(page, chunk=10), directory="pages/c")
    assert files_under(settings.MEDIA_ROOT) == []


@pytest.mark.parametrize(
    ("data", "looks_like"),
    [(b'{"error": "rate limited"}', "application/json"), (b"plain words", "text"), (b"", "an empty body"),
     (bytes(range(128, 256)), "unknown binary data")],
)  # fmt: skip
def test_non_image_bytes_are_rejected_with_what_they_look_like(settings, data, looks_like):
    with pytest.raises(ImageRejected, match=looks_like):
        store_image_stream(ChunkStream(data), directory="pages/c")
    assert files_under(settings.MEDIA_ROOT) == []


def test_over_the_byte_cap_aborts_mid_stream_and_leaves_no_file(settings):
    data = image_bytes("PNG", (600, 600))
    with pytest.raises(ImageRejected, match="byte cap of 1000"):
        store_image_stream(ChunkStream(data, chunk=300), directory="pages/c", max_bytes=1000)
    assert files_under(settings.MEDIA_ROOT) == []


def test_default_byte_cap_comes_from_settings(settings):
    settings.CRAWLER_MAX_IMAGE_BYTES = 500
    with pytest.raises(ImageRejected, match="CRAWLER_MAX_IMAGE_BYTES"):
        store_image_stream(ChunkStream(image_bytes("PNG", (300, 300)), chunk=100), directory="pages/c")
    assert files_under(settings.MEDIA_ROOT) == []


def test_declared_length_over_the_cap_is_rejected_before_reading_the_body(settings):
    stream = ChunkStream(image_bytes("PNG"), declared=10_000)
    with pytest.raises(ImageRejected, match="declares 10000 bytes"):
        store_image_stream(stream, directory="pages/c", max_bytes=5000)
    assert stream.consumed == 0
    assert files_under(settings.MEDIA_ROOT) == []


def test_stream_failing_mid_body_propagates_and_leaves_no_file(settings):
    with pytest.raises(SourceUnavailable, match="mid-body"):
        store_image_stream(ChunkStream(image_bytes("PNG", (400, 400)), chunk=200, fail_after=600), directory="pages/c")
    assert files_under(settings.MEDIA_ROOT) == []


def test_bytes_that_only_start_like_an_image_are_rejected_and_leave_no_file(settings):
    with pytest.raises(ImageRejected, match="could not be decoded"):
        store_image_stream(ChunkStream(b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 100), directory="pages/c")
    assert files_under(settings.MEDIA_ROOT) == []


@pytest.mark.parametrize(
    "directory", ["", "/abs", "pages/../../etc", "..", "pages//x", "pages/x/", "pages\\x", "pages/ü", "a/./b"]
)
def test_directories_outside_our_own_id_scheme_are_refused(settings, directory):
    with pytest.raises(ValueError, match="storage directory"):
        store_image_stream(ChunkStream(image_bytes("PNG")), directory=directory)
    with pytest.raises(ValueError):
        validate_directory(directory)
    assert files_under(settings.MEDIA_ROOT) == []


def test_concurrent_stores_into_one_directory_never_collide(settings):
    data = [image_bytes("PNG", (50 + i, 40)) for i in range(16)]
    results: list = [None] * len(data)
    barrier = threading.Barrier(len(data))

    def store(i: int) -> None:
        barrier.wait()
        results[i] = store_image_stream(ChunkStream(data[i], chunk=64), directory="pages/same")

    threads = [threading.Thread(target=store, args=(i,)) for i in range(len(data))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({r.name for r in results}) == len(data)
    for i, result in enumerate(results):
        assert result.width == 50 + i
        with default_storage.open(result.name, "rb") as f:
            assert f.read() == data[i]
    assert len(files_under(settings.MEDIA_ROOT)) == len(data)


def test_non_local_storage_receives_a_streaming_file_and_is_cleaned_on_rejection():
    storage = InMemoryStorage()
    data = image_bytes("JPEG")
    stored = store_image_stream(ChunkStream(data, chunk=50), directory="covers/m1", storage=storage)
    assert (stored.content_type, stored.width, stored.size) == ("image/jpeg", 120, len(data))
    with storage.open(stored.name, "rb") as f:
        assert f.read() == data
    with pytest.raises(ImageRejected):
        store_image_stream(ChunkStream(b"\xff\xd8\xff" + b"\x00" * 500), directory="covers/m1", storage=storage)
    assert storage.listdir("covers/m1")[1] == [stored.name.rsplit("/", 1)[1]]


def test_delete_stored_removes_the_file_and_tolerates_a_missing_one(settings):
    stored = store_image_stream(ChunkStream(image_bytes("PNG")), directory="pages/c")
    delete_stored(stored.name)
    delete_stored(stored.name)
    delete_stored("")
    assert files_under(settings.MEDIA_ROOT) == []


def test_file_system_storage_passed_explicitly_is_used(tmp_path):
    storage = FileSystemStorage(location=str(tmp_path / "elsewhere"))
    stored = store_image_stream(ChunkStream(image_bytes("PNG")), directory="pages/c", storage=storage)
    assert os.path.exists(storage.path(stored.name))


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [(b"\xff\xd8\xff\xdb", "image/jpeg"), (b"GIF89a", "image/gif"), (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
     (b"\x00\x00\x00\x1cftypavif", "image/avif"), (b"\x00\x00\x00\x1cftypmp42", None), (b"<html>", None)],
)  # fmt: skip
def test_sniff_image_type(prefix, expected):
    found = sniff_image_type(prefix)
    assert (found[0] if found else None) == expected


# --- real bytes from the live demo site ----------------------------------------------------


def test_demo_page_image_streams_into_storage(settings, demo_images):
    stored = store_from(*demo_images)
    assert (stored.width, stored.height) == (600, 850)
    assert files_under(settings.MEDIA_ROOT) == [stored.name]


@pytest.mark.parametrize(
    ("fault", "error", "message"),
    [("html_as_image", ImageRejected, "text/html"), ("broken_image", ImageRejected, "could not be decoded"),
     ("cut_image_mid_body", SourceUnavailable, "broke off")],
)  # fmt: skip
def test_demo_site_image_faults_leave_no_file(settings, demo_site, demo_images, fault, error, message):
    setattr(demo_site.faults, fault, True)
    with pytest.raises(error, match=message):
        store_from(*demo_images)
    assert files_under(settings.MEDIA_ROOT) == []


def test_make_stored_durable_syncs_the_filesystem_of_the_directory_and_reports_its_errors(settings, monkeypatch):
    stored = store_image_stream(ChunkStream(image_bytes("PNG")), directory="pages/durable", durable=False)
    directory_fd = []
    real = storage._LIBC_SYNCFS
    monkeypatch.setattr(
        storage, "_LIBC_SYNCFS", lambda fd: directory_fd.append(os.readlink(f"/proc/self/fd/{fd}")) or real(fd)
    )
    storage.make_stored_durable("pages/durable")
    assert directory_fd == [os.path.join(settings.MEDIA_ROOT, "pages/durable")]
    assert os.path.exists(os.path.join(settings.MEDIA_ROOT, stored.name))
    monkeypatch.setattr(storage, "_LIBC_SYNCFS", lambda fd: -1)  # what syncfs answers after a write-back error
    with pytest.raises(OSError, match="syncfs failed"):
        storage.make_stored_durable("pages/durable")
