"""The crawl benchmark's static site is read by our `madara` preset as the benchmark expects.

The benchmark itself is not part of the suite (it needs nginx, aria2c and
minutes); this keeps its site from drifting away from what the adapter
parses: a tiny site, served by a plain static file server on 127.0.0.1,
walked through the real `html` adapter with the preset alone.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from crawling.site import ImageSpec, SitePlan, ensure_images, write_site
from sources.config import HtmlSourceConfig
from sources.html import HtmlSource

# Five mangas of two chapters of three pages (the last chapter has one): two archive pages of three.
PLAN = SitePlan(pages=28, pages_per_chapter=3, chapters_per_manga=2, per_list_page=3)
TINY = ImageSpec(width=(40, 48), height=(60, 64))


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(base URL, site root) of the generated site, served as static files."""
    work = tmp_path_factory.mktemp("crawl-site")
    images = ensure_images(PLAN, TINY, work / "cache")
    root = work / "site"
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    write_site(root, base_url, PLAN, images)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield base_url, root
    server.shutdown()
    server.server_close()


def test_madara_preset_reads_every_manga_chapter_date_and_page_of_the_bench_site(site):
    base_url, root = site
    source = HtmlSource("bench", base_url, HtmlSourceConfig.from_settings({"preset": "madara"}, source_id="bench"))
    try:
        first, more = source.list_page(1)
        second, last_more = source.list_page(2)
        assert (more, last_more) == (True, False)
        mangas = PLAN.mangas()
        assert [(r.key, r.title) for r in first + second] == [(m.slug, m.title) for m in mangas]
        pages = {}
        for ref, manga in zip(first + second, mangas, strict=True):
            detail = source.manga_detail(ref)
            assert detail.metadata.title == manga.title
            assert detail.metadata.status == "ongoing"
            assert detail.cover_url == f"{base_url}/{manga.cover_path}"
            assert [(c.key, c.number) for c in detail.chapters] == [(c.key, c.number) for c in manga.chapters]
            for chapter, planned in zip(detail.chapters, manga.chapters, strict=True):
                assert chapter.published_at == dt.datetime.combine(planned.released, dt.time(), dt.UTC)
                for index, url in enumerate(source.chapter_pages(chapter)):
                    stream = source.open_image(url)
                    try:
                        pages[(chapter.key, index)] = (stream.content_type, b"".join(stream.iter_bytes()))
                    finally:
                        stream.close()
        assert source.notes.unparsed_dates == 0
    finally:
        source.close()
    # What the benchmark checks stored pages against: every page, under the key our crawl stores it by.
    expected = PLAN.expected_pages()
    assert sorted(pages) == sorted(expected)
    for key, path in expected.items():
        assert pages[key] == ("image/jpeg", (root / path).read_bytes())
