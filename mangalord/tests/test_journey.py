"""One journey, crawl to every reader, in real processes.

A right-to-left Japanese Madara site (testsupport/theme_sites/journey.py)
is added with `add_source`, walked by `metadata_pass` and downloaded by
`crawl_worker --drain`; then everything a user reads it with is checked as
the user sees it: the web reader in Chromium, every OPDS feed against the
OPDS 1.2 grammar and in feedparser, each PSE page's type, each CBZ's
ComicInfo.xml against its XSD, the Komga API as Mihon's Komga extension
reads it (against Komga's OpenAPI description, page bytes as the site served
them), and `export_cbz`'s files, modes and names. A stranger and a wrong
password are refused by every reader and shown no title.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import stat
import subprocess
import zipfile
from collections.abc import Iterator
from html import escape
from typing import Any
from urllib.parse import quote

import feedparser
import httpx
import pytest
from lxml import etree
from PIL import Image
from playwright.sync_api import Browser, expect

from catalog.models import Chapter, Manga, Page
from conftest import REPO_ROOT
from jobs.models import Job
from reader.tests.conftest import assert_valid_opds
from reader.tests.komga_schema import MIHON_PAGE_FIELDS, assert_komga_valid
from testsupport.live_server import LiveServer, start_daphne
from testsupport.theme_sites.catalog import FixtureChapter
from testsupport.theme_sites.journey import CLEAN_TITLE, COLLIDING_TITLES, DIRTY_TITLE, journey_catalog
from testsupport.theme_sites.madara import MadaraSite

pytestmark = [pytest.mark.process, pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "alice-password"
PSE = "http://vaemendis.net/opds-pse/stream"
ACQUISITION = "http://opds-spec.org/acquisition"
PIL_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
# What Mihon's Komga extension sends for a page image (it shows WebP itself).
IMAGE_ACCEPT = "image/avif,image/webp,image/png,image/jpeg,*/*;q=0.8"
# The login lockout's account limit the refusals below count toward (the default, pinned).
FAILURE_LIMIT = 5
SITE_ENV = {
    "ANALYSIS_ENABLED": "false",
    "JOBS_POLL_SECS": "0.2",
    "JOBS_WORKERS": "2",
    "LOGIN_FAILURE_LIMIT": str(FAILURE_LIMIT),
}


@pytest.fixture
def site() -> Iterator[MadaraSite]:
    site = MadaraSite(catalog=journey_catalog(dt.datetime.now(dt.UTC)), lang="ja")
    yield site
    site.stop()


@pytest.fixture
def web(child_env) -> Iterator[LiveServer]:
    server = start_daphne({**child_env, **SITE_ENV}, cwd=REPO_ROOT)
    yield server
    server.stop()


def manage(manage_cmd, env, *args: str) -> str:
    done = subprocess.run([*manage_cmd, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"{args[0]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def crawl(site: MadaraSite, manage_cmd, env) -> None:
    manage(
        manage_cmd, env, "add_source", "Yoru Scans", site.base_url, "--preset", "madara",
        "--set", "reading_direction=rtl", "--set", "language=ja",
        "--set", "rate_limit=500", "--set", "burst=100", "--set", "max_concurrency=8",
    )  # fmt: skip
    manage(manage_cmd, env, "metadata_pass")
    manage(manage_cmd, env, "crawl_worker", "--drain", "--no-schedule")


def opds_feeds(http: httpx.Client, base: str, grammar: etree.RelaxNG) -> dict[str, etree._Element]:
    """Every feed a client can reach from the root, validated against the grammar and parsed by feedparser."""
    seen: dict[str, etree._Element] = {}
    todo = [f"{base}/opds/", f"{base}/opds/search/?q={quote('Yoru')}", f"{base}/opds/search/?q=a"]
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        answer = http.get(url)
        assert answer.status_code == 200, url
        assert_valid_opds(grammar, answer.content)  # with PSE templates filled in, as a client does
        seen[url] = doc = etree.fromstring(answer.content)
        parsed = feedparser.parse(answer.content)
        assert not parsed.bozo, (url, parsed.get("bozo_exception"))
        for link in doc.iter("{http://www.w3.org/2005/Atom}link"):
            if "profile=opds-catalog" in (link.get("type") or "") and link.get("href", "").startswith(base):
                todo.append(link.get("href"))
    return seen


def komga_get(http: httpx.Client, url: str, path: str) -> Any:
    """A Komga JSON answer, valid against `path`'s response schema in Komga's OpenAPI description."""
    answer = http.get(url)
    assert answer.status_code == 200, (url, answer.text[:500])
    body = answer.json()
    assert_komga_valid(path, "get", body)
    return body


def stored_title(fixture_title: str) -> str:
    return CLEAN_TITLE if fixture_title == DIRTY_TITLE else fixture_title


def readable(chapter: FixtureChapter) -> bool:
    """The chapters the crawl can store whole: no page cut short, no decompression bomb."""
    return not {"truncated", "bomb"} & set(chapter.page_kinds)


def read_through_komga(http: httpx.Client, base: str, site: MadaraSite) -> dict[str, int]:
    """Browse, search, open every series and read every page as Mihon's Komga extension does."""
    api = f"{base}/api/v1"
    everything = komga_get(http, f"{api}/series?search=&page=0&deleted=false", "/api/v1/series")
    for key in MIHON_PAGE_FIELDS:
        assert key in everything, key
    series = {s["metadata"]["title"]: s for s in everything["content"]}
    expected = {stored_title(m.title): m for m in site.catalog}
    assert sorted(series) == sorted(expected)  # as stored: not escaped, not cleaned twice
    assert all(s["name"] == title for title, s in series.items())
    assert everything["totalElements"] == len(expected)
    books = pages = 0
    for title, manga in expected.items():
        found = komga_get(http, f"{api}/series?search={quote(title)}&page=0&deleted=false", "/api/v1/series")
        assert title in [s["metadata"]["title"] for s in found["content"]], title
        series_id = series[title]["id"]
        detail = komga_get(http, f"{api}/series/{series_id}", "/api/v1/series/{seriesId}")
        assert (detail["metadata"]["readingDirection"], detail["metadata"]["language"]) == ("RIGHT_TO_LEFT", "ja")
        chapters = [c for c in manga.chapters if readable(c)]
        listed = komga_get(
            http,
            f"{api}/series/{series_id}/books?unpaged=true&media_status=READY&deleted=false",
            "/api/v1/series/{seriesId}/books",
        )["content"]
        assert [b["metadata"]["numberSort"] for b in listed] == [float(c.number) for c in chapters], title
        assert [b["number"] for b in listed] == list(range(1, len(chapters) + 1)), title
        assert {b["seriesTitle"] for b in listed} == {title}
        for book, chapter in zip(listed, chapters, strict=True):
            named = f"Chapter {chapter.number}" + (f": {chapter.name}" if chapter.name else "")
            assert book["metadata"]["title"] == named  # the site's label read, not repeated
            kinds = [chapter.page_type(i) for i in range(1, len(chapter.pages) + 1)]
            assert book["media"]["pagesCount"] == len(kinds)
            listing = komga_get(http, f"{api}/books/{book['id']}/pages", "/api/v1/books/{bookId}/pages")
            assert [(p["number"], p["mediaType"]) for p in listing] == list(enumerate(kinds, start=1))
            stored = {p.index: p for p in Page.objects.filter(chapter_id=book["id"])}
            for number, served in enumerate(chapter.pages, start=1):
                image = http.get(f"{api}/books/{book['id']}/pages/{number}", headers={"Accept": IMAGE_ACCEPT})
                assert (image.status_code, image.headers["content-type"]) == (200, kinds[number - 1])
                assert image.content == served  # the site's bytes, untouched
                with stored[number - 1].image.open("rb") as file:
                    assert file.read() == served
                pages += 1
            # The book's file: the CBZ its `url` names, pages in order under the names the listing gives.
            archive = zipfile.ZipFile(io.BytesIO(http.get(book["url"]).content))
            assert archive.namelist() == ["ComicInfo.xml", *(p["fileName"] for p in listing)]
            assert [archive.read(p["fileName"]) for p in listing] == list(chapter.pages)
            books += 1
    return {"komga_books": books, "komga_pages": pages}


def refusals(urls: dict[str, str], auth: tuple[str, str] | None, secrets: list[str]) -> dict[str, int]:
    """How each reader surface refuses `auth` (None: anonymous), showing it nothing that was crawled."""
    answered = {}
    with httpx.Client(auth=auth, timeout=30, follow_redirects=False) as stranger:
        for surface, url in urls.items():
            answer = stranger.get(url)
            answered[surface] = answer.status_code
            if answer.status_code == 302:  # the web reader: to its login form
                assert answer.headers["location"].startswith("/login/?next="), (surface, auth)
            elif answer.status_code == 401:  # the feeds and the APIs: a Basic challenge
                assert answer.headers["www-authenticate"].startswith('Basic realm="Mangalord"'), (surface, auth)
            elif answer.status_code == 429:  # the login lockout
                assert int(answer.headers["retry-after"]) > 0, (surface, auth)
            body = answer.text
            leaked = [s for s in secrets if s in body or escape(s) in body or json.dumps(s)[1:-1] in body]
            assert not leaked, (surface, auth, leaked)
    return answered


def test_a_right_to_left_japanese_madara_site_reaches_every_reader_right(
    site, web, child_env, manage_cmd, django_user_model, browser: Browser, opds_schema, comicinfo_schema, tmp_path
):
    env = {**child_env, **SITE_ENV}
    crawl(site, manage_cmd, env)
    django_user_model.objects.create_user("alice", "alice@example.com", PASSWORD)

    # --- what the crawl stored, and what it refused ------------------------------------------
    titles = sorted(Manga.objects.values_list("title", flat=True))
    assert titles == sorted([CLEAN_TITLE, *COLLIDING_TITLES, "CON"])
    dead = list(Job.objects.filter(state="dead"))
    assert sorted(j.attempts for j in dead) == [1, 1], [j.last_error for j in dead]
    reasons = " | ".join(j.last_error for j in dead)
    assert f"{site.base_url}/wp-content/uploads/WP-manga/data/manga_203/chapter-2/2.png" in reasons
    assert "could not be decoded" in reasons
    assert f"{site.base_url}/wp-content/uploads/WP-manga/data/manga_203/chapter-3/1.png" in reasons
    assert "pixel cap" in reasons
    done = Chapter.objects.filter(sync_state="done")
    figures = {
        "mangas": Manga.objects.count(),
        "chapters": done.count(),
        "pages": Page.objects.filter(chapter__in=done).count(),
        "refused": len(dead),
    }

    # --- the web reader in Chromium: titles once, right to left, every page image shown ------
    yoru = Manga.objects.get(title=CLEAN_TITLE)
    context = browser.new_context(viewport={"width": 800, "height": 1000})
    page = context.new_page()
    page.goto(f"{web.url}/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "not-" + PASSWORD)  # a wrong password: the form says so, the library stays shut
    page.click("button[type=submit]")
    expect(page.get_by_role("alert")).to_contain_text("did not match")
    page.goto(f"{web.url}/")
    expect(page).to_have_url(f"{web.url}/login/?next=/")
    expect(page.locator("body")).not_to_contain_text(CLEAN_TITLE)
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Library")
    page.goto(f"{web.url}/mangas/{yoru.id}/")
    expect(page.locator("h1")).to_have_text(CLEAN_TITLE)
    expect(page.locator("ol.chapters li a:not(.cbz)")).to_have_text(["Chapter 1: 門", "Chapter 2: The Gate"])
    page.get_by_role("link", name="Chapter 1: 門", exact=True).click()
    expect(page.locator(".reader-bar h1")).to_have_text("Chapter 1: 門")
    expect(page.locator("#pages")).to_have_class("pages rtl")
    expect(page.locator("#direction")).to_have_attribute("aria-pressed", "true")
    images = page.locator("#pages img")
    expect(images).to_have_count(3)
    for index in range(3):
        images.nth(index).scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=images.nth(index).element_handle())
    context.close()

    with httpx.Client(auth=("alice", PASSWORD), timeout=60) as http:
        # --- every OPDS feed: valid, parsed, titles once, true types --------------------------
        feeds = opds_feeds(http, web.url, opds_schema)
        manga_feed = next(doc for url, doc in feeds.items() if f"/opds/mangas/{yoru.id}/" in url)
        entries = manga_feed.findall("{http://www.w3.org/2005/Atom}entry")
        assert [e.findtext("{http://www.w3.org/2005/Atom}title") for e in entries] == [
            "Chapter 1: 門",
            "Chapter 2: The Gate",
        ]
        assert {e.findtext("{http://purl.org/dc/terms/}language") for e in entries} == {"ja"}

        # --- PSE: the declared type is the served type, and one PSE allows ---------------------
        pse_pages = cbzs = 0
        streamed: dict[str, str] = {}
        for url, doc in feeds.items():
            if "/opds/mangas/" not in url:
                continue
            for entry in doc.findall("{http://www.w3.org/2005/Atom}entry"):
                entry_id = entry.findtext("{http://www.w3.org/2005/Atom}id")
                if entry_id in streamed:  # the same feed reached again by its "first page" link
                    continue
                links = {link.get("rel"): link for link in entry.findall("{http://www.w3.org/2005/Atom}link")}
                stream = links[PSE]
                declared = stream.get("type")
                assert declared in ("image/jpeg", "image/png", "image/gif")
                streamed[entry_id] = declared
                count = int(stream.get("{http://vaemendis.net/opds-pse/ns}count"))
                for number in range(count):
                    for width in ("300", "4096"):
                        href = stream.get("href").replace("{pageNumber}", str(number)).replace("{maxWidth}", width)
                        answer = http.get(href)
                        assert answer.headers["content-type"] == declared, href
                        with Image.open(io.BytesIO(answer.content)) as image:
                            assert PIL_TYPES[image.format] == declared, href
                            assert image.width <= int(width)
                        pse_pages += 1
                # --- the chapter's CBZ: stored bytes, ComicInfo valid and right to left ---------
                archive = zipfile.ZipFile(io.BytesIO(http.get(links[ACQUISITION].get("href")).content))
                info = etree.fromstring(archive.read("ComicInfo.xml"))
                assert comicinfo_schema.validate(info), comicinfo_schema.error_log
                assert info.findtext("Manga") == "YesAndRightToLeft"
                assert info.findtext("LanguageISO") == "ja"
                assert info.findtext("Title") == entry.findtext("{http://www.w3.org/2005/Atom}title")
                cbzs += 1
        yoru_chapters = Chapter.objects.filter(manga=yoru).values_list("id", flat=True)
        yoru_types = sorted(streamed[f"urn:uuid:{c}"] for c in yoru_chapters)
        assert yoru_types == ["image/jpeg", "image/jpeg"]  # mixed JPEG/PNG/WebP and all-JPEG chapters
        assert sorted(streamed.values()).count("image/png") == 2  # the all-PNG chapters keep PNG

        # --- the Komga API as Mihon reads it: schema-valid, titles as stored, the site's bytes ----
        figures.update(read_through_komga(http, web.url, site))

    # --- a stranger and a wrong password: refused everywhere, shown no title ---------------------
    first = Chapter.objects.filter(manga=yoru, sync_state="done").order_by("number").first()
    surfaces = {
        "web library": f"{web.url}/",
        "OPDS feed": f"{web.url}/opds/all/",
        "CBZ": f"{web.url}/opds/chapters/{first.id}/cbz/",
        "Komga series": f"{web.url}/api/v1/series",
        "Komga page": f"{web.url}/api/v1/books/{first.id}/pages/1",
    }
    secrets = [*titles, "門", "The Gate"]
    challenged = {surface: 401 for surface in surfaces} | {"web library": 302}
    assert refusals(surfaces, None, secrets) == challenged
    # The web reader takes no Basic password (the form's wrong one above counted); the feeds' and the APIs'
    # wrong passwords are failures 2 to 5 (FAILURE_LIMIT): the fifth locks the account, refused even the right one.
    wrong = refusals(surfaces, ("alice", "not-" + PASSWORD), secrets)
    assert wrong == challenged | {"Komga page": 429}
    assert refusals({"Komga series": surfaces["Komga series"]}, ("alice", PASSWORD), secrets) == {"Komga series": 429}

    # --- export_cbz: readable by another user, unique and safe names, renames move --------------
    library = tmp_path / "library"
    os.umask(previous := os.umask(0o022))
    try:
        manage(manage_cmd, {**env}, "export_cbz", str(library))
    finally:
        os.umask(previous)
    files = sorted(str(p.relative_to(library)) for p in library.rglob("*.cbz"))
    assert len(files) == figures["chapters"]
    folders = sorted({f.split("/")[0] for f in files})
    assert len(folders) == 4 and "a_b_c_d_e_f_g_h_i_j" in folders and "_CON" in folders
    assert any(f.startswith("a_b_c_d_e_f_g_h_i_j [") for f in folders)
    assert f"{CLEAN_TITLE}/{CLEAN_TITLE} - c001 - 門.cbz" in files
    for path in library.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o755 if path.is_dir() else 0o644), (path, oct(mode))
        assert len(path.name.encode()) <= 255 and "\u202e" not in path.name
    with zipfile.ZipFile(library / f"{CLEAN_TITLE}/{CLEAN_TITLE} - c001 - 門.cbz") as archive:
        assert archive.namelist() == ["ComicInfo.xml", "0001.jpg", "0002.png", "0003.webp"]
    Manga.objects.filter(id=yoru.id).update(title="Yoru no Mon", updated_at=dt.datetime.now(dt.UTC))
    manage(manage_cmd, env, "export_cbz", str(library))
    after = sorted(str(p.relative_to(library)) for p in library.rglob("*.cbz"))
    assert len(after) == len(files) and not (library / CLEAN_TITLE).exists()
    assert "Yoru no Mon/Yoru no Mon - c002 - The Gate.cbz" in after

    figures.update(feeds=len(feeds), cbzs=cbzs, pse_pages=pse_pages)
    print(f"journey figures: {figures}; refused: {reasons}")
