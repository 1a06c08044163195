"""Every variant of the theme families added by its URL alone, crawled by the real commands, read in every reader.

Each variant site (testsupport/theme_sites) is added with `add_source URL`
(no preset, no selector: only a local crawl pace, since the sites are ours),
walked by `metadata_pass` and downloaded by `crawl_worker --drain`, each a
real `manage.py` process. Then every manga, chapter (key, number, label),
date (to the day; relative dates within their tolerance), status and page
(byte for byte) must be stored, and the library must read right as a reader
sees it: the web reader, every OPDS feed against the OPDS 1.2 grammar, the
Komga API against Komga's OpenAPI description; a stranger is refused by all.

The test prints one line per variant (the table of the closing notes):
site, detected settings, mangas/chapters/dates/pages against expected.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import Client

from catalog.chapter_names import display_title
from catalog.chapter_order import READING_ORDER
from catalog.models import Chapter, Manga, Source
from conftest import REPO_ROOT
from reader.tests.conftest import assert_valid_opds
from reader.tests.komga_schema import assert_komga_valid
from testsupport.theme_sites.expect import check_full_crawl
from testsupport.theme_sites.foolslide import FoOlSlideSite
from testsupport.theme_sites.iken import IkenSite
from testsupport.theme_sites.keyoapp import KeyoappSite
from testsupport.theme_sites.locales import PORTUGUESE, SPANISH, THAI, TURKISH
from testsupport.theme_sites.madara import MadaraSite
from testsupport.theme_sites.mangathemesia import MangaThemesiaSite
from testsupport.theme_sites.manhwaz import ManhwaZSite
from testsupport.theme_sites.mmrcms import MMRCMSSite
from testsupport.theme_sites.pizzareader import PizzaReaderSite
from testsupport.theme_sites.wpcomics import WPComicsSite
from testsupport.theme_sites.zeistmanga import ZeistMangaSite

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]
PASSWORD = "reader-password"
LOCAL_PACE = ("--set", "rate_limit=500", "--set", "burst=100", "--set", "max_concurrency=8")
ENV = {"ANALYSIS_ENABLED": "false", "JOBS_POLL_SECS": "0.2", "JOBS_WORKERS": "2"}


@dataclass(frozen=True)
class Variant:
    name: str
    make: Callable[[], Any]
    preset: str
    # What the probe must find (keys beyond the preset; image_hosts checked against the site's CDN).
    found: dict[str, Any] = field(default_factory=dict)
    relative_dates: bool = True  # new chapters print "2 days ago" in the site's language
    every_date_relative: bool = False
    base_path: str = ""
    unprinted: frozenset[str] = frozenset()  # fields the family never prints (stored empty)


VARIANTS = [
    Variant("madara, manga path /comic/", lambda: MadaraSite(directory="comic"), "madara", {"manga_path": "comic"}),
    Variant(
        "mangathemesia, manga path /series/",
        lambda: MangaThemesiaSite(directory="series"),
        "mangathemesia",
        {"manga_path": "series"},
        relative_dates=False,
    ),
    Variant("madara in Spanish", lambda: MadaraSite(locale=SPANISH), "madara", {"date_language": "es"}),
    Variant(
        "madara in Portuguese, dd/MM/yyyy dates",
        lambda: MadaraSite(locale=PORTUGUESE),
        "madara",
        {"date_language": "pt", "chapter_date_formats": ["%d/%m/%Y"]},
    ),
    Variant(
        "mangathemesia in Thai, Buddhist years",
        lambda: MangaThemesiaSite(locale=THAI),
        "mangathemesia",
        {"date_language": "th"},
        relative_dates=False,
    ),
    Variant("madara under /x/", lambda: MadaraSite(base_path="/x"), "madara", base_path="/x"),
    Variant(
        "mangathemesia in Turkish under /okuma/, /komik/, list without #chapterlist",
        lambda: MangaThemesiaSite(locale=TURKISH, base_path="/okuma", directory="komik", bare_chapter_list=True),
        "mangathemesia",
        {"date_language": "tr", "manga_path": "komik"},
        relative_dates=False,
        base_path="/okuma",
    ),
    Variant("manhwaz (Madara markup, no WordPress)", ManhwaZSite, "manhwaz", every_date_relative=True),
    # The JSON families: found by probing their endpoints, read through JSON paths.
    Variant("pizzareader (JSON API /api/comics, Italian)", PizzaReaderSite, "pizzareader", {"date_language": "it"}),
    Variant("iken (JSON API on the site itself, locked chapters)", IkenSite, "iken", {"api_base": "{base}"}),
    Variant("iken (JSON API on the api.<host> sibling)", lambda: IkenSite(api_sibling=True), "iken"),
    Variant("zeistmanga (Blogger JSON feed, label captured)", ZeistMangaSite, "zeistmanga"),
    # The plain-HTML readers, found by their markup.
    Variant("mmrcms (d MMM. yyyy dates, number off the URL)", MMRCMSSite, "mmrcms", relative_dates=False),
    Variant("wpcomics in Vietnamese (GMT+7 times, relative dates)", WPComicsSite, "wpcomics", {"date_language": "vi"}),
    Variant("keyoapp (paid chapters skipped, images on the realUrl CDN)", KeyoappSite, "keyoapp"),
    Variant(
        "foolslide (adult gate, var pages script)",
        FoOlSlideSite,
        "foolslide",
        {"chapter_date_formats": ["%Y.%m.%d"]},  # the probe reads the year-first order off the dates
        relative_dates=False,
        unprinted=frozenset({"status", "tags", "alt_titles"}),
    ),
]


def manage(manage_cmd: list[str], env: dict[str, str], *args: str) -> str:
    done = subprocess.run([*manage_cmd, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{args[0]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def chapter_key(site: Any) -> Callable[[Any], str]:
    """The key a crawl stores for a fixture chapter: the site's own rule (a JSON family's), else its URL's path."""
    if hasattr(site, "chapter_key"):
        return site.chapter_key
    return lambda chapter: urlsplit(site.chapter_url(chapter)).path.strip("/")


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def read_in_every_reader(reader: Any, opds_schema: Any) -> dict[str, int]:
    """The web reader, OPDS and the Komga API show every manga and chapter with its label; figures read."""
    web, auth = Client(), basic(reader.username, PASSWORD)
    web.force_login(reader)
    feeds = komga_books = web_chapters = 0
    library = web.get("/").content.decode()
    all_feed = Client().get("/opds/all/", **auth)
    assert all_feed.status_code == 200
    assert_valid_opds(opds_schema, all_feed.content)
    series = Client().get("/api/v1/series?page=0&size=50", **auth)
    assert series.status_code == 200
    assert_komga_valid("/api/v1/series", "get", series.json())
    komga_titles = {s["metadata"]["title"] for s in series.json()["content"]}
    for manga in Manga.objects.all():
        assert manga.title in library and manga.title in komga_titles
        chapters = list(Chapter.objects.filter(manga=manga).order_by(*READING_ORDER))
        labels = [display_title(c.number, c.title, c.kind, c.volume) for c in chapters]
        page = web.get(f"/mangas/{manga.id}/").content.decode()
        positions = [page.find(label) for label in labels]
        assert -1 not in positions and positions == sorted(positions), (manga.title, labels)
        for chapter in chapters:
            reader_page = web.get(f"/read/{chapter.id}/")
            assert reader_page.status_code == 200
            assert reader_page.content.decode().count("/read/pages/") >= chapter.page_count
            web_chapters += 1
        feed = Client().get(f"/opds/mangas/{manga.id}/", **auth)
        doc = assert_valid_opds(opds_schema, feed.content)
        titles = [
            e.findtext("{http://www.w3.org/2005/Atom}title") for e in doc.iter("{http://www.w3.org/2005/Atom}entry")
        ]
        assert sorted(titles) == sorted(labels)
        feeds += 1
        series_id = next(s["id"] for s in series.json()["content"] if s["metadata"]["title"] == manga.title)
        books = Client().get(f"/api/v1/series/{series_id}/books?page=0&size=50", **auth)
        assert_komga_valid("/api/v1/series/{seriesId}/books", "get", books.json())
        assert books.json()["totalElements"] == len(chapters)
        komga_books += len(chapters)
    return {"web chapters": web_chapters, "OPDS feeds": feeds + 1, "Komga books": komga_books}


def strangers_are_refused(chapter: Chapter) -> None:
    anonymous = Client()
    assert anonymous.get("/").status_code == 302
    for url in ("/opds/all/", f"/opds/chapters/{chapter.id}/cbz/", "/api/v1/series"):
        assert anonymous.get(url).status_code == 401, url
        assert Client().get(url, **basic("nobody", "guess")).status_code == 401, url


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_a_site_variant_crawls_from_its_url_alone_and_reads_right(
    variant, child_env, manage_cmd, django_user_model, opds_schema
):
    site = variant.make()
    env = {**child_env, **ENV}
    try:
        said = manage(manage_cmd, env, "add_source", site.base_url + "/", *LOCAL_PACE)
        manage(manage_cmd, env, "metadata_pass")
        manage(manage_cmd, env, "crawl_worker", "--drain", "--no-schedule")

        row = Source.objects.get()
        assert row.base_url == site.base_url and urlsplit(row.base_url).path == variant.base_path
        found = {k: v for k, v in row.settings.items() if k not in ("rate_limit", "burst", "max_concurrency")}
        expected = {"preset": variant.preset, **variant.found}
        if hasattr(site, "cdn"):
            expected["image_hosts"] = [site.cdn.host_port]
        assert found == expected, said
        stored = check_full_crawl(
            row,
            site.catalog,
            chapter_key(site),
            relative_dates=variant.relative_dates,
            every_date_relative=variant.every_date_relative,
            unprinted=variant.unprinted,
        )
        assert (stored.mangas, stored.covers, stored.chapters, stored.dates, stored.pages) == (5, 5, 12, 12, 36)

        reader = django_user_model.objects.create_user("reader", "reader@example.com", PASSWORD)
        figures = read_in_every_reader(reader, opds_schema)
        strangers_are_refused(Chapter.objects.first())
        print(
            f"\nVARIANT | {variant.name} | {json.dumps(found, ensure_ascii=False)} | mangas {stored.mangas}/5, "
            f"chapters {stored.chapters}/12, dates {stored.dates}/12, pages {stored.pages}/36 | "
            + ", ".join(f"{k} {v}" for k, v in figures.items())
        )
    finally:
        site.stop()
