"""The JPEG framing walk vouches for whole, consistent files only; everything else goes to the decoder."""

from __future__ import annotations

import io
import os

import pytest
from PIL import Image

from catalog import image_checks, storage
from catalog.errors import ImageRejected
from catalog.jpeg_frame import sound_jpeg, sound_jpeg_size
from catalog.storage import store_image_stream
from catalog.tests.images import ChunkStream

pytestmark = pytest.mark.sqlite_ok


def _jpeg(mode: str = "L", *, progressive: bool = False, size: tuple[int, int] = (300, 420)) -> bytes:
    channels = {"L": 1, "RGB": 3, "CMYK": 4}[mode]
    pixels = os.urandom(size[0] * size[1] * channels)
    out = io.BytesIO()
    Image.frombytes(mode, size, pixels).save(out, "JPEG", quality=85, progressive=progressive)
    return out.getvalue()


def _walk(tmp_path, data: bytes) -> tuple[int, int] | None:
    path = tmp_path / "page.jpg"
    path.write_bytes(data)
    from_file = sound_jpeg_size(str(path))
    assert sound_jpeg(data) == from_file  # the bytes in memory get the file's verdict
    return from_file


@pytest.mark.parametrize("mode", ["L", "RGB", "CMYK"])
@pytest.mark.parametrize("progressive", [False, True])
def test_a_whole_jpeg_is_vouched_for_with_its_frame_size(tmp_path, mode, progressive):
    assert _walk(tmp_path, _jpeg(mode, progressive=progressive)) == (300, 420)


@pytest.mark.parametrize("progressive", [False, True])
def test_a_jpeg_cut_anywhere_is_not_vouched_for(tmp_path, progressive):
    whole = _jpeg("RGB", progressive=progressive)
    for cut in [2, 20, 200, len(whole) // 3, len(whole) // 2, len(whole) - 100, len(whole) - 2, len(whole) - 1]:
        assert _walk(tmp_path, whole[:cut]) is None, cut


def test_bytes_that_only_start_like_a_jpeg_are_not_vouched_for(tmp_path):
    assert _walk(tmp_path, b"\xff\xd8\xff" + b"\x00" * 500) is None
    assert _walk(tmp_path, b"") is None
    assert _walk(tmp_path, b"<html>not found</html>") is None


def test_a_scan_naming_an_undefined_huffman_table_is_not_vouched_for(tmp_path):
    data = bytearray(_jpeg("L"))
    sos = data.index(b"\xff\xda")
    data[sos + 6] = 0x33  # component 1 decodes with DC and AC table 3, which no DHT defines
    assert _walk(tmp_path, bytes(data)) is None


def test_arithmetic_coding_is_left_to_the_decoder(tmp_path):
    data = bytearray(_jpeg("L"))
    sof = data.index(b"\xff\xc0")
    data[sof + 1] = 0xC9  # the same frame, declared arithmetic-coded
    assert _walk(tmp_path, bytes(data)) is None


def test_a_jpeg_over_the_pixel_cap_is_refused_from_its_frame_header(settings):
    settings.CRAWLER_MAX_IMAGE_PIXELS = 300 * 419
    with pytest.raises(ImageRejected, match=r"300x420 .* over the pixel cap of 125700"):
        store_image_stream(ChunkStream(_jpeg("L")), directory="pages/c")


def test_a_vouched_for_jpeg_is_stored_without_the_decode(settings, monkeypatch):
    decoded: list[str] = []
    real = image_checks.imaging.check_decodes
    monkeypatch.setattr(image_checks.imaging, "check_decodes", lambda path: (decoded.append(path), real(path)))
    whole = _jpeg("RGB")
    stored = store_image_stream(ChunkStream(whole), directory="pages/c")
    assert (stored.width, stored.height, stored.size) == (300, 420, len(whole))
    assert decoded == []
    with pytest.raises(ImageRejected, match="could not be decoded"):
        store_image_stream(ChunkStream(whole[: len(whole) // 2]), directory="pages/c")
    assert len(decoded) == 1  # the cut one went to the decoder, which refused it in its own words


@pytest.mark.parametrize("in_memory_up_to", [0, 10**9])
def test_a_stored_jpeg_gets_one_verdict_whether_walked_in_memory_or_from_its_file(monkeypatch, in_memory_up_to):
    monkeypatch.setattr(storage, "JPEG_WALK_IN_MEMORY_BYTES", in_memory_up_to)
    whole = _jpeg("RGB", size=(640, 900))
    assert store_image_stream(ChunkStream(whole, chunk=7000), directory="pages/c").width == 640
    cut = whole[: len(whole) // 2]  # ends mid-scan: not vouched for, so the decoder has the last word
    with pytest.raises(ImageRejected, match="could not be decoded"):
        store_image_stream(ChunkStream(cut, chunk=7000), directory="pages/c")


def test_the_meter_keeps_the_chunks_only_while_they_fit():
    chunks = [b"a" * 10, b"b" * 10, b"c" * 10]
    meter = storage._Meter(iter(chunks), max_bytes=1000)
    meter.keep_up_to(25, b"")
    list(meter.rest())
    assert meter.kept() is None  # 30 bytes passed: nothing held past the limit
    meter = storage._Meter(iter(chunks), max_bytes=1000)
    meter.keep_up_to(30, b"")
    list(meter.rest())
    assert meter.kept() == b"a" * 10 + b"b" * 10 + b"c" * 10
