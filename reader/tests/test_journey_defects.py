"""One named test per reader defect the crawl-to-reader journey met: doubled chapter titles, crawled characters
that break XML, PSE links declaring a type the server does not send, exports other users cannot read or that
overwrite each other."""

from __future__ import annotations

import io
import stat
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from lxml import etree
from PIL import Image

from catalog.chapter_names import own_title
from reader.naming import cbz_filename, safe_filename
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, assert_valid_opds, basic
from testsupport.responses import body_of

pytestmark = pytest.mark.sqlite_ok
ATOM = "{http://www.w3.org/2005/Atom}"


def image(fmt: str, size: tuple[int, int] = (40, 60)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (10, 120, 200)).save(out, fmt)
    return out.getvalue()


@pytest.mark.parametrize(
    ("text", "number", "own"),
    [
        ("Chapter 12", "12", ""), ("Ch. 12", "12", ""), ("Chapter 12 -", "12", ""), ("Episode 12:", "12", ""),
        ("Chapter 12 - The Gate", "12", "The Gate"), ("Vol.2 Ch. 12: The Gate", "12", "The Gate"),
        ("第12話 門", "12", "門"), ("Capítulo 10.5 - Extra", "10.5", "Extra"), ("The Gate", "12", "The Gate"),
        ("Chapter 13 preview", "12", "Chapter 13 preview"),
    ],
)  # fmt: skip
def test_the_sources_label_is_cut_from_a_chapter_title(text, number, own):
    assert own_title(text, Decimal(number)) == own


def test_chapter_titles_are_shown_once_in_web_opds_comicinfo_cbz_names_and_api(client, alice, db):
    src = f.source("demo")
    manga = f.manga("Berserk", src=src)
    named = f.chapter(manga, 1, src=src, pages=1, title="Burning Tower")
    bare = f.chapter(manga, 2, src=src, pages=1, title="")
    client.force_login(alice)
    page = client.get(f"/mangas/{manga.id}/").content.decode()
    assert "Chapter 1: Burning Tower" in page and "Chapter 1: Chapter 1" not in page
    feed = etree.fromstring(client.get(f"/opds/mangas/{manga.id}/").content)
    assert [e.findtext(f"{ATOM}title") for e in feed.iter(f"{ATOM}entry")] == ["Chapter 1: Burning Tower", "Chapter 2"]
    cbz = client.get(f"/opds/chapters/{named.id}/cbz/")
    assert "Berserk%20-%20c001%20-%20Burning%20Tower.cbz" in cbz["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(body_of(cbz)))
    assert etree.fromstring(archive.read("ComicInfo.xml")).findtext("Title") == "Chapter 1: Burning Tower"
    chapters = client.get(f"/api/v1/mangas/{manga.id}/").json()["chapters"]
    assert [(c["title"], c["display_title"]) for c in chapters] == [
        ("Burning Tower", "Chapter 1: Burning Tower"),
        ("", "Chapter 2"),
    ]
    assert bare.title == ""


def test_xml_invalid_and_bidi_characters_never_reach_a_feed_or_comicinfo(client, alice, db, opds_schema):
    src = f.source("demo")
    dirty = "Night\x01 Gate\x1b\ufffe\u202e"
    manga = f.manga(dirty, src=src, description=f"About {dirty}", tags=(f"tag\x01{dirty}",), authors=[dirty])
    chapter = f.chapter(manga, 1, src=src, pages=1, title=dirty)
    auth = basic("alice", PASSWORD)
    for url in ("/opds/latest/", "/opds/all/", "/opds/search/?q=Night", "/opds/tags/", f"/opds/mangas/{manga.id}/"):
        answer = client.get(url, **auth)
        assert answer.status_code == 200, url
        doc = assert_valid_opds(opds_schema, answer.content)
        assert "\u202e" not in answer.content.decode(), url
    assert doc.find(f"{ATOM}title").text == "Night Gate"
    archive = zipfile.ZipFile(
        io.BytesIO(b"".join(client.get(f"/opds/chapters/{chapter.id}/cbz/", **auth).streaming_content))
    )
    info = etree.fromstring(archive.read("ComicInfo.xml"))  # raises when not well-formed
    assert info.findtext("Series") == "Night Gate"


def test_pse_links_declare_the_type_the_server_sends_and_webp_pages_are_converted(client, alice, db):
    src = f.source("demo")
    manga = f.manga("Types", src=src)
    kinds = {
        "png": ("PNG", "image/png"), "webp": ("WEBP", "image/webp"), "jpeg": ("JPEG", "image/jpeg"),
        "gif": ("GIF", "image/gif"),
    }  # fmt: skip
    chapters = {}
    for number, name in enumerate(kinds, start=1):
        chapter = f.chapter(manga, number, src=src)
        f.page(chapter, 0, image(kinds[name][0]), kinds[name][1])
        chapter.sync_state = "done"
        chapter.save()
        chapters[name] = chapter
    auth = basic("alice", PASSWORD)
    feed = etree.fromstring(client.get(f"/opds/mangas/{manga.id}/", **auth).content)
    declared = [
        link.get("type")
        for link in feed.iter(f"{ATOM}link")
        if link.get("rel") == "http://vaemendis.net/opds-pse/stream"
    ]
    assert declared == ["image/png", "image/jpeg", "image/jpeg", "image/png"]
    for name, wanted in (("png", "PNG"), ("webp", "JPEG"), ("jpeg", "JPEG"), ("gif", "PNG")):
        for query in ({}, {"maxWidth": "20"}):
            answer = client.get(f"/opds/chapters/{chapters[name].id}/pages/0/", query, **auth)
            body = body_of(answer)
            assert Image.open(io.BytesIO(body)).format == wanted, (name, query)
            assert answer["Content-Type"] == f"image/{wanted.lower()}"


def test_a_webp_page_converted_for_pse_without_a_width_is_no_wider_than_the_decode_budget_allows(
    client, alice, db, settings
):
    src = f.source("demo")
    chapter = f.chapter(f.manga("Wide", src=src), 1, src=src)
    f.page(chapter, 0, image("WEBP", (600, 900)), "image/webp")
    chapter.sync_state = "done"
    chapter.save()
    settings.IMAGE_DECODE_BUDGET_MB = 1  # WebP holds its decoded frame: 600x900 would need about 4.6 MB
    answer = client.get(f"/opds/chapters/{chapter.id}/pages/0/", **basic("alice", PASSWORD))
    converted = Image.open(io.BytesIO(body_of(answer)))
    assert converted.format == "JPEG" and 200 <= converted.width <= 300


def test_a_scaled_page_is_kept_on_s3_storage_too(client, alice, db, s3_storage):
    src = f.source("demo")
    chapter = f.chapter(f.manga("Remote", src=src), 1, src=src)
    page = f.page(chapter, 0, image("PNG", (400, 600)))
    client.force_login(alice)
    answer = client.get(f"/read/pages/{page.id}/image/?w=200")
    assert Image.open(io.BytesIO(body_of(answer))).size == (200, 300)
    stem = page.image.name.rsplit(".", 1)[0]
    assert f"media/scaled/{stem}-page-w200.png" in s3_storage.keys()


def test_a_scaled_page_is_kept_in_storage_for_the_next_view(client, alice, db, settings):
    src = f.source("demo")
    chapter = f.chapter(f.manga("Big", src=src), 1, src=src, pages=1, width=800, height=1200)
    client.force_login(alice)
    page = chapter.pages.get()
    first = client.get(f"/read/pages/{page.id}/image/?w=400")
    assert Image.open(io.BytesIO(body_of(first))).size == (400, 600)
    kept = list(Path(settings.MEDIA_ROOT, "scaled").rglob("*-w400.png"))
    assert len(kept) == 1
    kept[0].write_bytes(image("PNG", (400, 600)))  # what the next view streams is the kept copy
    again = client.get(f"/read/pages/{page.id}/image/?w=400")
    assert body_of(again) == kept[0].read_bytes()


def test_exported_files_and_folders_honour_the_umask(db, tmp_path):
    src = f.source("demo")
    f.chapter(f.manga("Berserk", src=src), 1, src=src, pages=1)
    call_command("export_cbz", str(tmp_path / "lib"), stdout=io.StringIO())
    for path in (tmp_path / "lib").rglob("*"):
        expected = 0o755 if path.is_dir() else 0o644
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


def test_two_titles_mapping_to_one_name_export_to_two_folders_and_a_rerun_overwrites_nothing(db, tmp_path):
    src = f.source("demo")
    first = f.manga('a/b\\c:d*e?f"g<h>i|j', src=src)
    second = f.manga('a:b\\c/d*e?f"g<h>i|j', src=src)
    f.chapter(first, 1, src=src, pages=1)
    f.chapter(second, 1, src=src, pages=1)
    call_command("export_cbz", str(tmp_path), stdout=io.StringIO())
    files = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.cbz")}
    tag = second.id.hex[:8]  # the younger manga gives way, with a tag made from its own id
    assert files == {
        "a_b_c_d_e_f_g_h_i_j/a_b_c_d_e_f_g_h_i_j - c001.cbz",
        f"a_b_c_d_e_f_g_h_i_j [{tag}]/a_b_c_d_e_f_g_h_i_j [{tag}] - c001.cbz",
    }
    out = io.StringIO()
    call_command("export_cbz", str(tmp_path), stdout=out)
    assert "0 written, 2 unchanged" in out.getvalue()


def test_reserved_device_names_bidi_controls_and_long_names_are_made_safe():
    assert safe_filename("CON") == "_CON" and safe_filename("lpt1.cbz") == "_lpt1.cbz"
    assert safe_filename("abc\u202egpj.exe") == "abcgpj.exe"
    name = cbz_filename("漢" * 200, Decimal(12), "門" * 200)
    assert len(name.encode()) <= 255 and name.endswith(" - c012.cbz")


def test_a_rerun_after_a_rename_moves_the_file_instead_of_writing_a_second_one(db, tmp_path):
    src = f.source("demo")
    manga = f.manga("Old Name", src=src)
    chapter = f.chapter(manga, 1, src=src, pages=1, title="Dawn")
    call_command("export_cbz", str(tmp_path), stdout=io.StringIO())
    manga.title = "New Name"
    manga.save()
    chapter.title = "Dusk"
    chapter.save()
    out = io.StringIO()
    call_command("export_cbz", str(tmp_path), stdout=out)
    assert "1 moved" in out.getvalue()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.cbz")) == [
        "New Name/New Name - c001 - Dusk.cbz"
    ]
    assert not (tmp_path / "Old Name").exists()


def test_cbz_pages_keep_their_stored_bytes_and_extension_as_the_readme_says(client, alice, db):
    src = f.source("demo")
    chapter = f.chapter(f.manga("Mixed", src=src), 1, src=src)
    for index, (fmt, kind) in enumerate((("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp"))):
        f.page(chapter, index, image(fmt), kind)
    chapter.sync_state = "done"
    chapter.save()
    client.force_login(alice)
    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(f"/opds/chapters/{chapter.id}/cbz/").streaming_content)))
    assert archive.namelist() == ["ComicInfo.xml", "0001.jpg", "0002.png", "0003.webp"]
    reading = (Path(__file__).parents[2] / "docs" / "reading.md").read_text()
    assert "keep the stored bytes and their own extension" in reading
