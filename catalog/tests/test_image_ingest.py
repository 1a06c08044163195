"""Images are checked once, at ingest: a body that does not decode, a bomb or a non-image answer is refused."""

from __future__ import annotations

import io
import os

import pytest
from PIL import Image

from catalog.errors import ImageRejected
from catalog.storage import store_image_stream
from catalog.tests.images import ChunkStream, image_bytes
from testsupport.bad_images import bomb_png, garbage_png, truncated_png

pytestmark = pytest.mark.sqlite_ok


def _no_files(settings) -> bool:
    return not [f for _, _, files in os.walk(settings.MEDIA_ROOT) for f in files]


def test_a_png_with_a_valid_header_and_a_garbage_body_is_refused(settings):
    with pytest.raises(ImageRejected, match="could not be decoded"):
        store_image_stream(ChunkStream(garbage_png()), directory="pages/c")
    assert _no_files(settings)


def test_a_truncated_png_is_refused(settings):
    with pytest.raises(ImageRejected, match="could not be decoded"):
        store_image_stream(ChunkStream(truncated_png()), directory="pages/c")
    assert _no_files(settings)


def test_a_truncated_jpeg_is_refused_by_the_reduced_size_decode(settings):
    pixels = os.urandom(900 * 1200 * 3)
    out = io.BytesIO()
    Image.frombytes("RGB", (900, 1200), pixels).save(out, "JPEG", quality=90)
    whole = out.getvalue()
    with pytest.raises(ImageRejected, match="could not be decoded"):
        store_image_stream(ChunkStream(whole[: len(whole) // 2]), directory="pages/c")
    assert store_image_stream(ChunkStream(whole), directory="pages/c").width == 900


def test_a_decompression_bomb_is_refused_by_the_pixel_cap_before_it_is_decoded(settings):
    settings.CRAWLER_MAX_IMAGE_PIXELS = 50_000_000
    with pytest.raises(ImageRejected, match=r"over the pixel cap of 50000000 \(CRAWLER_MAX_IMAGE_PIXELS\)"):
        store_image_stream(ChunkStream(bomb_png(), chunk=65536), directory="pages/c")
    assert _no_files(settings)


def test_the_pixel_cap_is_a_setting(settings):
    settings.CRAWLER_MAX_IMAGE_PIXELS = 100 * 100
    with pytest.raises(ImageRejected, match="pixel cap of 10000"):
        store_image_stream(ChunkStream(image_bytes("PNG", (120, 100))), directory="pages/c")
    assert store_image_stream(ChunkStream(image_bytes("PNG", (100, 100))), directory="pages/c").width == 100


def test_a_gif_whose_whole_frame_decode_would_exceed_the_decode_budget_is_refused(settings):
    settings.IMAGE_DECODE_BUDGET_MB = 1  # a 600x600 GIF's frame is about 1.8 MB; a JPEG decodes in strips
    with pytest.raises(ImageRejected, match=r"over the decode budget of 1 MB \(IMAGE_DECODE_BUDGET_MB\)"):
        store_image_stream(ChunkStream(image_bytes("GIF", (600, 600))), directory="pages/c")
    assert _no_files(settings)
    assert store_image_stream(ChunkStream(image_bytes("JPEG", (600, 600))), directory="pages/c").width == 600


def test_a_response_declaring_a_non_image_type_is_refused_before_its_body_is_read(settings):
    stream = ChunkStream(image_bytes("PNG"))
    stream.content_type = "text/html"
    with pytest.raises(ImageRejected, match="served as 'text/html', not as an image"):
        store_image_stream(stream, directory="pages/c")
    assert stream.consumed == 0
    stream = ChunkStream(image_bytes("PNG"))
    stream.content_type = "application/octet-stream"  # some CDNs: the bytes decide
    assert store_image_stream(stream, directory="pages/c").content_type == "image/png"
