"""Side stories, specials and fractional chapters, named and ordered apart from the main chapters in every reader.

One manga with chapters 1, 2, 2.5, 3 and the extras "Side Story 1", "Side
Story 2: Home" and an unnumbered "Special" (numbered 2.01 among the extras by
catalog.chapter_numbers) read through the web reader, OPDS, CBZ/ComicInfo,
export, the Komga API (the way Mihon drives it) and the REST API. Side story 1
shares its number with chapter 1 on purpose: nothing may put them side by
side or mark one read for the other.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from decimal import Decimal

import pytest
from django.core.management import call_command
from lxml import etree

from catalog.models import Chapter
from reader.komga.queries import number_sort
from reader.models import ReadProgress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, assert_valid_opds, basic
from reader.tests.komga_schema import assert_komga_valid
from testsupport.responses import body_of

pytestmark = pytest.mark.django_db

ALICE = basic("alice", PASSWORD)
NS = {"a": "http://www.w3.org/2005/Atom"}
READING_ORDER = [
    "Chapter 1",
    "Chapter 2",
    "Chapter 2.5",
    "Chapter 3",
    "Side Story 1",
    "Side Story 2: Home",
    "Special",
]


@pytest.fixture
def harbour(alice):
    src = f.source("demo")
    manga = f.manga("Harbour", src=src, authors=["Aki"])
    extra = Chapter.Kind.EXTRA
    # Created out of reading order: the order shown must come from kind, volume and number, never arrival.
    rows = {
        "ss1": f.chapter(manga, 1, src=src, pages=2, kind=extra, title="Side Story 1"),
        "c1": f.chapter(manga, 1, src=src, pages=2),
        "ss2": f.chapter(manga, 2, src=src, pages=2, kind=extra, title="Side Story 2: Home"),
        "c2": f.chapter(manga, 2, src=src, pages=2),
        "sp": f.chapter(manga, "2.01", src=src, pages=2, kind=extra, title="Special"),
        "c25": f.chapter(manga, "2.5", src=src, pages=2),
        "c3": f.chapter(manga, 3, src=src, pages=2),
    }
    return manga, rows


def _read_keys(alice, rows) -> set[str]:
    done = set(ReadProgress.objects.filter(user=alice, completed=True).values_list("chapter_id", flat=True))
    return {key for key, row in rows.items() if row.id in done}


def _reader_data(client, chapter) -> dict:
    response = client.get(f"/read/{chapter.id}/")
    assert response.status_code == 200
    found = re.search(r'<script id="reader-data" type="application/json">(.*?)</script>', response.content.decode())
    return json.loads(found.group(1))


def test_web_reader_lists_and_walks_main_chapters_then_extras(client, alice, harbour):
    manga, rows = harbour
    client.force_login(alice)
    page = client.get(f"/mangas/{manga.id}/").content.decode()
    shown = re.findall(r'<li id="chapter-[^"]+"[^>]*>\s*<a href="[^"]+">([^<]+)</a>', page)
    assert shown == READING_ORDER
    assert "Continue reading: Chapter 1<" in page

    last_main, first_extra = _reader_data(client, rows["c3"]), _reader_data(client, rows["ss1"])
    assert (last_main["title"], last_main["nextTitle"]) == ("Chapter 3", "Side Story 1")
    assert last_main["nextUrl"] == f"/read/{rows['ss1'].id}/"
    assert first_extra["previousUrl"] == f"/read/{rows['c3'].id}/"
    assert _reader_data(client, rows["c1"])["nextTitle"] == "Chapter 2"  # never side story 1, same number

    # "Read up to here" on side story 1 marks that extra only; on chapter 2.5 the main chapters up to it only.
    assert client.post(f"/read/{rows['ss1'].id}/read-up-to/").status_code == 302
    assert _read_keys(alice, rows) == {"ss1"}
    client.post(f"/read/{rows['c25'].id}/read-up-to/")
    assert _read_keys(alice, rows) == {"ss1", "c1", "c2", "c25"}
    page = client.get(f"/mangas/{manga.id}/").content.decode()
    assert "Continue reading: Chapter 3<" in page
    client.post(f"/read/{rows['c3'].id}/mark/", {"state": "read"})
    assert "Continue reading: Side Story 2: Home<" in client.get(f"/mangas/{manga.id}/").content.decode()


def test_opds_feed_names_extras_by_their_label_after_the_main_chapters(client, alice, harbour, opds_schema):
    manga, _ = harbour
    response = client.get(f"/opds/mangas/{manga.id}/", **ALICE)
    assert response.status_code == 200
    assert_valid_opds(opds_schema, response.content)
    doc = etree.fromstring(response.content)
    assert doc.xpath("a:entry/a:title/text()", namespaces=NS) == READING_ORDER


def _comic_info(client, chapter) -> etree._Element:
    response = client.get(f"/opds/chapters/{chapter.id}/cbz/", **ALICE)
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(body_of(response)))
    return etree.fromstring(archive.read("ComicInfo.xml"))


def test_comic_info_marks_extras_special_and_carries_volumes(client, alice, harbour, comicinfo_schema):
    manga, rows = harbour
    fields = ("Title", "Number", "Volume", "Format")
    side = _comic_info(client, rows["ss2"])
    assert comicinfo_schema.validate(side), comicinfo_schema.error_log
    assert [side.findtext(n) for n in fields] == ["Side Story 2: Home", "Side Story 2", None, "Special"]
    main = _comic_info(client, rows["c25"])
    assert comicinfo_schema.validate(main), comicinfo_schema.error_log
    assert [main.findtext(n) for n in fields] == ["Chapter 2.5", "2.5", None, None]
    volume = f.chapter(manga, 1, src=rows["c1"].source, pages=1, volume=2, title="Home")
    restart = _comic_info(client, volume)
    assert comicinfo_schema.validate(restart), comicinfo_schema.error_log
    assert [restart.findtext(n) for n in fields] == ["Vol. 2 Chapter 1: Home", "1", "2", None]


def test_cbz_download_and_export_name_extras_apart(client, alice, harbour, tmp_path):
    manga, rows = harbour
    response = client.get(f"/opds/chapters/{rows['ss2'].id}/cbz/", **ALICE)
    assert "Harbour%20-%20SP002%20-%20Side%20Story%202%20-%20Home.cbz" in response["Content-Disposition"]
    f.chapter(manga, 1, src=rows["c1"].source, pages=1, volume=2)
    call_command("export_cbz", str(tmp_path), stdout=io.StringIO())
    assert sorted(p.name for p in (tmp_path / "Harbour").glob("*.cbz")) == [
        "Harbour - SP001 - Side Story 1.cbz",
        "Harbour - SP002 - Side Story 2 - Home.cbz",
        "Harbour - SP002.01 - Special.cbz",
        "Harbour - c001.cbz",
        "Harbour - c002.5.cbz",
        "Harbour - c002.cbz",
        "Harbour - c003.cbz",
        "Harbour - v02 c001.cbz",
    ]


def _komga(client, url: str, path: str):
    response = client.get(url, **ALICE)
    assert response.status_code == 200, response.content[:300]
    body = response.json()
    assert_komga_valid(path, "get", body)
    return body


def test_komga_books_give_extras_their_own_numbers_in_mihons_unrecognised_range(client, alice, harbour):
    manga, rows = harbour
    books = _komga(
        client,
        f"/api/v1/series/{manga.id}/books?unpaged=true&media_status=READY&deleted=false",
        "/api/v1/series/{seriesId}/books",
    )["content"]
    assert [b["metadata"]["title"] for b in books] == READING_ORDER
    assert [b["number"] for b in books] == [1, 2, 3, 4, 5, 6, 7]
    assert [b["metadata"]["number"] for b in books] == [
        "1", "2", "2.5", "3", "Side Story 1", "Side Story 2", "Special",
    ]  # fmt: skip
    sorts = [b["metadata"]["numberSort"] for b in books]
    assert sorts[:4] == [1.0, 2.0, 2.5, 3.0]
    # Above -1 Mihon keeps a numberSort as given; below 0 it is a chapter without a recognised number.
    assert all(-1 < s < 0 for s in sorts[4:]) and sorts[4:] == sorted(set(sorts[4:]))
    for book in books:  # one book answers what the listing said
        alone = _komga(client, f"/api/v1/books/{book['id']}", "/api/v1/books/{bookId}")
        assert (alone["number"], alone["metadata"]["numberSort"]) == (book["number"], book["metadata"]["numberSort"])


def _mihon_keeps(number_sort: float) -> bool:
    """Mihon's ChapterRecognition: a source's number is kept when it is -2 or above -1, else read from the name."""
    return number_sort == -2.0 or number_sort > -1.0


NUMBER_SORTS = {
    "main chapter": (Chapter.Kind.CHAPTER, "19", 0, 19.0),
    "fractional main chapter": (Chapter.Kind.CHAPTER, "19.5", 0, 19.5),
    "first extra": (Chapter.Kind.EXTRA, "19", 1, -0.9999),
    "second extra": (Chapter.Kind.EXTRA, "1", 2, -0.9998),
    "last extra told apart": (Chapter.Kind.EXTRA, "3", 9_999, -0.0001),
    "extras past that share the last step": (Chapter.Kind.EXTRA, "4", 12_000, -0.0001),
}


@pytest.mark.parametrize(("kind", "number", "position", "expected"), NUMBER_SORTS.values(), ids=NUMBER_SORTS.keys())
def test_number_sort_keeps_extras_where_mihon_neither_renumbers_nor_tracks_them(kind, number, position, expected):
    value = number_sort(Chapter(kind=kind, number=Decimal(number)), position)
    assert value == pytest.approx(expected)
    assert _mihon_keeps(value)
    assert (value >= 0) is (kind == Chapter.Kind.CHAPTER)  # Mihon's "recognised number": tracked, marked


def test_reading_a_side_story_through_mihons_komga_paths_never_marks_the_chapter_of_its_number(client, alice, harbour):
    manga, rows = harbour
    tracker = f"/api/v2/series/{manga.id}/read-progress/tachiyomi"
    path = "/api/v2/series/{seriesId}/read-progress/tachiyomi"
    side_story = _komga(client, f"/api/v1/books/{rows['ss1'].id}", "/api/v1/books/{bookId}")
    done = client.patch(
        f"/api/v1/books/{rows['ss1'].id}/read-progress", {"completed": True}, content_type="application/json", **ALICE
    )
    assert done.status_code == 204
    # The tracker counts the main story only: side story 1 read, chapter 1 still not.
    progress = _komga(client, tracker, path)
    assert (progress["booksCount"], progress["booksReadCount"], progress["lastReadContinuousNumberSort"]) == (4, 0, 0)
    assert progress["maxNumberSort"] == 3.0
    # Were the extra's numberSort ever sent as the tracker's last chapter, nothing main is marked.
    sent = client.put(
        tracker,
        {"lastBookNumberSortRead": side_story["metadata"]["numberSort"]},
        content_type="application/json",
        **ALICE,
    )
    assert sent.status_code == 204
    assert _read_keys(alice, rows) == {"ss1"}
    # Mihon reading chapter 2 sends 2.0: chapters 1 and 2 marked, no extra (side story 2 shares the number).
    client.put(tracker, {"lastBookNumberSortRead": 2.0}, content_type="application/json", **ALICE)
    assert _read_keys(alice, rows) == {"ss1", "c1", "c2"}
    assert _komga(client, tracker, path)["lastReadContinuousNumberSort"] == 2.0


def test_rest_api_lists_kind_volume_and_display_title_in_reading_order(client, alice, harbour):
    manga, _ = harbour
    response = client.get(f"/api/v1/mangas/{manga.id}/", **ALICE)
    assert response.status_code == 200
    chapters = response.json()["chapters"]
    assert [c["display_title"] for c in chapters] == READING_ORDER
    assert [(c["kind"], c["volume"], c["number"]) for c in chapters] == [
        ("chapter", None, "1.00"),
        ("chapter", None, "2.00"),
        ("chapter", None, "2.50"),
        ("chapter", None, "3.00"),
        ("extra", None, "1.00"),
        ("extra", None, "2.00"),
        ("extra", None, "2.01"),
    ]
