"""Side stories, specials, fractional chapters and per-volume numbering, from a theme site to every reader.

A Madara site and a MangaThemesia site (testsupport/theme_sites) list a manga
whose chapters are 1, 2, 2.5 and 3 plus "Side Story 1", "Side Story 2 -
Home" and "Special" (in English on one, in Spanish on the other), and a manga
numbered per volume ("Vol. 1 Ch. 1" ... "Vol. 2 Ch. 2"). Each is added by its
URL alone, walked by `metadata_pass` and downloaded by `crawl_worker
--drain`, each a real `manage.py` process. Then the stored chapters must keep
extras apart from the main chapters, and the web reader, OPDS, the Komga API
(the way Mihon reads it) and `export_cbz` must show them named and ordered
right: never "Chapter 1: Side Story 1", never side story 1 beside chapter 1.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from catalog.chapter_order import READING_ORDER
from catalog.models import Chapter, Manga
from conftest import REPO_ROOT
from reader.tests.conftest import assert_valid_opds, basic
from reader.tests.komga_schema import assert_komga_valid
from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.madara import MadaraSite
from testsupport.theme_sites.mangathemesia import MangaThemesiaSite

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]
PASSWORD = "reader-password"
LOCAL_PACE = ("--set", "rate_limit=500", "--set", "burst=100", "--set", "max_concurrency=8")
ENV = {"ANALYSIS_ENABLED": "false", "JOBS_POLL_SECS": "0.2", "JOBS_WORKERS": "2"}

D = Decimal


@dataclass(frozen=True)
class Listed:
    label: str  # what the site prints
    kind: str  # what must be stored
    volume: int | None
    number: Decimal
    title: str
    shown: str  # what every reader shows


ENGLISH_EXTRAS = [
    Listed("Chapter 1", "chapter", None, D("1"), "", "Chapter 1"),
    Listed("Chapter 2", "chapter", None, D("2"), "", "Chapter 2"),
    Listed("Chapter 2.5", "chapter", None, D("2.5"), "", "Chapter 2.5"),
    Listed("Chapter 3", "chapter", None, D("3"), "", "Chapter 3"),
    Listed("Side Story 1", "extra", None, D("1"), "Side Story 1", "Side Story 1"),
    Listed("Side Story 2 - Home", "extra", None, D("2"), "Side Story 2: Home", "Side Story 2: Home"),
    Listed("Special", "extra", None, D("2.01"), "Special", "Special"),
]
SPANISH_EXTRAS = [
    Listed("Capítulo 1", "chapter", None, D("1"), "", "Chapter 1"),
    Listed("Capítulo 2", "chapter", None, D("2"), "", "Chapter 2"),
    Listed("Capítulo 2.5", "chapter", None, D("2.5"), "", "Chapter 2.5"),
    Listed("Capítulo 3", "chapter", None, D("3"), "", "Chapter 3"),
    Listed("Historia paralela 1", "extra", None, D("1"), "Historia paralela 1", "Historia paralela 1"),
    Listed("Historia paralela 2 - Hogar", "extra", None, D("2"), "Historia paralela 2: Hogar", "Historia paralela 2: Hogar"),
    Listed("Especial", "extra", None, D("2.01"), "Especial", "Especial"),
]  # fmt: skip
PER_VOLUME = [
    Listed("Vol. 1 Ch. 1", "chapter", 1, D("1"), "", "Vol. 1 Chapter 1"),
    Listed("Vol. 1 Ch. 2 - Rain", "chapter", 1, D("2"), "Rain", "Vol. 1 Chapter 2: Rain"),
    Listed("Vol. 2 Ch. 1", "chapter", 2, D("1"), "", "Vol. 2 Chapter 1"),
    Listed("Vol. 2 Ch. 2", "chapter", 2, D("2"), "", "Vol. 2 Chapter 2"),
]
FILES = {
    "Harbour": [
        "Harbour - SP001 - {4}.cbz",
        "Harbour - SP002 - {5}.cbz",
        "Harbour - SP002.01 - {6}.cbz",
        "Harbour - c001.cbz",
        "Harbour - c002.5.cbz",
        "Harbour - c002.cbz",
        "Harbour - c003.cbz",
    ],
    "Volumes": [
        "Volumes - v01 c001.cbz",
        "Volumes - v01 c002 - Rain.cbz",
        "Volumes - v02 c001.cbz",
        "Volumes - v02 c002.cbz",
    ],
}


def catalog(extras: list[Listed]) -> list[FixtureManga]:
    """Two mangas; chapter slugs number the listings in order, the labels say what each is."""
    mangas = []
    for post_id, (slug, title, listed) in enumerate(
        [("harbour", "Harbour", extras), ("volumes", "Volumes", PER_VOLUME)], start=300
    ):
        chapters = tuple(
            FixtureChapter(slug, title, index, dt.datetime(2026, 11, index, tzinfo=dt.UTC), None, label=item.label,
                           page_kinds=("png",))
            for index, item in enumerate(listed, start=1)
        )  # fmt: skip
        mangas.append(FixtureManga(post_id, slug, title, (), "Aki Mori", "OnGoing", "ongoing", ("Drama",), chapters))
    return mangas


SITES = {
    "madara, English extras": (lambda: MadaraSite(catalog=catalog(ENGLISH_EXTRAS)), ENGLISH_EXTRAS),
    "mangathemesia, Spanish extras": (lambda: MangaThemesiaSite(catalog=catalog(SPANISH_EXTRAS)), SPANISH_EXTRAS),
}


def manage(manage_cmd: list[str], env: dict[str, str], *args: str) -> str:
    done = subprocess.run([*manage_cmd, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{args[0]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def stored(manga: Manga) -> list[tuple[Any, ...]]:
    rows = Chapter.objects.filter(manga=manga).order_by(*READING_ORDER)
    return [(c.kind, c.volume, c.number, c.title, c.page_count) for c in rows]


def web_labels(web: Client, manga: Manga) -> list[str]:
    page = web.get(f"/mangas/{manga.id}/").content.decode()
    return re.findall(r'<li id="chapter-[^"]+"[^>]*>\s*<a href="[^"]+">([^<]+)</a>', page)


@pytest.mark.parametrize("make", SITES.values(), ids=SITES.keys())
def test_extras_crawl_from_a_theme_site_and_read_apart_in_every_reader(
    make, child_env, manage_cmd, django_user_model, opds_schema, tmp_path
):
    make_site, extras = make
    site = make_site()
    env = {**child_env, **ENV}
    try:
        manage(manage_cmd, env, "add_source", site.base_url + "/", *LOCAL_PACE)
        manage(manage_cmd, env, "metadata_pass")
        manage(manage_cmd, env, "crawl_worker", "--drain", "--no-schedule")
        harbour, volumes = Manga.objects.get(title="Harbour"), Manga.objects.get(title="Volumes")
        for manga, listed in ((harbour, extras), (volumes, PER_VOLUME)):
            assert stored(manga) == [(i.kind, i.volume, i.number, i.title, 1) for i in listed]

        reader = django_user_model.objects.create_user("reader", "reader@example.com", PASSWORD)
        web, auth = Client(), basic(reader.username, PASSWORD)
        web.force_login(reader)
        for manga, listed in ((harbour, extras), (volumes, PER_VOLUME)):
            shown = [i.shown for i in listed]
            assert web_labels(web, manga) == shown
            feed = Client().get(f"/opds/mangas/{manga.id}/", **auth)
            doc = assert_valid_opds(opds_schema, feed.content)
            assert [e.findtext("{http://www.w3.org/2005/Atom}title") for e in doc.iter("{*}entry")] == shown
            books = Client().get(f"/api/v1/series/{manga.id}/books?unpaged=true&media_status=READY", **auth).json()
            assert_komga_valid("/api/v1/series/{seriesId}/books", "get", books)
            assert [b["metadata"]["title"] for b in books["content"]] == shown

        # Mihon: the extras' chapter numbers are their own; reading side story 1 marks no chapter read.
        books = Client().get(f"/api/v1/series/{harbour.id}/books?unpaged=true", **auth).json()["content"]
        sorts = [b["metadata"]["numberSort"] for b in books]
        assert sorts[:4] == [1.0, 2.0, 2.5, 3.0] and all(-1 < s < 0 for s in sorts[4:])
        side_story = books[4]
        read = Client().patch(
            f"/api/v1/books/{side_story['id']}/read-progress", {"completed": True}, content_type="application/json",
            **auth,
        )  # fmt: skip
        assert read.status_code == 204
        tracker = Client().get(f"/api/v2/series/{harbour.id}/read-progress/tachiyomi", **auth).json()
        assert (tracker["booksCount"], tracker["booksReadCount"], tracker["lastReadContinuousNumberSort"]) == (4, 0, 0)

        manage(manage_cmd, env, "export_cbz", str(tmp_path / "export"))
        for series, names in FILES.items():
            files = sorted(p.name for p in Path(tmp_path / "export" / series).glob("*.cbz"))
            assert files == [n.format(*[i.shown.replace(": ", " - ") for i in extras]) for n in names]
    finally:
        site.stop()
