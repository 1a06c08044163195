"""The pure readings of MangaDex's answers: titles in the reader's languages, chapters kept or skipped, paging."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from sources.mangadex import records

MANGA = {
    "id": "7f1d6c52-1b3e-4a07-9a33-6d2c0c4f1a01",
    "type": "manga",
    "attributes": {
        "title": {"ja-ro": "Yoru no Mon"},
        "altTitles": [{"en": "The Night Gate"}, {"ja": "夜の門"}, {"fr": "La Porte de la Nuit"}, {"en": "Night Gate"}],
        "description": {"en": "A gate opens at night.", "fr": "Une porte s'ouvre la nuit."},
        "status": "hiatus",
        "tags": [
            {"id": "391b0423-d847-456f-aff0-8b0cfc03066b", "type": "tag", "attributes": {"name": {"en": "Action"}}},
            {"id": "cdc58593-87dd-415e-bbc0-2ec27bf404cc", "type": "tag", "attributes": {"name": {"en": "Fantasy"}}},
        ],
    },
    "relationships": [
        {"id": "a1", "type": "author", "attributes": {"name": "Aki Mori"}},
        {"id": "a2", "type": "artist", "attributes": {"name": "Aki Mori"}},
        {"id": "a3", "type": "artist", "attributes": {"name": "Ren Kato"}},
        {"id": "c1", "type": "cover_art", "attributes": {"fileName": "f00d.jpg"}},
    ],
}


def test_the_title_is_the_first_reader_language_found_even_among_the_alternative_titles():
    attributes = MANGA["attributes"]
    assert records.pick_title(attributes["title"], attributes["altTitles"], ("en",)) == "The Night Gate"
    assert records.pick_title(attributes["title"], attributes["altTitles"], ("fr", "en")) == "La Porte de la Nuit"
    assert records.pick_title(attributes["title"], attributes["altTitles"], ("ja-ro", "en")) == "Yoru no Mon"
    # No title in any of the reader's languages: the main title.
    assert records.pick_title(attributes["title"], attributes["altTitles"], ("de",)) == "Yoru no Mon"


def test_metadata_keeps_other_titles_in_the_reader_languages_and_each_person_once():
    meta = records.manga_metadata(MANGA, ("en", "ja"))
    assert meta.title == "The Night Gate"
    assert meta.alt_titles == ("夜の門", "Night Gate")
    assert meta.description == "A gate opens at night."
    assert meta.authors == ("Aki Mori", "Ren Kato")
    assert (meta.status, meta.tags) == ("hiatus", ("Action", "Fantasy"))
    assert records.manga_metadata(MANGA, ("fr",)).description == "Une porte s'ouvre la nuit."


def test_the_cover_is_the_cover_art_file_under_the_manga_on_the_uploads_host():
    url = records.cover_url(MANGA, "https://uploads.mangadex.org")
    assert url == "https://uploads.mangadex.org/covers/7f1d6c52-1b3e-4a07-9a33-6d2c0c4f1a01/f00d.jpg"
    assert records.cover_url({**MANGA, "relationships": []}, "https://uploads.mangadex.org") == ""


def chapter(number, **attributes):
    return {
        "id": f"00000000-0000-4000-8000-{abs(hash(str((number, attributes)))) % 10**12:012d}",
        "type": "chapter",
        "attributes": {"chapter": number, "volume": "2", "title": "", "pages": 3, "externalUrl": None, **attributes},
    }


def test_external_and_unavailable_chapters_are_skipped_and_counted():
    notes = records.FeedNotes()
    kept = [
        records.feed_chapter(c, notes)
        for c in (
            chapter("1", publishAt="2026-11-02T10:00:00+00:00", title="Dusk"),
            chapter("2", externalUrl="https://example.com/read/2"),
            chapter("3", pages=0),
            chapter("4", isUnavailable=True),
            chapter("4.5"),
        )
    ]
    assert [c.number if c else None for c in kept] == [Decimal(1), None, None, None, Decimal("4.5")]
    assert (notes.external_chapters, notes.unavailable_chapters) == (1, 2)
    first = kept[0]
    assert first.title == "Dusk" and first.volume == 2
    assert first.published_at == dt.datetime(2026, 11, 2, 10, tzinfo=dt.UTC)
    assert first.url == f"https://mangadex.org/chapter/{first.key}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("12", (Decimal(12), "chapter")), ("10.5", (Decimal("10.5"), "chapter")), (None, (Decimal(0), "chapter")),
     ("Extra", (Decimal(0), "extra")), ("NaN", (Decimal(0), "extra")), ("-1", (Decimal(0), "extra"))],
)  # fmt: skip
def test_chapter_numbers(text, expected):
    assert records.chapter_number(text) == expected


@pytest.mark.parametrize(
    ("offset", "served", "total", "expected"),
    [(0, 100, 250, 100), (200, 50, 250, None), (0, 4, 9, 4), (8, 1, 9, None), (0, 0, 9, None), (9_900, 100, 20_000, None)],
)  # fmt: skip
def test_paging_follows_what_was_served_up_to_the_window(offset, served, total, expected):
    assert records.next_offset(offset, served, total, window=10_000) == expected


def test_page_urls_come_from_base_url_hash_and_the_chosen_file_list():
    answer = {
        "result": "ok",
        "baseUrl": "https://abc.xyz.mangadex.network:44300/token",
        "chapter": {"hash": "d978", "data": ["1.png", "2.png"], "dataSaver": ["1.jpg", "2.jpg"]},
    }
    assert records.page_urls(answer, data_saver=False) == [
        "https://abc.xyz.mangadex.network:44300/token/data/d978/1.png",
        "https://abc.xyz.mangadex.network:44300/token/data/d978/2.png",
    ]
    assert (
        records.page_urls(answer, data_saver=True)[0]
        == "https://abc.xyz.mangadex.network:44300/token/data-saver/d978/1.jpg"
    )
    with pytest.raises(records.AnswerUnreadable):
        records.page_urls({"result": "error"}, data_saver=False)


def test_only_images_from_at_home_nodes_are_reported():
    uploads = "https://uploads.mangadex.org"
    assert records.is_at_home_image("https://abc.mangadex.network/token/data/h/1.png", uploads)
    assert not records.is_at_home_image("https://uploads.mangadex.org/data/h/1.png", uploads)
    assert not records.is_at_home_image("https://uploads.mangadex.org/covers/m/c.jpg", uploads)


def test_a_collection_without_its_total_is_unreadable():
    with pytest.raises(records.AnswerUnreadable, match="manga list"):
        records.collection_page({"result": "ok", "data": []}, "manga list page 1")


def test_mangadex_addresses():
    assert records.is_mangadex_address("https://mangadex.org/title/x")
    assert records.is_mangadex_address("https://MangaDex.org")
    assert not records.is_mangadex_address("https://mangadex.org.example.com/")
