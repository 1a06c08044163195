"""Under Daphne (ASGI) stored images and CBZs go out chunk by chunk, as under WSGI.

Django's ASGI handler reads a response's plain iterator whole before it
sends a byte, so these answers must carry an async iterator there
(catalog/streaming.py); bench/cbz_memory.py measures what that keeps out of
the web process (a 300 MB CBZ: +902 MB before, +3 MB after).
"""

from __future__ import annotations

import io
import os
import zipfile

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient, Client
from PIL import Image

from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic

pytestmark = pytest.mark.django_db

SIDE = 600  # a noise PNG this wide is ~1 MB: several chunks


@pytest.fixture
def noisy_chapter(alice):
    buf = io.BytesIO()
    Image.frombytes("RGB", (SIDE, SIDE), os.urandom(SIDE * SIDE * 3)).save(buf, "PNG")
    src = f.source()
    chapter = f.chapter(f.manga("Noise", src=src), 1, src=src, sync_state="done")
    page = f.page(chapter, 0, buf.getvalue())
    chapter.page_count = 1
    chapter.save(update_fields=["page_count"])
    return chapter, page, buf.getvalue()


def _urls(chapter, page) -> dict[str, str]:
    return {
        "api page image": f"/api/v1/pages/{page.id}/image/",
        "web reader page": f"/read/pages/{page.id}/image/",
        "pse page": f"/opds/chapters/{chapter.id}/pages/0/",
        "komga page": f"/api/v1/books/{chapter.id}/pages/1",
        "cbz": f"/opds/chapters/{chapter.id}/cbz/",
    }


async def _chunks(response) -> list[bytes]:
    return [chunk async for chunk in response.streaming_content]


@pytest.mark.parametrize("kind", ["api page image", "web reader page", "pse page", "komga page", "cbz"])
def test_stored_files_stream_chunk_by_chunk_under_asgi(noisy_chapter, alice, kind):
    chapter, page, data = noisy_chapter
    client = AsyncClient()
    client.force_login(alice)  # the web reader reads by session, the others take Basic as well

    response = async_to_sync(client.get)(_urls(chapter, page)[kind])

    assert response.status_code == 200
    assert response.is_async, "a plain iterator would be read whole by Django's ASGI handler"
    chunks = async_to_sync(_chunks)(response)
    assert len(chunks) > 1
    body = b"".join(chunks)
    if kind == "cbz":
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            assert data in [archive.read(name) for name in archive.namelist()]
    else:
        assert body == data


def test_the_same_files_stream_as_plain_iterators_under_wsgi(noisy_chapter):
    chapter, page, data = noisy_chapter
    response = Client().get(f"/api/v1/pages/{page.id}/image/", **basic("alice", PASSWORD))
    assert response.status_code == 200 and not response.is_async
    assert b"".join(response.streaming_content) == data
