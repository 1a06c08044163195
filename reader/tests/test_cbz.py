"""CBZ: streamed, STORED, pages in order and decodable, ComicInfo.xml valid against the ComicInfo v2.0 XSD."""

from __future__ import annotations

import io
import zipfile
from urllib.parse import unquote

import pytest
from django.core.files.storage import default_storage
from lxml import etree
from PIL import Image

from reader.cbz import comic_info, page_name
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic

pytestmark = pytest.mark.sqlite_ok  # nothing here depends on PostgreSQL


def fetch_cbz(client, chapter) -> tuple[object, zipfile.ZipFile]:
    response = client.get(f"/opds/chapters/{chapter.id}/cbz/", **basic("alice", PASSWORD))
    assert response.status_code == 200, response.content
    assert response.streaming, "a CBZ must be streamed, not built in memory"
    body = b"".join(response.streaming_content)
    assert int(response["Content-Length"]) == len(body)
    return response, zipfile.ZipFile(io.BytesIO(body))


def test_chapter_cbz_has_comicinfo_first_then_every_page_stored_decodable_and_in_order(
    client, alice, comicinfo_schema, db
):
    src = f.source("demo", reading_direction="rtl", language="ja")
    m = f.manga(
        "Berserk: Deluxe/Edition", src=src, tags=("dark", "seinen"), authors=["Kentaro Miura"], description="Guts."
    )
    ch = f.chapter(m, "10.5", src=src, pages=12, width=30, height=45, title="Eclipse", url="http://demo.example/c/10.5")
    response, archive = fetch_cbz(client, ch)
    assert response["Content-Type"] == "application/vnd.comicbook+zip"
    assert (
        unquote(response["Content-Disposition"])
        == "attachment; filename*=UTF-8''Berserk_ Deluxe_Edition - c010.5 - Eclipse.cbz"
    )
    names = archive.namelist()
    assert names[0] == "ComicInfo.xml"
    assert names[1:] == [f"{n:04d}.png" for n in range(1, 13)]
    for info in archive.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
    stored = [p.image.name for p in ch.pages.order_by("index")]
    for name, key in zip(names[1:], stored, strict=True):
        data = archive.read(name)
        with default_storage.open(key, "rb") as original:
            assert data == original.read()
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            assert image.size == (30, 45)
    doc = etree.fromstring(archive.read("ComicInfo.xml"))
    assert comicinfo_schema.validate(doc), comicinfo_schema.error_log
    text = {el.tag: el.text for el in doc if el.tag != "Pages"}
    assert text["Series"] == "Berserk: Deluxe/Edition"
    assert text["Number"] == "10.5"
    assert text["Title"] == "Chapter 10.5: Eclipse"
    assert text["Summary"] == "Guts."
    assert text["Writer"] == "Kentaro Miura"
    assert text["Genre"] == "dark, seinen"
    assert text["Web"] == "http://demo.example/c/10.5"
    assert text["LanguageISO"] == "ja"
    assert text["PageCount"] == "12"
    assert text["Manga"] == "YesAndRightToLeft"
    pages = doc.find("Pages")
    assert [p.get("Image") for p in pages] == [str(n) for n in range(12)]
    first = ch.pages.order_by("index").first()
    assert pages[0].get("ImageWidth") == "30" and pages[0].get("ImageHeight") == "45"
    assert pages[0].get("ImageSize") == str(first.bytes)


def test_left_to_right_source_says_manga_yes(client, alice, comicinfo_schema, db):
    src = f.source("ltr")
    ch = f.chapter(f.manga("Webtoon", src=src), 1, src=src, pages=1)
    _, archive = fetch_cbz(client, ch)
    doc = etree.fromstring(archive.read("ComicInfo.xml"))
    assert comicinfo_schema.validate(doc)
    assert doc.findtext("Manga") == "Yes"
    assert doc.findtext("LanguageISO") == "en"


def test_comic_info_element_order_is_what_the_xsd_demands(comicinfo_schema):
    xml = comic_info(
        series="S",
        number="Side Story 3",
        volume=2,
        special=True,
        title="T",
        summary="",
        writers=[],
        genres=["a"],
        web="",
        language_iso="en",
        right_to_left=False,
        pages=[],
    )
    doc = etree.fromstring(xml)
    assert comicinfo_schema.validate(doc)
    doc.insert(0, doc[-2])  # move one element out of sequence order
    assert not comicinfo_schema.validate(doc)


def test_page_names_are_zero_padded_past_four_digits():
    assert page_name(0, 12, "image/jpeg") == "0001.jpg"
    assert page_name(10_000, 12_000, "image/webp") == "10001.webp"
    assert page_name(5, 12_000, "image/png") == "00006.png"


def test_a_bad_reading_direction_setting_is_an_error_naming_source_and_key(client, alice, db):
    src = f.source("broken", reading_direction="sideways")
    ch = f.chapter(f.manga("X", src=src), 1, src=src, pages=1)
    with pytest.raises(ValueError, match="source 'broken': settings key 'reading_direction'"):
        client.get(f"/opds/chapters/{ch.id}/cbz/", **basic("alice", PASSWORD))
