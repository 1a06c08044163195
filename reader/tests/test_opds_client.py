"""A real OPDS client (feedparser, the Atom parser OPDS clients in Python build on) against a live server.

It walks what KOReader walks: the root navigation feed, a manga's acquisition
feed, a chapter's PSE link with its count and template, then fetches a page
with HTTP Basic — over real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import base64
import io

import feedparser
import httpx
from PIL import Image

from reader.models import ReadProgress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD

PSE_STREAM = "http://vaemendis.net/opds-pse/stream"


def parse(url: str):
    """feedparser with HTTP Basic, as its documentation shows for protected feeds."""
    token = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    return feedparser.parse(url, request_headers={"Authorization": f"Basic {token}"})


def test_feedparser_walks_root_manga_feed_and_pse_then_fetches_a_page_with_basic_auth(live_server, alice):
    src = f.source("demo")
    m = f.manga("Berserk", src=src, cover=True, authors=["Kentaro Miura"])
    ch = f.chapter(m, 1, src=src, pages=4, width=900, height=1200)

    assert feedparser.parse(f"{live_server.url}/opds/").status == 401
    root = parse(f"{live_server.url}/opds/")
    assert root.status == 200 and not root.bozo, root.get("bozo_exception")
    sections = {e.title: e.links[0].href for e in root.entries}
    assert set(sections) == {"Latest updates", "All mangas", "My bookmarks", "Tags"}
    assert any(link.rel == "search" for link in root.feed.links)

    latest = parse(sections["Latest updates"])
    manga_url = next(link.href for link in latest.entries[0].links if link.rel == "subsection")

    feed = parse(manga_url)
    assert not feed.bozo and feed.feed.title == "Berserk"
    entry = feed.entries[0]
    assert entry.author == "Kentaro Miura"
    stream = next(link for link in entry.links if link.rel == PSE_STREAM)
    assert stream["pse:count"] == "4"
    acquisition = next(link for link in entry.links if link.rel == "http://opds-spec.org/acquisition")
    assert acquisition.type == "application/vnd.comicbook+zip"

    page_url = stream.href.replace("{pageNumber}", "1").replace("{maxWidth}", "540")  # one of the copy widths
    with httpx.Client(auth=("alice", PASSWORD), timeout=30) as http:
        assert http.get(page_url, auth=None).status_code == 200, "signed for alice: the URL is the credential"
        assert http.get(f"{live_server.url}/opds/chapters/{ch.id}/pages/1/", auth=None).status_code == 401
        image = http.get(page_url)
        assert image.status_code == 200
        assert Image.open(io.BytesIO(image.content)).size == (540, 720)
        cbz = http.get(acquisition.href)
        assert cbz.status_code == 200 and cbz.content[:2] == b"PK"
    assert ReadProgress.objects.get(user=alice, chapter=ch).last_page == 2

    again = parse(manga_url)
    stream = next(link for link in again.entries[0].links if link.rel == PSE_STREAM)
    assert stream["pse:lastread"] == "2"
